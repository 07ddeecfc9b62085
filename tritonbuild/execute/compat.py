"""``tritonbuild llvm compat`` (edge): which commits of a checkout build with one LLVM. Each step exports one commit
(``gather.commits``: afresh at each run, the tree as a checkout has it, never touching the checkout), plans the
exported tree with the user's other settings keeping the include preflight's problems (``request.make_plan`` of
the request with ``keep_preflight``), then, when the preflight finds nothing, runs the canary compile
(``execute.canary.check``); a commit passes when both find nothing. The search (``resolve.bisect``) tests the
newest commit, then the oldest, then (both failing) probes between them, then halves the interval to the boundary.

Each step's result is cached in ``<cache>/compat/<key>/<commit>.json``, the key a hash of the LLVM (prefix, version,
revision) and of every setting that can change the answer (hostile on read: a damaged entry is recomputed). While
the search goes on only the trees of the boundary so far are kept (their exports under ``<cache>/compat/trees``, the
build dirs and patched copies the steps made): at the end, the two boundary commits'.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tritonbuild import __version__
from tritonbuild.errors import BuildFailed, DiskProblem, InputMissing, UserError
from tritonbuild.execute import canary
from tritonbuild.gather import collect, commits
from tritonbuild.gather.commits import Commit, History
from tritonbuild.gather.request import Request
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.resolve import bisect
from tritonbuild.resolve.facts import LLVMInstall
from tritonbuild.settings.model import SPECS, Settings, split_patch, split_submodule

SCHEMA = 1
# What each step sets itself besides the source and the LLVM (``_plan`` says why): not the user's choice.
STEP_FLAGS = {"ref": None, "reproducible": False, "version_scheme": "none", "require_pinned_llvm": False}
# Left out of the key: what each step sets (the tree and revision, ``Spec.identity``, among it), and the settings
# that cannot change whether a commit builds (``Spec.compiles``: where, how fast, how the wheel is named or packed).
IRRELEVANT = frozenset({"llvm", *STEP_FLAGS} | {s.name for s in SPECS if s.identity or s.compiles is False})
_FINGERPRINT_FILES = 50_000


@dataclass(frozen=True)
class Step:
    """One commit tested. ``reason``: it failed before the preflight and canary could say (an export or a plan
    refused, configure failed); ``causes``: the canary's, as ``CanaryResult.to_json`` gives them."""

    commit: str
    subject: str
    ok: bool
    seconds: float
    cached: bool = False
    preflight: tuple[str, ...] = ()
    causes: tuple[dict[str, Any], ...] = ()
    reason: str | None = None
    canary: bool = True
    computed_seconds: float | None = None  # a cached step: how long it took when it ran

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "subject": self.subject, "ok": self.ok, "seconds": self.seconds,
                "cached": self.cached, "preflight": list(self.preflight), "causes": list(self.causes),
                "reason": self.reason, "canary": self.canary,
                "canary_ran": self.canary and not self.preflight and self.reason is None,
                "computed_seconds": self.seconds if self.computed_seconds is None else self.computed_seconds}


def step_from_json(data: Any, commit: str, canary_on: bool) -> Step | None:
    """A cached step, or None when the entry is not one this run would have written (damaged, another commit)."""
    try:
        if not isinstance(data, dict) or data.get("schema") != SCHEMA or data.get("commit") != commit:
            return None
        pre, causes, reason = data["preflight"], data["causes"], data["reason"]
        good = (isinstance(data["ok"], bool) and isinstance(data["subject"], str) and isinstance(pre, list)
                and all(isinstance(p, str) for p in pre) and isinstance(causes, list)
                and all(isinstance(c, dict) and isinstance(c.get("cause"), str) and isinstance(c.get("kind"), str)
                        and isinstance(c.get("units"), int) and isinstance(c.get("example"), str) for c in causes)
                and (reason is None or isinstance(reason, str)) and isinstance(data["seconds"], (int, float))
                and data["canary"] is canary_on)
        if not good or data["ok"] != (not pre and not causes and reason is None):
            return None
        return Step(commit, data["subject"], data["ok"], 0.0, True, tuple(pre), tuple(causes), reason, canary_on,
                    float(data["seconds"]))
    except (KeyError, TypeError):
        return None


@dataclass(frozen=True)
class Finding:
    checkout: str
    llvm: LLVMInstall
    history: History
    canary: bool
    results: str  # the step cache dir
    steps: tuple[Step, ...]
    answer: bisect.Answer
    exports: tuple[str, ...] = ()

    def commit(self, index: int | None) -> Commit | None:
        return None if index is None else self.history.commits[index]

    def step(self, index: int | None) -> Step | None:
        sha = None if index is None else self.history.commits[index].sha
        return next((s for s in self.steps if s.commit == sha), None)

    def shown(self) -> tuple[Step, ...]:
        """The failing steps whose causes the answer shows: the first failing one, or the oldest and the newest."""
        if self.answer.found:
            return tuple(s for s in [self.step(self.answer.first_failing)] if s)
        ends = dict.fromkeys(s for s in [self.step(0), self.step(len(self.history.commits) - 1)] if s)
        return tuple(ends)

    def to_json(self) -> dict[str, Any]:
        def ref(i: int | None) -> dict[str, Any] | None:
            c = self.commit(i)
            return None if c is None else {"commit": c.sha, "subject": c.subject}

        h = self.history
        return {"checkout": self.checkout, "llvm": {"prefix": self.llvm.prefix, "version": self.llvm.version},
                "range": {"from": h.start, "to": h.end, "oldest": h.commits[0].sha, "newest": h.commits[-1].sha,
                          "commits": len(h.commits)},
                "canary": self.canary, "cache": self.results, "steps": [s.to_json() for s in self.steps],
                "answer": {"found": self.answer.found, "newest_passing": ref(self.answer.newest_passing),
                           "first_failing": ref(self.answer.first_failing),
                           "failing_shown": [s.to_json() for s in self.shown()]},
                "exports": list(self.exports)}


@dataclass
class _Run:
    request: Request
    reporter: Reporter
    history: History
    llvm: LLVMInstall
    canary: bool
    cache_root: Path
    results: Path
    made: dict[str, list[Path]] = field(default_factory=dict)  # per commit: build dirs and copies this run made
    submodules: dict[str, Path] = field(default_factory=dict)  # --submodule: the clone each gitlink is filled from

    @property
    def trees(self) -> Path:
        return self.cache_root / "compat" / "trees"


def canary_runs(s: Settings, no_canary: bool) -> bool:
    """Whether each commit tested is canary-compiled: not with ``--no-canary``, nor with the ``canary`` setting off
    (its flag, its variable or a recipe: the resolved setting, as check-llvm and build read it)."""
    return not no_canary and s.canary != "off"


def find(request: Request, reporter: Reporter, given_range: str | None, *, no_canary: bool,
         say: Callable[[Step, int, int], None], on_start: Callable[[str], None]) -> Finding:
    """Search the range for the newest commit that builds with the LLVM of ``request``; ``on_start`` is told what
    is searched once it is known, ``say(step, number, of)`` each step as it ends (``of``: the most steps the search
    can take). ``no_canary``: only the include preflight per commit (``canary_runs``)."""
    from tritonbuild.gather.request import settings_of

    cwd = request.cwd
    commits.parse_range(given_range)  # a bad range is refused before anything else runs
    s, _cache_dir, cache_root = settings_of(request)
    canary_on = canary_runs(s, no_canary)
    llvm = commits.llvm(s.llvm, cwd)
    checkout = collect.source_root(s, cwd, cache_root, request.warn)
    history = commits.history(checkout, given_range)
    key = answer_key(llvm, s, request, canary_on)
    run = _Run(request, reporter, history, llvm, canary_on, cache_root, cache_root / "compat" / key,
               submodules=_clones(s, checkout, cwd))
    n = len(history.commits)
    most = bisect.most_steps(n)
    on_start(f"llvm compat: {history.checkout}, {n} first-parent commit(s) {history.start}..{history.end} "
             f"({history.commits[0].sha[:12]}..{history.commits[-1].sha[:12]}) against LLVM {llvm.version} at "
             f"{llvm.prefix}; per commit: the include preflight"
             f"{', then the canary compile when it finds nothing' if canary_on else ''}")
    known: dict[int, bool] = {}
    steps: list[Step] = []
    while True:
        index = bisect.next_step(n, known)
        if isinstance(index, bisect.Answer):
            break
        step = one_step(run, history.commits[index])
        steps.append(step)
        known[index] = step.ok
        say(step, len(steps), most)
        prune(run, known)
    kept = sorted(bisect.kept(known))
    for i in kept:  # a boundary commit tested early (a probe) may have had its tree pruned since, or come cached
        if not (run.trees / history.commits[i].sha / commits.MARKER).is_file():
            with contextlib.suppress(UserError):  # its step says why it failed: no tree to keep
                commits.export(history, history.commits[i].sha, run.trees, run.submodules)
    exports = tuple(str(run.trees / history.commits[i].sha) for i in kept
                    if (run.trees / history.commits[i].sha / commits.MARKER).is_file())
    return Finding(str(history.checkout), llvm, history, canary_on, str(run.results), tuple(steps), index, exports)


def _clones(s: Settings, checkout: Path, cwd: Path) -> dict[str, Path]:
    """``--submodule``'s clones by path, each checked before any commit is tested (a submodule of the checkout's
    .gitmodules, a git repository that is no partial clone): a typo is bad input, never "no commit builds"."""
    from tritonbuild.gather import submodules
    from tritonbuild.resolve.source import parse_gitmodules
    from tritonbuild.system.fileutil import read_checked

    declared = parse_gitmodules(read_checked(checkout / ".gitmodules", checkout, "the source's submodule list") or "")
    out: dict[str, Path] = {}
    for sub, raw in map(split_submodule, s.submodules):
        if sub not in declared:
            raise UserError(f"--submodule {sub}={raw} (from {s.origin('submodules')}): {sub} is not a submodule of "
                            f"the checkout {checkout} (its .gitmodules names: {', '.join(declared) or 'none'}).")
        out[sub] = cwd / Path(raw).expanduser()
        submodules.check_repo(out[sub], sub, s.origin("submodules"))
    return out


def one_step(run: _Run, commit: Commit) -> Step:
    """The cached result of ``commit``, else: export, plan (preflight kept), canary; stored."""
    entry = run.results / f"{commit.sha}.json"
    started = time.monotonic()
    cached = _read(entry, commit.sha, run.canary)
    if cached is not None:  # seconds: this lookup's; computed_seconds: the step's when it ran
        return replace(cached, subject=commit.subject, seconds=round(time.monotonic() - started, 2))
    tree = run.trees / commit.sha
    store = True
    preflight: tuple[str, ...] = ()
    causes: tuple[dict[str, Any], ...] = ()
    reason = None
    try:
        tree = commits.export(run.history, commit.sha, run.trees, run.submodules)
        plan = _plan(run, tree)
        run.made[commit.sha] = _made(run, plan)
        preflight = tuple(_relative(p, plan, tree) for p in plan.preflight)
        if run.canary and not preflight:  # a commit the preflight fails needs no minutes of compiles to fail
            result = canary.check(plan, run.reporter, run.request.env)
            causes = tuple(_relative_cause(c, plan, tree) for c in result.to_json()["causes"])
            if not result.ok and not causes:
                causes = ({"cause": f"{len(result.failed)} unit(s) did not compile (timed out: "
                                    f"{len(result.timed_out)})", "kind": "error", "units": len(result.failed),
                           "unit_files": [], "example": ""},)
    except (DiskProblem, InputMissing):
        raise
    except UserError as exc:
        reason = _relative(str(exc), None, tree)
    except BuildFailed as exc:  # configure or the generated headers failed: not cached (it may be the host's)
        reason, store = _relative(str(exc), None, tree), False
    step = Step(commit.sha, commit.subject, not preflight and not causes and reason is None,
                round(time.monotonic() - started, 2), False, preflight, causes, reason, run.canary)
    if store and (problem := _write(entry, step)):
        run.reporter.warn(f"could not cache the result of {commit.sha[:12]} ({problem}); it will be recomputed next "
                          "time")
    return step


def _plan(run: _Run, tree: Path) -> Plan:
    from tritonbuild.gather.request import make_plan

    # An export is no checkout (no commit date), and the wheel's date and version do not change the answer: not
    # reproducible, no dated version. The LLVM is not the pin by design: a recipe's require_pinned_llvm (the
    # nightly one) would fail every commit.
    step = run.request.with_flags(source=str(tree), llvm=run.llvm.prefix, **STEP_FLAGS)
    plan = make_plan(replace(step, keep_preflight=True))
    if plan.llvm.problem:
        raise UserError(plan.llvm.problem)
    return plan


def _made(run: _Run, plan: Plan) -> list[Path]:
    """What the step's plan makes in the cache that is the commit's alone: its build dir, its patched copy."""
    made = [Path(plan.cmake.build_dir)]
    if plan.source.checkout:
        made.append(Path(plan.source.root))
    return [p for p in made if p.resolve().is_relative_to(run.cache_root.resolve())]


def _relative(text: str, plan: Plan | None, tree: Path) -> str:
    """A message with the exported tree's (and its patched copy's) paths written relative to the commit's tree."""
    roots = [str(tree)] + ([plan.source.root] if plan and plan.source.checkout else [])
    for root in sorted(roots, key=len, reverse=True):
        text = text.replace(root.rstrip("/") + "/", "").replace(root.rstrip("/"), f"commit {tree.name[:12]}")
    return text


def _relative_cause(cause: dict[str, Any], plan: Plan, tree: Path) -> dict[str, Any]:
    keep = ("cause", "kind", "units", "unit_files", "example")
    out = {k: cause[k] for k in keep if k in cause}
    out["example"] = _relative(str(out.get("example", "")), plan, tree)
    out["unit_files"] = [_relative(str(u), plan, tree) for u in out.get("unit_files", [])]
    return out


def _read(entry: Path, commit: str, canary_on: bool) -> Step | None:
    try:
        if entry.is_symlink() or not entry.is_file() or entry.stat().st_size > 4 * 2**20:
            return None
        return step_from_json(json.loads(entry.read_text(encoding="utf-8")), commit, canary_on)
    except (OSError, ValueError):
        return None


def _write(entry: Path, step: Step) -> str | None:
    """Store a step (atomically: a reader sees the old entry or the new one); why it could not be, or None."""
    data = {**step.to_json(), "schema": SCHEMA, "cached": False}
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, entry)
    except OSError as exc:
        return f"{entry.parent}: {exc.strerror or exc}"
    return None


def prune(run: _Run, known: Mapping[int, bool]) -> None:
    """Remove the trees of the tested commits off the boundary so far (their results stay cached)."""
    keep = {run.history.commits[i].sha for i in bisect.kept(known)}
    for i in known:
        sha = run.history.commits[i].sha
        if sha in keep:
            continue
        commits.remove(run.trees / sha)
        for path in run.made.pop(sha, []):
            commits.remove(path)


def answer_key(llvm: LLVMInstall, s: Settings, request: Request, canary_on: bool) -> str:
    """The step cache's key: the LLVM, the canary on or off, and every setting that can change the answer (with
    the patches' and the plugin dirs' contents, and the interpreter)."""
    from tritonbuild.gather.request import active_python

    settings = {spec.name: s.given(spec.name)[0] for spec in SPECS if spec.name not in IRRELEVANT}
    data = {"schema": SCHEMA, "tritonbuild": __version__, "canary": canary_on,
            "llvm": [llvm.prefix, llvm.version, llvm.revision], "settings": settings,
            "python": list(request.pythons) or active_python(request.env),
            "patches": [_file_hash(request.cwd / file) if target is None else [target, _file_hash(request.cwd / file)]
                        for target, file in map(split_patch, s.patches)],
            "plugins": [_dir_print(request.cwd / p) for p in s.plugin_dirs if not p.startswith("git+")]}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"
    except OSError:
        return "unreadable"


def _dir_print(root: Path) -> str:
    """A plugin dir's files (path, size, mtime; .git left out), hashed: an edit there is another answer."""
    h = hashlib.sha256(str(root).encode())
    count = 0
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "__pycache__"))
        for name in sorted(files):
            count += 1
            if count > _FINGERPRINT_FILES:
                return h.hexdigest()
            try:
                st = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            h.update(f"{os.path.relpath(os.path.join(top, name), root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
