"""The build dir's lock, and the one-paragraph error for a full or read-only disk (edge)."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import Any

from tritonbuild.errors import DiskProblem, EnvironmentProblem
from tritonbuild.execute.diagnose import disk_hint
from tritonbuild.plan import Plan


def lock(plan: Plan) -> Any:
    from filelock import FileLock, Timeout

    root = Path(plan.cmake.build_dir)
    root.mkdir(parents=True, exist_ok=True)
    lk = FileLock(str(root / ".tritonbuild.lock"))
    try:
        lk.acquire(timeout=1)
    except Timeout:
        raise EnvironmentProblem(
            f"Another tritonbuild run is using the build dir {root} (its lock is held). Wait for it to finish, "
            "or build another plan."
        ) from None
    return lk


def free_gib(path: Path) -> float | None:
    for p in (path, *path.parents):
        if p.exists():
            return shutil.disk_usage(p).free / 2**30
    return None


def disk_problem(plan: Plan, exc: OSError, root: Path) -> OSError | DiskProblem:
    """A full or read-only disk as one paragraph; any other OSError as it was."""
    if exc.errno not in (errno.ENOSPC, errno.EROFS):
        return exc
    where = exc.filename or root
    hint = disk_hint(plan, os.strerror(exc.errno), free_gib(Path(str(where))))
    return DiskProblem(f"Writing {where} failed: {exc.strerror}. {hint}")
