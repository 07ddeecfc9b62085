"""The builds of a request's plans (edge): the one loop ``build`` and ``selftest`` run. The output
dir is checked for every plan before the first build starts; then each plan is shown, built
(``execute.build.build_wheel``: a cp312-abi3 plan's wheel is imported by each interpreter it ``serves`` before it
is published) and summed up, in order; the first failure stops the run (the wheels already published stay), and
with several wheels a table of them ends it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from tritonbuild.plan import Plan
from tritonbuild.redact import redact_text
from tritonbuild.result import BuildResult

if TYPE_CHECKING:
    from tritonbuild.report.console import SafeConsole

# What ``smoke=False`` (``--no-smoke-test``) leaves out: every build-time check (``wheel.checks.registry``).
UNCHECKED = ("--no-smoke-test: the wheel is published without its build-time checks (RECORD, libraries, the import "
             "and the compile check)")


def run_builds(plans: Sequence[Plan], reporter: SafeConsole, *, env: Mapping[str, str],
               smoke: bool = True, compile_commands: bool = False) -> list[BuildResult]:
    """Build each plan's wheel into its out dir; the results in the plans' order. ``reporter``: the command's
    console (the stages' ``Reporter``, which also renders the plan and summary tables); ``env``: the request's
    environment, the builds' own; ``smoke``: run the wheel's build-time checks before publishing it;
    ``compile_commands``: link each build's compile_commands.json at the source root (else nothing is written into
    the checkout)."""
    from tritonbuild.execute import outdir
    from tritonbuild.execute.build import build_wheel
    from tritonbuild.report import render, summary

    outdir.check(plans)  # again here: a caller that did not check before provisioning is covered too
    if not smoke:
        reporter.note(UNCHECKED)
    results: list[BuildResult] = []
    for plan in plans:
        if reporter.verbosity >= 0:
            render.print_plan(plan, reporter)
        else:  # -q: of the plan, only its warnings
            for warning in plan.warnings:
                reporter.warn(redact_text(warning))
        result = build_wheel(plan, reporter, env=env, smoke=smoke, compile_commands=compile_commands)
        summary.print_summary(plan, result, reporter)
        results.append(result)
    if len(results) > 1:
        summary.print_wheels(list(zip(plans, results, strict=True)), reporter)
    return results
