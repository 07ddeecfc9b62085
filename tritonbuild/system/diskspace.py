"""The one wording of a write that a full, over-quota or read-only disk stopped (base layer; edge: stat and
statvfs): the destination being written, the mount point of its file system and that file system's free space.

A copy names both ends: ``shutil.copyfile`` gives an ENOSPC of its in-kernel copy the source as ``filename`` and
the destination as ``filename2``, so the destination is ``filename2`` when there is one."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from tritonbuild.printable import printable

DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
DISK_ERRNOS = (*DISK_FULL, errno.EROFS)


def is_disk_problem(exc: BaseException) -> bool:
    """Whether ``exc`` is a write that a full, over-quota or read-only disk stopped."""
    return isinstance(exc, OSError) and exc.errno in DISK_ERRNOS


def destination(exc: OSError, default: Path) -> Path:
    """The path the failed write was writing: ``filename2`` (a copy's destination), else ``filename``, else
    ``default`` (a write to an open file names none)."""
    name = exc.filename2 or exc.filename
    return Path(os.fsdecode(name)) if isinstance(name, (str, bytes)) and name else default


def _existing(path: Path) -> Path | None:
    """``path`` or its nearest ancestor that exists, resolved (links followed); None when none can be read."""
    for p in (path, *path.parents):
        try:
            p.stat()
        except OSError:
            continue
        return Path(os.path.realpath(p))
    return None


def mount_point(path: Path) -> Path | None:
    """The mount point of the file system holding ``path`` (or its nearest existing ancestor): the highest dir
    above it on the same device; None when nothing on the way can be read."""
    p = _existing(path)
    if p is None:
        return None
    try:
        dev = p.stat().st_dev
        while p.parent != p and p.parent.stat().st_dev == dev:
            p = p.parent
    except OSError:
        pass
    return p


def size_text(n: int) -> str:
    """A byte count as a person reads it: GiB with one decimal from 1 GiB, else MiB, else KiB."""
    if n >= 2**30:
        return f"{n / 2**30:.1f} GiB"
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def free_bytes(path: Path) -> int | None:
    """The bytes an unprivileged writer may still use on the file system of ``path`` (or its nearest existing
    ancestor), or None when it cannot be read."""
    p = _existing(path)
    if p is None:
        return None
    try:
        st = os.statvfs(p)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def file_system(path: Path) -> str:
    """Which file system holds ``path`` and how much is free there: 'the file system mounted at /x, with 12.0 MiB
    free now'."""
    mount, free = mount_point(path), free_bytes(path)
    where = f"the file system mounted at {printable(str(mount))}" if mount else "a file system that cannot be read"
    return f"{where}, with {size_text(free)} free now" if free is not None else f"{where}, its free space unknown"


def write_failed(exc: OSError, default: Path) -> str:
    """One sentence: which destination a write failed on, why, and the file system it is on with its free space,
    e.g. 'Writing /c/build/x.so failed: No space left on device (on the file system mounted at /c, with 0 KiB
    free now).'"""
    dest = destination(exc, default)
    why = os.strerror(exc.errno) if exc.errno else str(exc)
    return f"Writing {printable(str(dest))} failed: {why} (on {file_system(dest)})."
