"""The cache root: --cache-dir (or a recipe's cache_dir), else the setting ``cache_root`` (its variables' precedence
is the settings model's), else ~/.cache/tritonbuild. ``usable_cache_root`` looks at the disk to refuse a cache root
no build could use, before any work starts."""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from pathlib import Path

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.settings.model import env_settings
from tritonbuild.system.fileutil import resolved


def cache_root(env: Mapping[str, str], given: str | None = None, given_as: str = "--cache-dir") -> Path:
    """--cache-dir (or a recipe's cache_dir) > the setting ``cache_root`` (TRITONBUILD_CACHE_DIR >
    $TRITON_HOME/.triton/tritonbuild > $XDG_CACHE_HOME/tritonbuild, in the settings model) > ~/.cache/tritonbuild.
    An empty ``given`` (a recipe's ``cache_dir = ""``; the flag's own option refuses one) is refused: it would mean
    the default root."""
    if given is not None and not given.strip():
        raise UserError(f"The cache dir {given!r} (from {given_as}) is empty, which would mean the default cache "
                        f"root: name the cache directory, or leave {given_as} out for the default.")
    if given:
        return resolved(Path(given).expanduser(), f"the cache root, from {given_as}")
    found = _from_env(env)
    if found:
        return resolved(Path(found[0]).expanduser(), f"the cache root, from {found[1]}")
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / ".cache" / "tritonbuild"


def _from_env(env: Mapping[str, str]) -> tuple[str, str] | None:
    """The setting ``cache_root`` (checked by its spec) and its variable (``$NAME``), None when no variable sets it."""
    s = env_settings(env)
    if s.cache_root is None:
        return None
    return s.cache_root, "$" + s.origin("cache_root").removeprefix("env ")


def cache_origin(env: Mapping[str, str], given: str | None, given_as: str = "--cache-dir") -> str:
    """Where the cache root came from, as ``cache_root`` chose it (for messages)."""
    if given:
        return given_as
    found = _from_env(env)
    return found[1] if found else "$HOME" if env.get("HOME") else "the home directory"


def usable_cache_root(env: Mapping[str, str], given: str | None = None, given_as: str = "--cache-dir") -> Path:
    """``cache_root``, refused as one paragraph when no build could use it: text no file system takes, a part of it
    that is a file, or a dir this user cannot write into. Nothing is created (a plan leaves the disk as it is)."""
    origin = cache_origin(env, given, given_as)
    found = _from_env(env)
    raw = given or (found[0] if found else env.get("HOME", ""))
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
