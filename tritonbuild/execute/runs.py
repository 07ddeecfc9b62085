"""The builds of a request's plans (edge): the one loop ``build`` and ``selftest`` run. The output
dir is checked for every plan before the first build starts; then each plan is shown, built
(``execute.build.build_wheel``: a cp312-abi3 plan's wheel is imported by each interpreter it ``serves`` before it
is published) and summed up, in order; the first failure stops the run (the wheels already published stay), and
with several wheels a table of them ends it. How plans and results are shown is the command's (``Shows``, which
``report.summary.BuildTables`` is): this module renders nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.result import BuildResult

# What ``smoke=False`` (``--no-smoke-test``) leaves out: every build-time check (``wheel.checks.registry``).
UNCHECKED = ("--no-smoke-test: the wheel is published without its build-time checks (RECORD, libraries, the import "
             "and the compile check)")


class Shows(Protocol):
    """What a run shows people of its plans and wheels (``report.summary.BuildTables`` on the console)."""

    def plan(self, plan: Plan) -> None:
        """A plan, before its build starts."""

    def built(self, plan: Plan, result: BuildResult) -> None:
        """What one build made, when it is published."""

    def wheels(self, built: Sequence[tuple[Plan, BuildResult]]) -> None:
        """Every wheel of the run, when there were several."""


def run_builds(plans: Sequence[Plan], reporter: Reporter, shows: Shows, *, env: Mapping[str, str],
               smoke: bool = True, compile_commands: bool = False) -> list[BuildResult]:
    """Build each plan's wheel into its out dir; the results in the plans' order. ``reporter``: where the stages
    say what they do; ``shows``: how the plans and results are shown (the command's tables); ``env``: the request's
    environment, the builds' own; ``smoke``: run the wheel's build-time checks before publishing it;
    ``compile_commands``: link each build's compile_commands.json at the source root (else nothing is written into
    the checkout)."""
    from tritonbuild.execute import outdir
    from tritonbuild.execute.build import build_wheel

    outdir.check(plans)  # again here: a caller that did not check before provisioning is covered too
    if not smoke:
        reporter.note(UNCHECKED)
    results: list[BuildResult] = []
    for plan in plans:
        shows.plan(plan)
        result = build_wheel(plan, reporter, env=env, smoke=smoke, compile_commands=compile_commands)
        shows.built(plan, result)
        results.append(result)
    if len(results) > 1:
        shows.wheels(list(zip(plans, results, strict=True)))
    return results
