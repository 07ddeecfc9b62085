"""The three ways ``build`` makes a wheel, chosen in this order (edge: the build dir, the cache).

1. **republish**: nothing the wheel holds changed since the last build (ninja has no work, the same inputs): the
   last wheel is published again (``tritonbuild.execute.republish``).
2. **quick**: the plan is the one the last wheel was built from: ninja, ``cmake --install`` into the kept prefix,
   and the wheel written from it reusing the last wheel's members (``tritonbuild.execute.quick``).
3. **full**: scikit-build-core's ``build_wheel`` (configure, build, install, package), run by the target
   interpreter or its isolated build environment (``tritonbuild.execute.buildenv``).

Each is a ``Strategy``: its name, the ``Reason`` it was chosen (a code; the words come from ``REASONS``), and how
it makes the wheel from a ``BuildRun``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from tritonbuild.errors import BuildFailed
from tritonbuild.execute import buildenv, quick, republish
from tritonbuild.execute.buildenv import build_env_args
from tritonbuild.execute.buildrun import BuildRun, Installed, Steps, WheelFacts
from tritonbuild.execute.diagnose import explain
from tritonbuild.execute.prepare import build_env
from tritonbuild.execute.staging import license_files
from tritonbuild.plan import Plan
from tritonbuild.result import BuildResult
from tritonbuild.wheel import writer

StrategyName = Literal["republish", "quick", "full"]


class Reason(StrEnum):
    """Why a strategy was chosen."""

    NOTHING_CHANGED = "nothing-changed"  # republish: ninja has no work and no input of the wheel changed
    SAME_PLAN = "same-plan"  # quick: the last wheel is this plan's and the build dir is configured
    FULL_PACKAGING = "full-packaging"  # full: repair or a reproducible wheel needs scikit-build-core's packaging
    NO_LAST_WHEEL = "no-last-wheel"  # full: no kept wheel of this plan (a first build, or the plan changed)
    NOT_CONFIGURED = "not-configured"  # full: the build dir records no ninja and cmake


REASONS: dict[Reason, str] = {
    Reason.NOTHING_CHANGED: "nothing the wheel holds changed since the last build: its wheel is published again",
    Reason.SAME_PLAN: "the last wheel was built from this plan: ninja and an install into the kept prefix",
    Reason.FULL_PACKAGING: "the plan repairs the wheel or makes it reproducible: scikit-build-core packages it",
    Reason.NO_LAST_WHEEL: "no wheel of this plan was built in this build dir yet",
    Reason.NOT_CONFIGURED: "the build dir was never configured",
}


class Strategy(Protocol):
    """How one build makes its wheel, and why it was chosen."""

    @property
    def name(self) -> StrategyName: ...

    @property
    def reason(self) -> Reason: ...

    def make(self, run: BuildRun) -> BuildResult:
        """Make (or reuse) the wheel and publish it: the build's result."""


def why(strategy: Strategy) -> str:
    return f"strategy {strategy.name}: {REASONS[strategy.reason]}"


@dataclass(frozen=True)
class Republish:
    """The previous wheel, published again."""

    kept: Path  # the kept wheel
    record: Mapping[str, Any]  # what it was remembered with
    name: StrategyName = "republish"
    reason: Reason = Reason.NOTHING_CHANGED

    def make(self, run: BuildRun) -> BuildResult:
        final = republish.publish_again(self.kept, Path(run.plan.wheel.out_dir))
        run.timings["republish"] = seconds = run.seconds()
        return run.result(final, WheelFacts.from_record(self.record, final), strategy=self.name,
                          reason=self.reason, reused=True, seconds=seconds)


@dataclass(frozen=True)
class Quick:
    """ninja + install into the kept prefix, and the wheel written from it reusing the last wheel's members."""

    base: Path  # the last wheel, whose unchanged members the new one reuses
    steps: Steps
    name: StrategyName = "quick"
    reason: Reason = Reason.SAME_PLAN

    def make(self, run: BuildRun) -> BuildResult:
        quick.forget_bundled(run.plan)
        installed = Installed(quick.prefix_of(run.plan), self.base, lambda log: _settle(run, log))
        final, facts = run.make_wheel(why(self), lambda log: self.steps, lambda log: self._package(run, log),
                                      installed)
        return run.result(final, facts, strategy=self.name, reason=self.reason, reused=False)

    def _package(self, run: BuildRun, log: IO[str]) -> dict[str, float]:
        """The wheel written from the kept prefix: its seconds."""
        start = time.monotonic()
        prefix = quick.prefix_of(run.plan)
        from tritonbuild.wheel.sbom import SBOM_DIR, SBOM_NAME  # written anew after the checks see the wheel

        licenses = {f"licenses/{n}": (run.stage / n).read_bytes() for n in license_files(run.plan)}  # as staged
        counts = writer.write_wheel(self.base, prefix, quick.installed_files(run.plan),
                                    run.tmp_wheels / self.base.name, run.plan.wheel.zip_level,
                                    leave_out=(f"{SBOM_DIR}/{SBOM_NAME}", "licenses/"), anew=licenses,
                                    sums_file=quick.sums_file(run.plan))
        log.write(f"tritonbuild: wheel from {prefix}: {writer.describe(counts)}\n")
        return {"package": round(time.monotonic() - start, 2)}


def _settle(run: BuildRun, log: IO[str]) -> None:
    """The kept prefix made what the wheel will hold: the files ``cmake --install`` took for up to date (changed
    within the second they were last copied) copied again, and what no install put there removed."""
    stale = quick.copy_stale(run.plan)
    if stale:
        log.write(f"tritonbuild: copied again (cmake --install took them for up to date: changed within the "
                  f"second they were last copied): {', '.join(stale)}\n")
    gone = quick.prune(run.plan)
    if gone:
        log.write(f"tritonbuild: removed from the kept prefix (no install put them there): {', '.join(gone[:20])}"
                  f"{f' and {len(gone) - 20} more' if len(gone) > 20 else ''}\n")


@dataclass(frozen=True)
class Full:
    """scikit-build-core's build_wheel, run by the target interpreter or its isolated build environment, after
    the canary compile when the plan asks for it."""

    reason: Reason
    name: StrategyName = "full"

    def make(self, run: BuildRun) -> BuildResult:
        if run.plan.canary is not None and run.plan.canary.enabled:
            canary_first(run)
        final, facts = run.make_wheel(why(self), lambda log: full_steps(run, log), lambda log: {}, None)
        return run.result(final, facts, strategy=self.name, reason=self.reason, reused=False)


def choose(plan: Plan, env: Mapping[str, str]) -> Strategy:
    """Republish when nothing changed, quick when the last wheel is this plan's and the build dir is configured,
    full otherwise; each with its reason."""
    kept = republish.previous(plan, build_env(plan, env))
    if kept is not None:
        return Republish(kept[0], kept[1])
    if not quick.usable(plan):
        return Full(Reason.FULL_PACKAGING)
    base = republish.last(plan)
    if base is None:
        return Full(Reason.NO_LAST_WHEEL)
    steps = quick.commands(plan)
    if steps is None:
        return Full(Reason.NOT_CONFIGURED)
    return Quick(base, tuple(tuple(s) for s in steps))


def full_steps(run: BuildRun, log: IO[str]) -> Steps:
    """scikit-build-core's build_wheel, by the target interpreter or its isolated build environment."""
    plan = run.plan
    reqs, wheelhouse = build_env_args(plan)
    builder = buildenv.ensure(plan.python, reqs, Path(plan.cache_root), offline=plan.toolchain.offline,
                              wheelhouse=wheelhouse)
    if builder != plan.python:
        log.write(f"tritonbuild: {plan.python} lacks {', '.join(reqs)}; building with {builder}\n")
    return ((builder, "-u", "-c", writer.SKBUILD_RUNNER, str(run.tmp_wheels), str(plan.wheel.zip_level)),)


def canary_first(run: BuildRun) -> None:
    """Before a full build whose plan asks for it: the canary compile (``execute.canary``); a tree that does not
    compile against the LLVM stops here, with every cause found, before the full build starts. Skipped, in one
    line, when it passed in this build dir against the same LLVM and nothing it compiled changed since."""
    from tritonbuild.execute import canary

    plan = run.plan
    skipped = canary.passed_before(plan)
    if skipped:
        run.reporter.note(skipped)
        return
    run.reporter.note(f"canary compile before the build: {plan.canary.describe() if plan.canary else ''}")
    result = canary.configure_and_run(plan, run.reporter, run.env)
    canary.remember(plan, result)
    lines = canary.summary(result)
    run.reporter.plain(lines[0])  # the causes: in the error's tail
    if result.ok:
        return
    hint = explain(plan, [f"{c.example.file}:{c.example.line}: error: {c.example.message}" for c in result.causes])
    raise BuildFailed(f"The canary compile found that {plan.source.root} does not compile against LLVM "
                      f"{plan.llvm.version or '?'} at {plan.llvm.prefix}: {len(result.causes)} cause(s) in "
                      f"{len(result.failed)} of {len(result.compiled)} units compiled; the full build was not started "
                      f"(--canary off builds anyway).{' ' + hint if hint else ''}", log_path=result.log,
                      tail="\n".join(lines[1:]))
