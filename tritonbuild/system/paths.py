"""Where tritonbuild keeps things: its data files, and the marker of its build dirs (the cache root is
``tritonbuild.settings.cacheroot``'s)."""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # the package: this module is in tritonbuild/system/
BUILD_DIR_MARKER = ".tritonbuild-build-dir"  # written into every build dir tritonbuild makes or uses


def data_dir() -> Path:
    """``cmake/``, ``recipes/`` and ``llvm-hash.txt``: inside the wheel, or at the top of a checkout."""
    bundled = _PKG / "_data"
    return bundled if bundled.is_dir() else _PKG.parent


def cmake_dir() -> Path:
    return data_dir() / "cmake"


def recipes_dir() -> Path:
    return data_dir() / "recipes"


def made_link(link: Path, root: Path) -> bool:
    """Whether ``link`` (a path under the checkout ``root``) is a link tritonbuild's build or develop put there: the
    ``compile_commands.json`` link at the root; a library link in ``python/triton/_C`` into a build dir (one that
    holds ``BUILD_DIR_MARKER``); a 2024 tree's ``python/triton/backends/<name>`` link to a backend's ``backend`` dir
    (develop links them as setup.py's develop does). They are no part of the source."""
    try:
        if not link.is_symlink():
            return False
        rel = link.relative_to(root).as_posix()
        target = link.parent / os.readlink(link)
    except (OSError, ValueError):
        return False
    if rel == "compile_commands.json":
        return True
    if rel.startswith("python/triton/backends/") and rel.count("/") == 3:
        return target.name == "backend"
    if not (rel.startswith("python/triton/_C/lib") and rel.count("/") == 3):
        return False
    real = target.resolve()
    return any((d / BUILD_DIR_MARKER).is_file() for d in real.parents)
