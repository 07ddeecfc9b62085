"""Execute a Plan into a wheel (edge: writes the build dir, runs the build, publishes the wheel).

Steps: lock the plan's build dir -> write plugin shims, provenance and the staging pyproject
(``execute.prepare``) -> republish the last wheel, or run the quick or full strategy (``execute.strategies``)
-> repair (optional) -> import and compile checks (``wheel.acceptance``) -> publish into the output dir with
its manifest and SHA256SUMS (``wheel.publish``) -> link compile_commands.json.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from tritonbuild import __version__, proc
from tritonbuild.errors import BuildFailed, DiskProblem, UserError
from tritonbuild.execute import cache_stats as compilercache
from tritonbuild.execute import ninjalog, quick, republish, unity
from tritonbuild.execute.diagnose import disk_hint, explain
from tritonbuild.execute.lock import disk_problem, free_gib, lock
from tritonbuild.execute.prepare import (
    build_env,
    build_tmp,
    cache_stats,
    link_compile_commands,
    prepare,
    release_cache_server,
    stray_env,
    target_outputs,
)
from tritonbuild.execute.staging import cmake_build_dir
from tritonbuild.execute.strategies import Strategy, full_build, package, quick_rebuild, republished
from tritonbuild.fileutil import sha256_of
from tritonbuild.plan import Plan
from tritonbuild.progress import Tracker
from tritonbuild.result import BuildResult
from tritonbuild.wheel.acceptance import smoke_test
from tritonbuild.wheel.publish import publish, write_outputs
from tritonbuild.wheel.repair import repair
from tritonbuild.wheel.sbom_write import add_sbom


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
        lk = lock(plan, say=lambda m: console.print(f"[yellow]note:[/yellow] {m}"))
    except OSError as exc:
        raise disk_problem(plan, exc, root) from None
    tmp_wheels = root / "wheel-tmp"
    started = time.monotonic()
    try:
        _empty(build_tmp(plan))  # what a killed build's children left there
        return _build(plan, console, env, smoke, tmp_wheels, started)
    except OSError as exc:
        raise disk_problem(plan, exc, root) from None
    finally:
        shutil.rmtree(tmp_wheels, ignore_errors=True)
        _empty(build_tmp(plan))
        lk.release()


def _empty(tmp: Path) -> None:
    """Remove the build's temporary dir, also what its children made read-only (pip unpacks such trees)."""
    if tmp.is_symlink():
        tmp.unlink()
        return
    for where, _dirs, _files in os.walk(tmp):
        with contextlib.suppress(OSError):
            Path(where).chmod(0o700)
    shutil.rmtree(tmp, ignore_errors=True)


def _build(plan: Plan, console: Any, env: dict[str, str], smoke: bool, tmp_wheels: Path,
           started: float) -> BuildResult:
    """Prepare, then republish or run a strategy, check and publish the wheel (the lock is held by the caller)."""
    stage = prepare(plan, log=lambda m: console.print(f"[cyan]nvidia:[/cyan] {m}"))
    if (again := republished(plan, env, started)) is not None:
        return again
    strategy = quick_rebuild(plan)
    if strategy is None and plan.canary is not None and plan.canary.enabled:
        _canary(plan, console, env)
    republish.forget(plan)
    shutil.rmtree(tmp_wheels, ignore_errors=True)
    tmp_wheels.mkdir()
    root = Path(plan.cmake.build_dir)
    (root / "bundle.json").unlink(missing_ok=True)  # the install step writes it afresh
    (root / "distcc.log").unlink(missing_ok=True)  # distcc appends: one build's lines only
    before = cache_stats(plan, env)
    marks: list[int] = []  # the Ninja log's size before each round
    tracker = Tracker()
    with open(root / "build.log", "w") as log:
        log.write(f"tritonbuild {__version__} plan {plan.key}\n")
        strategy = strategy or full_build(plan, tmp_wheels, log)
        learned: list[str] = []
        timings = _run(plan, strategy, stage, env, tracker, console, log, learned, marks) | package(
            strategy, plan, tmp_wheels, log)
        wheel, repaired = _one_wheel(tmp_wheels, root / "build.log"), dict[str, Any]()
        if plan.repair is not None:
            wheel, repaired = repair(plan, wheel, log, root / "build.log")
        log.write(f"tritonbuild: SBOM added to the wheel: {add_sbom(plan, wheel)}\n")  # its final content (#38)
        checked: dict[str, Any] = {"enabled": False, "why": "--no-smoke-test"}
        if smoke:
            prefix = quick.prefix_of(plan) if strategy.name == "quick" else None
            checked = smoke_test(plan, wheel, log, prefix=prefix, console=console)
    final = publish(wheel, Path(plan.wheel.out_dir))
    for note in link_compile_commands(plan):
        console.print(f"[cyan]note:[/cyan] {note}")
    made = {"strategy": strategy.name, "time_report": ninjalog.where_time_went(cmake_build_dir(plan), marks),
            "repaired": repaired, "compile_check": checked, "unity_learned": tuple(learned)}
    moved = compilercache.delta(before, cache_stats(plan, env))
    release_cache_server(plan, env)
    return _finish(plan, final, started, timings, tracker, moved, made)


def _canary(plan: Plan, console: Any, env: Mapping[str, str]) -> None:
    """Before a full build whose plan asks for it: the canary compile (``execute.canary``); a tree that does not
    compile against the LLVM stops here, with every cause found, before the full build starts."""
    from rich.markup import escape

    from tritonbuild.execute import canary

    why = escape(plan.canary.why if plan.canary else "")
    console.print(f"[cyan]note:[/cyan] canary compile before the build: {why}", soft_wrap=True)
    result = canary.configure_and_run(plan, console, env)
    lines = canary.summary(result)
    console.print(escape(lines[0]), soft_wrap=True, highlight=False)  # the causes: in the error's tail
    if result.ok:
        return
    hint = explain(plan, [f"{c.example.file}:{c.example.line}: error: {c.example.message}" for c in result.causes])
    raise BuildFailed(f"The canary compile found that {plan.source.root} does not compile against LLVM "
                      f"{plan.llvm.version or '?'} at {plan.llvm.prefix}: {len(result.causes)} cause(s) in "
                      f"{len(result.failed)} of {len(result.chosen)} units; the full build was not started "
                      f"(--canary off builds anyway).{' ' + hint if hint else ''}", log_path=result.log,
                      tail="\n".join(lines[1:]))


def _run(plan: Plan, strategy: Strategy, stage: Path, env: Mapping[str, str], tracker: Tracker, console: Any,
         log: IO[str], learned: list[str], marks: list[int]) -> dict[str, float]:
    """Run the strategy's commands, again after a round whose unity units clashed (their targets are learned, into
    ``learned``; the Ninja log's size before each round into ``marks``); a failure becomes BuildFailed or
    DiskProblem. Returns the phase timings."""
    for attempt in range(unity.ROUNDS + 1):
        marks.append(ninjalog.log_size(cmake_build_dir(plan)))
        rc = _round(plan, strategy, stage, env, tracker, console, log)
        new = unity.learn(plan, tracker.errors) if rc != 0 else ()
        if not new or attempt == unity.ROUNDS:
            break
        learned += new
        console.print(f"[cyan]note:[/cyan] unity builds: {', '.join(new)} failed to compile joined; building them "
                      f"file by file, now and from now on (learned in {Path(plan.cmake.build_dir) / unity.LEARNED})")
        log.write(f"tritonbuild: unity units of {', '.join(new)} failed; building again with them file by file\n")
        tracker.new_round()
    failed_in = tracker.phase
    timings = tracker.finish()
    if rc != 0:
        _failed(plan, rc, failed_in, tracker, Path(plan.cmake.build_dir) / "build.log")
    return timings


def _round(plan: Plan, strategy: Strategy, stage: Path, env: Mapping[str, str], tracker: Tracker, console: Any,
           log: IO[str]) -> int:
    for argv in strategy.steps:
        rc = proc.run_logged(list(argv), cwd=stage, env=build_env(plan, env), log=log, tracker=tracker,
                             console=console, label=f"building {plan.wheel.name}")
        if rc != 0:
            return rc
    return 0


def _finish(plan: Plan, final: Path, started: float, timings: dict[str, float], tracker: Tracker,
            moved: dict[str, Any], made: dict[str, Any]) -> BuildResult:
    """The result of a built wheel: written next to it (manifest, SHA256SUMS) and remembered for republishing."""
    root = Path(plan.cmake.build_dir)
    tc = plan.toolchain
    result = BuildResult(
        wheel=final, size=final.stat().st_size, sha256=sha256_of(final),
        seconds=round(time.monotonic() - started, 2), timings=timings,
        ccache=moved if tc.ccache else {}, sccache=moved if tc.sccache else {},
        distcc=compilercache.distcc_counts(root / "distcc.log") if tc.distcc_hosts else {},
        ninja_no_work=tracker.ninja_no_work, log=root / "build.log",
        targets=target_outputs(cmake_build_dir(plan), plan.cmake.build_targets[1:]),
        bundled=_read_json(root / "bundle.json"), **made,
    )
    write_outputs(plan, result)
    republish.remember(plan, final, {"sha256": result.sha256, "repaired": result.repaired, "targets": result.targets,
                                     "bundled": result.bundled, "compile_check": result.compile_check})
    return result


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


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
