"""Where tritonbuild keeps things: its data files and its cache root (pure: takes ``env``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir() -> Path:
    """``cmake/``, ``recipes/`` and ``llvm-hash.txt``: inside the wheel, or at the top of a checkout."""
    bundled = _PKG / "_data"
    return bundled if bundled.is_dir() else _PKG.parent


def cmake_dir() -> Path:
    return data_dir() / "cmake"


def recipes_dir() -> Path:
    return data_dir() / "recipes"


def cache_root(env: Mapping[str, str], given: str | None = None) -> Path:
    """--cache-dir > TRITONBUILD_CACHE_DIR > $TRITON_HOME/.triton/tritonbuild > $XDG_CACHE_HOME/tritonbuild >
    ~/.cache/tritonbuild."""
    if given:
        return Path(given).expanduser().resolve()
    if env.get("TRITONBUILD_CACHE_DIR"):
        return Path(env["TRITONBUILD_CACHE_DIR"]).expanduser().resolve()
    if env.get("TRITON_HOME"):
        return Path(env["TRITON_HOME"]).expanduser().resolve() / ".triton" / "tritonbuild"
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]).expanduser().resolve() / "tritonbuild"
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".cache" / "tritonbuild"
