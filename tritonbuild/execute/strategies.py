"""The three ways ``build`` makes a wheel, tried in this order (edge: the build dir, the cache).

1. **republish**: nothing the wheel holds changed since the last build (ninja has no work, the same inputs): the
   last wheel is published again (``tritonbuild.execute.republish``).
2. **quick**: the plan is the one the last wheel was built from: ninja, ``cmake --install`` into the kept prefix,
   and the wheel written from it reusing the last wheel's members (``tritonbuild.execute.quick``).
3. **full**: scikit-build-core's ``build_wheel`` (configure, build, install, package), run by the target
   interpreter or its isolated build environment (``tritonbuild.execute.buildenv``).

Quick and full are a ``Strategy``: commands to run, then a packaging step (quick only).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from tritonbuild.execute import buildenv, quick, republish
from tritonbuild.execute.buildenv import build_env_args
from tritonbuild.execute.prepare import build_env
from tritonbuild.fileutil import sha256_of
from tritonbuild.plan import Plan
from tritonbuild.result import BuildResult
from tritonbuild.wheel import writer
from tritonbuild.wheel.publish import write_outputs


@dataclass(frozen=True)
class Strategy:
    name: str  # "quick" or "full"
    steps: tuple[tuple[str, ...], ...]  # the commands, run in the staging dir
    base: Path | None = None  # quick: the last wheel, whose unchanged members the new one reuses


def republished(plan: Plan, env: Mapping[str, str], started: float) -> BuildResult | None:
    """The previous wheel, published again, when ninja has no work and no input of the wheel changed."""
    kept = republish.previous(plan, build_env(plan, env))
    if kept is None:
        return None
    wheel, record = kept[0], dict[str, Any](kept[1])
    final = republish.publish_again(wheel, Path(plan.wheel.out_dir))
    seconds = round(time.monotonic() - started, 2)
    result = BuildResult(
        wheel=final, size=final.stat().st_size, sha256=str(record.get("sha256") or sha256_of(final)),
        seconds=seconds, timings={"republish": seconds}, ninja_no_work=True,
        log=Path(plan.cmake.build_dir) / "build.log", repaired=dict(record.get("repaired") or {}),
        targets=dict(record.get("targets") or {}), bundled=dict(record.get("bundled") or {}), republished=True,
        compile_check=dict(record.get("compile_check") or {}), strategy="republish")
    write_outputs(plan, result)
    return result


def quick_rebuild(plan: Plan) -> Strategy | None:
    """ninja + install into the kept prefix, when the last wheel is this plan's and the build dir is configured."""
    base = republish.last(plan) if quick.usable(plan) else None
    steps = quick.commands(plan) if base else None
    if base is None or steps is None:
        return None
    quick.forget_bundled(plan)
    return Strategy("quick", tuple(tuple(s) for s in steps), base)


def full_build(plan: Plan, tmp_wheels: Path, log: IO[str]) -> Strategy:
    """scikit-build-core's build_wheel, run by the target interpreter or its isolated build environment."""
    reqs, wheelhouse = build_env_args(plan)
    builder = buildenv.ensure(plan.python, reqs, Path(plan.cache_root), offline=plan.toolchain.offline,
                              wheelhouse=wheelhouse)
    if builder != plan.python:
        log.write(f"tritonbuild: {plan.python} lacks {', '.join(reqs)}; building with {builder}\n")
    return Strategy("full", ((builder, "-u", "-c", writer.SKBUILD_RUNNER, str(tmp_wheels),
                              str(plan.wheel.zip_level)),))


def package(strategy: Strategy, plan: Plan, tmp_wheels: Path, log: IO[str]) -> dict[str, float]:
    """The packaging step after the commands: quick writes the wheel from the kept prefix (its seconds); full's
    wheel is already in ``tmp_wheels``."""
    if strategy.base is None:
        return {}
    start = time.monotonic()
    prefix = quick.prefix_of(plan)
    counts = writer.write_wheel(strategy.base, prefix, quick.installed_files(plan), tmp_wheels / strategy.base.name,
                                plan.wheel.zip_level)
    log.write(f"tritonbuild: wheel from {prefix}: {writer.describe(counts)}\n")
    return {"package": round(time.monotonic() - start, 2)}
