"""Where tritonbuild keeps things: its data files and its cache root (takes ``env``; ``usable_cache_root`` looks
at the disk to refuse a cache root no build could use, before any work starts)."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.fileutil import resolved

_PKG = Path(__file__).resolve().parent
BUILD_DIR_MARKER = ".tritonbuild-build-dir"  # written into every build dir tritonbuild makes or uses


def data_dir() -> Path:
    """``cmake/``, ``recipes/`` and ``llvm-hash.txt``: inside the wheel, or at the top of a checkout."""
    bundled = _PKG / "_data"
    return bundled if bundled.is_dir() else _PKG.parent


def cmake_dir() -> Path:
    return data_dir() / "cmake"


def recipes_dir() -> Path:
    return data_dir() / "recipes"


def cache_root(env: Mapping[str, str], given: str | None = None, given_as: str = "--cache-dir") -> Path:
    """--cache-dir > TRITONBUILD_CACHE_DIR > $TRITON_HOME/.triton/tritonbuild > $XDG_CACHE_HOME/tritonbuild >
    ~/.cache/tritonbuild. An empty environment variable is unset, as every setting's is; an empty ``given`` (a
    recipe's ``cache_dir = ""``; the flag's own option refuses one) is refused: it would mean the default root."""
    if given is not None and not given.strip():
        raise UserError(f"The cache dir {given!r} (from {given_as}) is empty, which would mean the default cache "
                        f"root: name the cache directory, or leave {given_as} out for the default.")
    if given:
        return resolved(Path(given).expanduser(), f"the cache root, from {given_as}")
    for name, below in (("TRITONBUILD_CACHE_DIR", ()), ("TRITON_HOME", (".triton", "tritonbuild")),
                        ("XDG_CACHE_HOME", ("tritonbuild",))):
        if env.get(name):
            return resolved(Path(env[name]).expanduser(), f"the cache root, from ${name}").joinpath(*below)
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".cache" / "tritonbuild"


_CACHE_VARS = ("TRITONBUILD_CACHE_DIR", "TRITON_HOME", "XDG_CACHE_HOME", "HOME")


def cache_origin(env: Mapping[str, str], given: str | None, given_as: str = "--cache-dir") -> str:
    """Where the cache root came from, as ``cache_root`` chose it (for messages)."""
    if given:
        return given_as
    return next((f"${name}" for name in _CACHE_VARS if env.get(name)), "the home directory")


def usable_cache_root(env: Mapping[str, str], given: str | None = None, given_as: str = "--cache-dir") -> Path:
    """``cache_root``, refused as one paragraph when no build could use it: text no file system takes, a part of it
    that is a file, or a dir this user cannot write into. Nothing is created (a plan leaves the disk as it is)."""
    origin = cache_origin(env, given, given_as)
    raw = given or next((env[name] for name in _CACHE_VARS if env.get(name)), "")
    shown = repr(raw) if len(raw) < 200 else f"{raw[:80]!r}... ({len(raw)} characters)"
    try:
        root = cache_root(env, given, given_as)
        if len(os.fsencode(root)) > 4000 or any(len(os.fsencode(part)) > 255 for part in root.parts):
            raise OSError(errno.ENAMETOOLONG, "the path or one of its names is too long")
        existing = next(p for p in (root, *root.parents) if os.path.lexists(p))
        if not existing.is_dir():
            raise UserError(f"The cache root {root} (from {origin}) cannot be a directory: {existing} exists and is "
                            "not one. Give another --cache-dir (or TRITONBUILD_CACHE_DIR), or move the file.")
    except (OSError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise UserError(f"The cache root {shown} (from {origin}) is not a usable path ({why}). Give another "
                        "--cache-dir (or TRITONBUILD_CACHE_DIR).") from None
    if not os.access(existing, os.W_OK | os.X_OK):
        # the host's problem (a read-only disk, a dir of another user), not the input's: exit 3
        what = "is not writable" if existing == root else f"cannot be created: {existing} is not writable"
        readonly = _read_only(existing)
        how = " (the disk under it is read-only (EROFS))" if readonly else " by this user"
        raise EnvironmentProblem(f"The cache root {root} (from {origin}) {what}{how}. Give a writable --cache-dir "
                                 "(or TRITONBUILD_CACHE_DIR), or fix its permissions.")
    return root


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


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
