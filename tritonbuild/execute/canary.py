"""The canary compile (edge: configures the dev dir, reads its compile_commands.json and the tree's includes, runs
the compiler): a few translation units, chosen so that together they include every header of the tree
(``tritonbuild.resolve.canary``), compiled with ``-fsyntax-only`` on all cores after CMake's configure, their errors
grouped by cause. ``tritonbuild check-llvm`` runs it on demand, ``build`` before its full build when the LLVM is not
the source's pin: a tree that cannot compile against this LLVM is known in a minute, with every cause at once.

It configures the dev dir the way ``develop`` does (``execute.develop.configure``; ``develop`` reuses it), builds
only the generated headers the chosen units wait for (the order-only inputs Ninja records for their objects: the
tablegen outputs), then compiles each unit's own command with ``-o``/``-c`` replaced by ``-fsyntax-only``, each in
a process group of its own with a time limit. No object file is written.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tritonbuild.errors import BuildFailed
from tritonbuild.execute import buildenv, develop
from tritonbuild.execute.diagnose import error_kind
from tritonbuild.execute.lock import lock
from tritonbuild.execute.prepare import build_env, prepare
from tritonbuild.execute.staging import make_program
from tritonbuild.gather import includes
from tritonbuild.gather.includes import include_graph
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.resolve import canary as pure
from tritonbuild.resolve import pathviews
from tritonbuild.resolve.canary import Cause, Unit
from tritonbuild.resolve.preflight import header_path_ok
from tritonbuild.system import proc
from tritonbuild.system.fileutil import read_text
from tritonbuild.system.progress import Tracker

LOG = "canary.log"


@dataclass(frozen=True)
class CanaryResult:
    build_dir: str
    units_total: int
    chosen: tuple[str, ...]  # the units of the cover (paths as compile_commands.json names them)
    headers: int  # tree headers and the LLVM headers they include, covered by the units compiled
    causes: tuple[Cause, ...]
    failed: tuple[str, ...]  # units that did not compile
    timed_out: tuple[str, ...]
    seconds: float  # choosing, generated headers and compiling (not configure)
    configure_seconds: float
    log: str
    skipped: tuple[str, ...] = ()  # units of the cover not started: the budget had passed
    headers_chosen: int = 0  # covered by the whole cover
    budget: float | None = None  # seconds (None: no budget)
    first_error_seconds: float | None = None  # from the canary's start (after configure) to the first failed unit
    prepare_seconds: float = 0.0  # generating the headers and choosing the units, before the compiles
    judged: tuple[str, ...] = ()  # the real paths of the units compiled and of the headers they cover

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def compiled(self) -> tuple[str, ...]:
        """The units compiled (the cover's, less those the budget skipped)."""
        skipped = set(self.skipped)
        return tuple(u for u in self.chosen if u not in skipped)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "build_dir": self.build_dir, "units_total": self.units_total, "chosen": list(self.chosen),
            "compiled": list(self.compiled), "skipped": list(self.skipped), "headers_covered": self.headers,
            "headers_chosen": self.headers_chosen, "budget_seconds": self.budget,
            "first_error_seconds": self.first_error_seconds, "prepare_seconds": self.prepare_seconds,
            "failed": list(self.failed),
            "timed_out": list(self.timed_out), "seconds": self.seconds, "configure_seconds": self.configure_seconds,
            "log": self.log,
            "causes": [{"cause": c.message, "kind": c.kind, "units": len(c.units), "unit_files": list(c.units),
                        "example": f"{c.example.file}:{c.example.line}: {c.example.message}"} for c in self.causes],
        }


@dataclass(frozen=True)
class Compiled:
    """One unit's syntax-only compile: exit code, output, and when it ended (seconds after the compiles began)."""

    returncode: int
    output: str
    ended: float


def check(plan: Plan, reporter: Reporter, env: Mapping[str, str]) -> CanaryResult:
    """``check-llvm``: under the plan's lock, prepare the build dir, configure the dev dir, run the canary."""
    env = dict(env)  # the request's environment (the edge's): never os.environ here
    lk = lock(plan, reporter)
    try:
        prepare(plan, log=lambda m: reporter.note(m, topic="nvidia"))
        return configure_and_run(plan, reporter, env)
    finally:
        lk.release()


def configure_and_run(plan: Plan, reporter: Reporter, env: Mapping[str, str]) -> CanaryResult:
    """Configure the dev dir (when its configuration is not the plan's), then run the canary in it (the caller
    holds the plan's lock and has prepared the build dir)."""
    build = develop.dev_dir(plan)
    build.mkdir(parents=True, exist_ok=True)
    run_env = build_env(plan, env)
    argv = configure_argv(plan)
    action = develop.configure_action(build, argv)
    started = time.monotonic()
    with open(build / LOG, "w") as log:
        if action != "no":
            develop.configure(plan, argv, action, env=run_env, log=log, tracker=Tracker(), reporter=reporter)
        configured = round(time.monotonic() - started, 2)
        return run(plan, build, run_env, log, configured)


def configure_argv(plan: Plan) -> list[str]:
    """``develop``'s configure, with the interpreter the full build's scikit-build-core runs in: the target's own
    when it has the build requirements (then the dev dir stays ``develop``'s as it is), else its isolated build
    environment, whose site-packages go on CMAKE_PREFIX_PATH as scikit-build-core puts them (a tree's
    ``find_package(nanobind)`` finds the build environment's nanobind there)."""
    argv = develop.configure_argv(plan, develop.ninja_program())
    reqs, wheelhouse = buildenv.build_env_args(plan)
    builder = buildenv.ensure(plan.python, reqs, Path(plan.cache_root), offline=plan.toolchain.offline,
                              wheelhouse=wheelhouse)
    if builder == plan.python:
        return argv
    python = ("-DPython3_EXECUTABLE=", "-DPython_EXECUTABLE=")
    return [a.split("=", 1)[0] + f"={builder}" if a.startswith(python) else a for a in argv] + [
        f"-DCMAKE_PREFIX_PATH={develop.site_packages(builder)}"]


def run(plan: Plan, build: Path, env: Mapping[str, str], log: IO[str], configured: float = 0.0) -> CanaryResult:
    """Choose the units of the configured ``build`` dir, build the headers they wait for, compile them (within the
    plan's budget: the units not started by then are skipped, the full build compiles them)."""
    started = time.monotonic()
    units = unity_expanded(built_units(build, load_units(build), plan.cmake.build_targets, env))
    # the generated headers first (tablegen's, which the build makes first too): the cover follows the includes
    # they make, and in a new build dir they do not exist yet (d8da7c998: 210 headers seen without them, 326 with)
    generate_headers(build, units, env, log, plan.toolchain.jobs)
    covers = unit_covers(plan, build, units)
    chosen_files = pure.choose(covers, plan.canary.max_units if plan.canary else pure.MAX_UNITS)
    by_real = {os.path.realpath(u.file): u for u in units}
    chosen = [by_real[f] for f in chosen_files]
    whole = len(set().union(*(covers[f] for f in chosen_files))) if chosen_files else 0
    budget = plan.canary.budget if plan.canary else None
    log.write(f"tritonbuild: canary: {len(chosen)} of {len(units)} units cover {whole} headers"
              f"{f'; budget {budget:g} s' if budget is not None else ''}\n")
    timeout = plan.canary.timeout if plan.canary else pure.UNIT_TIMEOUT
    # the budget runs from here, after configure: generating the headers counts (minutes in a new build dir)
    prepared = round(time.monotonic() - started, 2)
    outputs = compile_units(chosen, env, max(1, plan.toolchain.jobs), timeout, budget, spent=prepared)
    compiled = [f for f, out in zip(chosen_files, outputs, strict=True) if out is not None]
    covered: set[str] = set().union(*(covers[f] for f in compiled)) if compiled else set()
    headers = len(covered)
    found, failed, late, first = _outcomes(plan, chosen, outputs, log)
    fetched, lacking = fetched_includes(plan, units, log)
    found, failed = [*fetched, *found], list(dict.fromkeys([*lacking, *failed]))
    causes = pure.group(found, {d.message: error_kind(d.message) for d in found})
    skipped = tuple(shown(plan, u.file) for u, out in zip(chosen, outputs, strict=True) if out is None)
    if skipped:
        log.write(f"tritonbuild: canary: {len(skipped)} unit(s) not started within the budget of {budget:g} s: "
                  f"{' '.join(skipped)}\n")
    log.flush()
    return CanaryResult(str(build), len(units), tuple(shown(plan, u.file) for u in chosen), headers, tuple(causes),
                        tuple(failed), tuple(late), round(time.monotonic() - started, 2), configured,
                        log.name, skipped, whole, budget, first, prepared,
                        tuple(sorted({*(os.path.realpath(f) for f in compiled), *covered})))


def fetched_includes(plan: Plan, units: Sequence[Unit], log: IO[str]) -> tuple[list[pure.Diagnostic], list[str]]:
    """The units configure brought in from outside the source and its plugins (a FetchContent dependency, maybe
    patched by the tree's CMake at configure time) that include, unconditionally, an LLVM, MLIR or LLD header this
    LLVM lacks: each as the compiler would say it, without compiling. The plan's include preflight reads only the
    source and plugins, and the canary's cover follows the tree's headers: Intel's translator, patched back to
    ``llvm/Passes/PassPlugin.h`` by the tree's CMake, failed 25 minutes into the build (#47)."""
    roots = [os.path.realpath(r) for r in (plan.source.root, *(b.path for b in plan.backends))]
    outside = [u for u in units if not any(os.path.realpath(u.file).startswith(r + os.sep) for r in roots)]
    if not plan.llvm.prefix or not outside:
        return [], []
    uses = {u.file: [(h, line) for h, line, cond in includes.scan_file(u.file) if not cond and header_path_ok(h)]
            for u in outside}
    lacks = set(includes.llvm_headers(plan.llvm.prefix, sorted({h for us in uses.values() for h, _ in us})).missing)
    found: list[pure.Diagnostic] = []
    failed: list[str] = []
    llvm_inc = os.path.realpath(os.path.join(plan.llvm.prefix, "include"))
    for unit in outside:
        own = [d for d in _include_dirs(unit) if os.path.realpath(d) != llvm_inc]  # a dep may ship llvm/... itself
        bad = [(h, line) for h, line in uses[unit.file] if h in lacks
               and not any(Path(d, h).is_file() for d in own)]
        if bad:
            failed.append(shown(plan, unit.file))
            found += [pure.Diagnostic(shown(plan, unit.file), line, f"{h}: No such file or directory",
                                      shown(plan, unit.file)) for h, line in bad]
    log.write(f"tritonbuild: canary: {len(outside)} unit(s) from outside the source read for LLVM includes"
              f"{''.join(f'; {d.file}:{d.line}: {d.message}' for d in found)}\n")
    return found, failed


_INCLUDE_FLAGS = ("-I", "-isystem", "-iquote", "-idirafter")


def _include_dirs(unit: Unit) -> list[str]:
    """Where the unit's compiler looks for a quoted include before the LLVM's: the unit's own dir, then its
    ``-I``/``-isystem``/``-iquote``/``-idirafter`` dirs (relative ones against the command's directory)."""
    dirs = [os.path.dirname(unit.file)]
    argv = list(unit.argv)
    for i, arg in enumerate(argv):
        flag = next((f for f in _INCLUDE_FLAGS if arg == f or (arg.startswith(f) and f == "-I")), None)
        if flag is None:
            continue
        value = argv[i + 1] if arg == flag and i + 1 < len(argv) else arg[len(flag):]
        if value:
            dirs.append(os.path.join(unit.directory, value))
    return dirs


def _outcomes(plan: Plan, chosen: Sequence[Unit], outputs: Sequence[Compiled | None],
              log: IO[str]) -> tuple[list[pure.Diagnostic], list[str], list[str], float | None]:
    """The compiled units' diagnostics, the units that failed, those that timed out, and when the first failure
    ended (seconds after the compiles began); each compiled unit's command and output go to the log."""
    found: list[pure.Diagnostic] = []
    failed: list[str] = []
    late: list[str] = []
    ends: list[float] = []
    for unit, out in zip(chosen, outputs, strict=True):
        if out is None:
            continue
        rc, text = out.returncode, out.output
        log.write(f"$ cd {unit.directory} && {' '.join(pure.syntax_only(unit.argv))}\n{text}\n")
        if rc == 124:
            late.append(shown(plan, unit.file))
        elif rc != 0:
            lines = [t for t in text.splitlines() if t.strip()]
            found += [_real(plan, unit, d) for d in pure.diagnostics(unit.file, text)] or [
                pure.Diagnostic(shown(plan, unit.file), 0, lines[-1] if lines else f"exit code {rc}",
                                shown(plan, unit.file))]
        if rc != 0:
            failed.append(shown(plan, unit.file))
            ends.append(out.ended)
    return found, failed, late, (min(ends) if ends else None)


def shown(plan: Plan, path: str) -> str:
    """A path of the build (through the plan's view links) as the user knows it: in their checkout."""
    return pathviews.to_real(path, plan.cmake.views)


def _real(plan: Plan, unit: Unit, d: pure.Diagnostic) -> pure.Diagnostic:
    path = d.file if d.file.startswith("/") else os.path.normpath(os.path.join(unit.directory, d.file))
    return pure.Diagnostic(shown(plan, path), d.line, d.message, shown(plan, unit.file))


def load_units(build: Path) -> list[Unit]:
    """The units of the configured dir's compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS, set by every plan)."""
    db = build / "compile_commands.json"
    try:
        return pure.units_of(json.loads(db.read_text()))
    except (OSError, ValueError) as exc:
        raise BuildFailed(f"The canary compile needs {db}, which configure did not write or is unreadable ({exc}). "
                          "Run `tritonbuild build --canary off` to build without it.") from None


def unity_expanded(units: list[Unit]) -> list[Unit]:
    """Each unity source replaced by its members, each compiled on its own with the unity source's command (found as
    the compiler finds them: beside the unity source, then on the include path). A unity source that cannot be read
    stays as it is."""
    out: list[Unit] = []
    for unit in units:
        text = read_text(Path(unit.file)) if pure.is_unity(unit) else None
        members = [m for m in (_member_path(unit, name) for name in pure.unity_members(text or "")) if m]
        out += [pure.member_unit(unit, m) for m in members] or [unit]
    return out


def _member_path(unit: Unit, name: str) -> str | None:
    if name.startswith("/"):
        return name if Path(name).is_file() else None
    for base in [os.path.dirname(unit.file), *pure.include_dirs(unit.argv, unit.directory)]:
        path = os.path.normpath(os.path.join(base, name))
        if Path(path).is_file():
            return path
    return None


def built_units(build: Path, units: list[Unit], targets: Sequence[str], env: Mapping[str, str]) -> list[Unit]:
    """The units whose objects the build's targets need (``ninja -t commands``): a tool or test the build does not
    compile cannot doom it. All units when Ninja cannot say."""
    ninja = make_program(build) or develop.ninja_program()
    if not (build / "build.ninja").is_file() or not targets:
        return units
    result = proc.run([ninja, "-C", str(build), "-t", "commands", *targets], env=env, timeout=120)
    if not result.ok:
        return units
    made = {_target(build, build, o) for o in _OUTPUT.findall(result.stdout)}
    return [u for u in units if u.output is None or _target(build, Path(u.directory), u.output) in made]


def _target(build: Path, directory: Path, output: str) -> str:
    """An object's path as Ninja names it: relative to the build dir (compile_commands.json may give it absolute)."""
    path = os.path.normpath(os.path.join(directory, output))
    return os.path.relpath(path, build) if path.startswith(os.path.join(str(build), "")) else path


_OUTPUT = re.compile(r"(?:^|\s)-o\s+(\S+)")


def unit_covers(plan: Plan, build: Path, units: Sequence[Unit]) -> dict[str, frozenset[str]]:
    """Each unit's (real path's) tree headers and the LLVM headers those include."""
    dirs = list(dict.fromkeys(d for u in units for d in pure.include_dirs(u.argv, u.directory)))
    inside = [plan.source.root, plan.cmake.source_dir, str(build),
              *(b.path for b in plan.backends if b.origin == "plugin")]
    reals = [Unit(os.path.realpath(u.file), u.directory, u.argv, u.output) for u in units]
    graph = include_graph([u.file for u in reals], dirs, inside)
    return pure.coverage(reals, graph)


def generate_headers(build: Path, units: Sequence[Unit], env: Mapping[str, str], log: IO[str], jobs: int) -> None:
    """Build what Ninja orders before the units' objects (tablegen's generated headers), nothing else."""
    ninja = make_program(build) or develop.ninja_program()
    outputs = list(dict.fromkeys(_target(build, Path(u.directory), u.output) for u in units if u.output))
    if not outputs or not (build / "build.ninja").is_file():
        return
    query = proc.run([ninja, "-C", str(build), "-t", "query", *outputs], env=env, timeout=120)
    needs = sorted({line.strip()[3:] for line in query.stdout.splitlines() if line.strip().startswith("|| ")})
    if not needs:
        return
    result = proc.run([ninja, "-C", str(build), f"-j{max(1, jobs)}", *needs], env=env, timeout=3600)
    log.write(f"$ ninja -C {build} {' '.join(needs)}\n{result.stdout}{result.stderr}\n")
    if not result.ok:
        raise BuildFailed(f"Building the generated headers the canary compile needs failed (exit code "
                          f"{result.returncode}): {(result.stdout + result.stderr).strip()[-2000:]}",
                          log_path=log.name)


def compile_units(units: Sequence[Unit], env: Mapping[str, str], jobs: int, timeout: int,
                  budget: float | None = None, spent: float = 0.0) -> list[Compiled | None]:
    """Each unit compiled with -fsyntax-only, ``jobs`` at once. With a ``budget`` (seconds, of which ``spent`` went
    before the compiles): the first ``jobs`` units start at once, and no unit starts once the budget has passed
    (those running finish, each within its ``timeout``); a unit not started is None. A unit's ``ended`` counts
    ``spent`` too."""
    started = time.monotonic() - spent

    def one(item: tuple[int, Unit]) -> Compiled | None:
        index, unit = item
        if budget is not None and index >= jobs and time.monotonic() - started >= budget:
            return None
        r = proc.run(pure.syntax_only(unit.argv), cwd=unit.directory, env=env, timeout=max(timeout, proc.LONG))
        return Compiled(r.returncode, r.stdout + r.stderr, round(time.monotonic() - started, 2))

    # interrupted: the running compilers stop at once, no more start
    return proc.thread_map(one, list(enumerate(units)), jobs)


def summary(result: CanaryResult) -> list[str]:
    """Lines for a person: how many units of the cover compiled in how long, within what budget, covering how many
    headers; then the causes (each with its unit count and one example), and when the first error came."""
    budget = f"budget {result.budget:g} s" if result.budget is not None else "no budget"
    head = (f"canary compile: {len(result.compiled)} of {len(result.chosen)} chosen units ({result.units_total} in "
            f"all) in {result.seconds:.1f} s (configure {result.configure_seconds:.1f} s before; generated headers "
            f"{result.prepare_seconds:.1f} s of it), {budget}, covering "
            f"{result.headers} of {result.headers_chosen} headers: ")
    rest = (f"; {len(result.skipped)} unit(s) not compiled within the budget (the full build compiles them)"
            if result.skipped else "")
    if result.ok:
        return [head + ("no errors in the units compiled" if result.skipped else "everything compiles") + rest]
    first = f", first error after {result.first_error_seconds:.1f} s" if result.first_error_seconds is not None \
        else ""
    lines = [head + f"{len(result.failed)} unit(s) fail, {len(result.causes)} cause(s){first}{rest}"]
    for c in result.causes:
        ex = c.example
        lines.append(f"  {c.kind}: {c.message} [{len(c.units)} unit(s); e.g. {ex.file}:{ex.line}: {ex.message}]")
    if result.timed_out:
        lines.append(f"  timed out: {', '.join(result.timed_out)}")
    return lines


# --- a passing canary is not run again while nothing it judged changed --------------------------------------------

PASSED = "canary-passed.json"  # in the build dir: what the last passing canary compiled, against which LLVM


def _judge(plan: Plan) -> dict[str, Any]:
    return {"key": plan.key, "llvm": [plan.llvm.prefix, plan.llvm.version, plan.llvm.revision]}


def _stats(files: Sequence[str]) -> dict[str, list[int]] | None:
    out: dict[str, list[int]] = {}
    for f in files:
        try:
            st = Path(f).stat()
        except OSError:
            return None
        out[f] = [st.st_size, st.st_mtime_ns]
    return out


def remember(plan: Plan, result: CanaryResult) -> None:
    """After a canary of ``build``: keep what a passing one judged (the build dir, the LLVM, each unit compiled and
    header covered by its size and mtime); a failing one leaves no record."""
    path = Path(plan.cmake.build_dir) / PASSED
    stats = _stats(result.judged) if result.ok and result.judged else None
    if stats is None:
        path.unlink(missing_ok=True)
        return
    path.write_text(json.dumps({**_judge(plan), "files": stats, "units": len(result.compiled)}) + "\n")


def passed_before(plan: Plan) -> str | None:
    """The line that says why the canary is not run again, when it passed in this build dir against the same LLVM
    and none of the files it compiled or covered changed since; None: run it."""
    try:
        record = json.loads((Path(plan.cmake.build_dir) / PASSED).read_text())
        files = record["files"]
        same = (record["key"], record["llvm"]) == (plan.key, list(_judge(plan)["llvm"])) and isinstance(files, dict)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not same or not files or _stats(list(files)) != files:
        return None
    return (f"canary compile skipped: it passed in this build dir against the same LLVM, and none of the "
            f"{len(files)} files it compiled ({record.get('units', '?')} units and the headers they cover) changed "
            "since")
