"""Acceptance of a freshly built wheel before it is published (edge: runs the wheel's interpreter).

The registry's build-time checks (``tritonbuild.wheel.checks.registry``) run on the wheel: RECORD, the libraries
its ELF files need (when the plan bundles them), the import with each of the plan's interpreters and the plan's
kernel corpus (``tritonbuild.resolve.compilecheck``). The first failure stops them, becomes a ``BuildFailed``
here (``refuse``) and keeps the wheel out of the output dir.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from tritonbuild.errors import BuildFailed
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.system.archive import extract_zip
from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks import registry
from tritonbuild.wheel.checks.base import BuildSide, Finding


def smoke_test(plan: Plan, wheel: Path, log: IO[str], reporter: Reporter, *,
               prefix: Path | None = None) -> dict[str, Any]:
    """Run the build-time checks on ``wheel``; raise BuildFailed on the first failure. A quick rebuild imports
    from the install ``prefix`` the wheel was just written from instead of unzipping it. Returns the compile
    check's report (for the manifest)."""
    work = Path(plan.cmake.build_dir) / "smoke"
    shutil.rmtree(work, ignore_errors=True)
    extra: tuple[Path, ...] = ()
    if prefix is not None:  # the prefix has the files; the backends' entry points are in the new wheel's dist-info
        root, extra = prefix, (extract_zip(wheel, work / "dist-info", f"the built wheel {wheel}",
                                           keep=lambda name: ".dist-info/" in name),)
    else:
        root = extract_zip(wheel, work / "wheel", f"the built wheel {wheel}")
    (work / "tmp").mkdir(parents=True)
    try:
        with zipguard.open_wheel(wheel) as zf:
            ctx = registry.context(wheel, zf, work / "tmp", build=BuildSide(plan, root, log, reporter, extra))
            found = registry.run(registry.checks("build"), ctx, stop_at_fail=True, code_elsewhere=prefix is not None)
    except zipguard.BadWheel as exc:
        found = [Finding("wheel", "fail", f"not a readable wheel: {exc}")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log.write("".join(f"tritonbuild check {f.check}: {f.status}: {f.text}\n" for f in found))
    refuse(wheel, found)
    return next((f.report for f in found if f.report is not None), {"enabled": False, "why": "not planned"})


def refuse(wheel: Path, findings: Sequence[Finding]) -> None:
    """The one place a build's check findings become an error: the first ``fail`` raises BuildFailed, in the
    check's own words when it has them (the import and compile checks), else naming the check and the wheel."""
    failed = next((f for f in findings if f.status == "fail"), None)
    if failed is None:
        return
    raise BuildFailed(failed.message or f"The built wheel {wheel.name} fails the {failed.check} check: "
                      f"{failed.text}. The wheel was not written to the output dir.", tail=failed.tail)
