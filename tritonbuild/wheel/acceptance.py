"""Acceptance of a freshly built wheel before it is published (edge: runs the wheel's interpreter).

The registry's build-time checks (``tritonbuild.wheel.checks.registry``) run on the wheel: RECORD, the libraries
its ELF files need (when the plan bundles them), the import with each of the plan's interpreters and the plan's
kernel corpus (``tritonbuild.resolve.compilecheck``). The first failure stops them, becomes a ``BuildFailed``
here (``refuse``) and keeps the wheel out of the output dir.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any

from tritonbuild.errors import BuildFailed
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.system.archive import extract_zip
from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks import registry
from tritonbuild.wheel.checks.base import BuildSide, Check, Finding


def smoke_test(plan: Plan, wheel: Path, log: IO[str], reporter: Reporter, *, prefix: Path | None = None,
               code: Future[list[Finding]] | None = None) -> dict[str, Any]:
    """Run the build-time checks on ``wheel``; raise BuildFailed on the first failure. A quick rebuild ran those
    that run code already, from its install ``prefix`` while the wheel was written (``code_checks``): their
    findings come from ``code``, and the others read the wheel (its ELF files from the prefix when they are the
    same). Returns the compile check's report (for the manifest)."""
    work = Path(plan.cmake.build_dir) / "smoke"
    shutil.rmtree(work, ignore_errors=True)
    checks = registry.checks("build")
    try:
        root = prefix if prefix is not None else extract_zip(wheel, work / "wheel", f"the built wheel {wheel}")
        found = _checked(wheel, work, BuildSide(plan, root, log, reporter), "not a readable wheel",
                         checks if code is None else [c for c in checks if not registry.runs_wheel_code(c)])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if code is not None:
        found = registry.merged(found, code.result(), stop_at_fail=True)
    log.write("".join(f"tritonbuild check {f.check}: {f.status}: {f.text}\n" for f in found))
    refuse(wheel, found)
    return next((f.report for f in found if f.report is not None), {"enabled": False, "why": "not planned"})


def code_checks(plan: Plan, prefix: Path, last_wheel: Path, log: IO[str], reporter: Reporter) -> list[Finding]:
    """The build-time checks that run code (the import, the compile check) on a quick rebuild's install
    ``prefix``, with the entry points and metadata of ``last_wheel``: the new wheel copies its dist-info but for
    RECORD and the SBOM, so these run while that wheel is being written."""
    work = Path(plan.cmake.build_dir) / "smoke-code"
    shutil.rmtree(work, ignore_errors=True)
    try:
        dist = extract_zip(last_wheel, work / "dist-info", f"the last wheel {last_wheel}",
                           keep=lambda name: ".dist-info/" in name)
        return _checked(last_wheel, work, BuildSide(plan, prefix, log, reporter, (dist,)),
                        "the last wheel, whose dist-info the new one copies, is not readable",
                        [c for c in registry.checks("build") if registry.runs_wheel_code(c)])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _checked(wheel: Path, work: Path, side: BuildSide, unreadable: str, checks: list[Check]) -> list[Finding]:
    """The findings of ``checks`` on ``wheel`` with the build's ``side``, a scratch dir under ``work``, cut after
    the first failure; a wheel that cannot be read is one failure, said after ``unreadable``."""
    (work / "tmp").mkdir(parents=True)
    try:
        with zipguard.open_wheel(wheel) as zf:
            return registry.run(checks, registry.context(wheel, zf, work / "tmp", build=side), stop_at_fail=True)
    except zipguard.BadWheel as exc:
        return [Finding("wheel", "fail", f"{unreadable}: {exc}")]


def refuse(wheel: Path, findings: Sequence[Finding]) -> None:
    """The one place a build's check findings become an error: the first ``fail`` raises BuildFailed, in the
    check's own words when it has them (the import and compile checks), else naming the check and the wheel."""
    failed = next((f for f in findings if f.status == "fail"), None)
    if failed is None:
        return
    raise BuildFailed(failed.message or f"The built wheel {wheel.name} fails the {failed.check} check: "
                      f"{failed.text}. The wheel was not written to the output dir.", tail=failed.tail)
