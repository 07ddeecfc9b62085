"""Execute a Plan into a wheel (edge: writes the build dir, runs the build, publishes the wheel).

Steps: lock the plan's build dir -> write plugin shims, provenance and the staging pyproject
(``execute.prepare``) -> choose a strategy (``execute.strategies``): republish the last wheel, or run the quick
or full build in a ``BuildRun`` (``execute.buildrun``) -> repair (optional) -> import and compile checks
(``wheel.acceptance``) -> publish into the output dir with its manifest and SHA256SUMS (``wheel.publish``). Nothing
is written into the checkout; only with ``compile_commands`` (``build --compile-commands``) is compile_commands.json
linked at its root for editors, as ``develop`` does.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.execute.buildrun import BuildRun
from tritonbuild.execute.lock import disk_problem, lock
from tritonbuild.execute.prepare import build_tmp, link_compile_commands, prepare, stray_env
from tritonbuild.execute.strategies import choose
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.result import BuildResult
from tritonbuild.system import probememo


def build_wheel(plan: Plan, reporter: Reporter, *, env: Mapping[str, str],
                smoke: bool = True, compile_commands: bool = False) -> BuildResult:
    env = dict(env)  # the request's environment (the edge's): never os.environ here
    if plan.llvm.problem:
        raise UserError(plan.llvm.problem)
    for stray in stray_env(env):
        reporter.warn(f"ignoring {stray}={env[stray]!r} from the environment (tritonbuild passes its plan to "
                      "scikit-build-core itself; use --cmake-arg instead)", topic="note")
    root = Path(plan.cmake.build_dir)
    try:
        lk = lock(plan, reporter)
    except OSError as exc:
        raise disk_problem(plan, exc, root) from None
    run = BuildRun(plan, reporter, env, smoke)
    try:
        _empty(build_tmp(plan))  # what a killed build's children left there
        with probememo.kept_in(Path(plan.cache_root)):  # the compiler's version, the SBOM's dpkg answers
            run.stage = prepare(plan, log=lambda m: reporter.note(m, topic="nvidia"))
            result = choose(plan, env).make(run)
        if compile_commands:
            for note in link_compile_commands(plan):
                reporter.note(note)
        return result
    except OSError as exc:
        raise disk_problem(plan, exc, root) from None
    finally:
        shutil.rmtree(run.tmp_wheels, ignore_errors=True)
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
