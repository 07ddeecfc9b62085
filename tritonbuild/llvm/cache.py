"""The LLVM cache: ``<cache root>/llvm/<entry>/`` prefixes, append-only.

An entry becomes visible only complete: it is assembled in a staging dir next to the cache, gets a marker
file (``tritonbuild-llvm.json``, written last) and is renamed into place. Each entry has its own file lock
(``.locks/<entry>.lock``): concurrent runs for the same entry wait and then find it done; different entries
never wait for each other. Nothing here deletes an entry except ``gc`` on request.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.llvm.probe import MARKER
from tritonbuild.plan import LLVMPlan
from tritonbuild.resolve.llvm_requirement import llvm_dir
from tritonbuild.system.fileutil import remove_tree


def is_complete(entry: Path) -> bool:
    return (entry / MARKER).is_file()


def pin_conflict(entry: Path, sha256: dict[str, str]) -> str | None:
    """Why a downloaded entry no longer serves the pin: it was verified against another sha256 than the one the
    source's ``llvm-info.json`` now gives for its archive (a rebuilt archive under the same hash and build)."""
    marker = read_marker(entry)
    suffix, got = marker.get("suffix"), marker.get("sha256")
    want = sha256.get(str(suffix)) if suffix else None
    if marker.get("provider") == "download" and got and want and got != want:
        return (f"the cached archive was verified as sha256 {str(got)[:16]}..., but the pin now says {want[:16]}... "
                "(it is fetched again)")
    return None


def current(entry: Path, sha256: dict[str, str]) -> bool:
    """Complete, and not contradicted by the pin's sha256."""
    return is_complete(entry) and pin_conflict(entry, sha256) is None


def ready_prefix(llvm: LLVMPlan) -> str:
    """The prefix a plan's LLVM is at, when it is there now (``llvm path``); a plan with no LLVM, or whose
    download or source build is not in the cache yet, is refused naming the command that makes it (exit 2)."""
    if not llvm.prefix:
        raise UserError(llvm.problem or "No LLVM would be used.")
    if llvm.strategy in ("download", "source") and not current(Path(llvm.prefix), llvm.sha256):
        raise UserError(f"The plan's LLVM ({llvm.strategy}) is not in the cache yet: run `tritonbuild llvm "
                        f"{'fetch' if llvm.strategy == 'download' else 'build'}` first, with the options given here "
                        "(--source, --cache-dir, --llvm-mirror, --allow-unpinned, ...), which make the same plan.")
    return llvm.prefix


def read_marker(entry: Path) -> dict[str, Any]:
    try:
        data = json.loads((entry / MARKER).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def entries(cache_root: Path) -> list[Path]:
    root = llvm_dir(cache_root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".") and is_complete(p))


def entry_lock(entry: Path) -> Any:
    """The FileLock of cache entry ``entry`` (not taken): a fetch or source build holds it while it makes the entry,
    gc while it removes it."""
    from filelock import FileLock

    return FileLock(str(_lock_dir(entry, make=True) / f"{entry.name}.lock"))


@contextlib.contextmanager
def making(entry: Path, say: Callable[[str], None]) -> Iterator[None]:
    """Hold entry ``entry``'s lock alone while a fetch or source build makes (or replaces) it; while another run
    holds it (a build using the entry, another fetch, gc), say so once and wait."""
    from filelock import Timeout

    lk = entry_lock(entry)
    try:
        lk.acquire(timeout=0)
    except Timeout:
        say(f"waiting for another tritonbuild run that holds {entry} (a build using it, a fetch or a gc)")
        lk.acquire()
    try:
        yield
    finally:
        lk.release()


def _lock_dir(entry: Path, *, make: bool) -> Path:
    """``.locks`` beside the entries; one that is a link (planted: lock files would be written where it points) is
    an OSError naming it."""
    locks = entry.parent / ".locks"
    if locks.is_symlink():
        raise OSError(errno.ELOOP, "a link where tritonbuild keeps its lock files (remove it)", str(locks))
    if make:
        locks.mkdir(parents=True, exist_ok=True)
    return locks


def use(entry: Path) -> int:
    """Take entry ``entry``'s lock shared, for as long as a build uses it (waiting while gc removes it or a fetch
    replaces it): gc, which takes it alone, then leaves the entry alone. The open descriptor; closing it lets go."""
    fd = os.open(_lock_dir(entry, make=True) / f"{entry.name}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except BaseException:
        os.close(fd)
        raise
    return fd


def entry_of(prefix: str | None, *, provided: bool) -> Path | None:
    """The LLVM cache entry an LLVM prefix is (where it really is: ``<some cache>/llvm/<entry>``, of this cache root
    or another's), or None when it is none. ``provided``: the prefix is a provider's entry (there or not yet);
    otherwise only a complete entry counts."""
    if not prefix or "\0" in prefix:
        return None
    real = Path(os.path.realpath(prefix))
    if real.parent.name != "llvm" or real.name.startswith("."):
        return None
    return real if provided or is_complete(real) else None


def in_use(entry: Path) -> bool:
    """Whether a run holds entry ``entry``'s lock now (a build using it, a fetch or gc at work), found without
    making a lock file; for ``gc --dry-run``."""
    try:
        fd = os.open(_lock_dir(entry, make=False) / f"{entry.name}.lock", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def remove_entry(entry: Path) -> str | None:
    """``gc``'s removal: under the entry's lock (not waited for: "in use ..." when a fetch or build holds it), the
    entry is renamed aside first (runs never see a half-removed prefix), then deleted. A link is never followed.
    None, or why it was not removed."""
    from filelock import Timeout

    if entry.is_symlink():
        return f"{entry} is a link: left alone"
    try:
        lk = entry_lock(entry)
        lk.acquire(timeout=0)
    except Timeout:
        return "in use by another tritonbuild run (its lock is held)"
    except OSError as exc:
        return f"{exc.filename or entry}: {exc.strerror or exc}"
    aside = entry.parent / f"{REMOVING}{entry.name}-{os.getpid()}"
    try:
        entry.rename(aside)
    except OSError as exc:
        return f"{exc.filename or entry}: {exc.strerror or exc} (the entry is as it was)"
    else:
        return finish_removal(aside)
    finally:
        lk.release()


REMOVING = ".removing-"  # an entry moved aside to be removed: never a candidate, never half-seen by a run


def finish_removal(aside: Path) -> str | None:
    """Remove an entry moved aside (by ``remove_entry``, or a leftover of one); None, or where it stopped (what is
    left stays aside, for ``leftovers``)."""
    try:
        if aside.is_file():
            aside.unlink()  # a partial download
        else:
            remove_tree(aside)
    except OSError as exc:
        return (f"{exc.filename or aside}: {exc.strerror or exc} (the entry stays moved aside at {aside}, as much "
                "of it as could not be removed; an llvm gc that may remove it finishes it)")
    return None


LEFT = (REMOVING, ".staging-", ".replaced-")  # a removal, a fetch or build's staging, a replaced entry: NAME-PID


def leftovers(cache_root: Path) -> list[Path]:
    """What a run cut short left in the LLVM cache, its process gone: an entry moved aside to be removed, a
    fetch's or source build's staging dir, a replaced entry (``<prefix>NAME-PID`` dirs) and a partial download
    (``.downloads/ARCHIVE.PID``). A name with no pid is none of these. Whether the entry's lock is free (a run
    on another host sharing the cache holds it) is for ``finish_leftover`` to see."""
    root = llvm_dir(cache_root)
    if not root.is_dir():
        return []
    found = [p for p in sorted(root.iterdir()) if p.name.startswith(LEFT) and not p.is_symlink() and p.is_dir()
             and _left_by_a_gone_run(p.name.rpartition("-")[2])]
    downloads = root / ".downloads"
    if downloads.is_dir() and not downloads.is_symlink():
        found += [p for p in sorted(downloads.iterdir()) if not p.is_symlink() and p.is_file()
                  and p.name.rpartition(".")[0].endswith(".tar.gz") and _left_by_a_gone_run(p.name.rpartition(".")[2])]
    return found


def _left_by_a_gone_run(pid: str) -> bool:
    return pid.isascii() and pid.isdigit() and not _running(pid)


def left_entry(path: Path) -> Path:
    """The entry a leftover (``leftovers``) was of: its lock is held while a run works on it."""
    if path.parent.name == ".downloads":
        return path.parent.parent / path.name.rpartition(".")[0].removesuffix(".tar.gz")
    name = path.name.removeprefix(next(p for p in LEFT if path.name.startswith(p))).rpartition("-")[0]
    return path.parent / name


def finish_leftover(path: Path) -> str | None:
    """``finish_removal`` of a leftover, under its entry's lock (not waited for: "in use ..." when a run, here or on
    another host sharing the cache, holds it)."""
    from filelock import Timeout

    try:
        lk = entry_lock(left_entry(path))
        lk.acquire(timeout=0)
    except Timeout:
        return "in use by another tritonbuild run (its entry's lock is held)"
    except OSError as exc:
        return f"{exc.filename or path}: {exc.strerror or exc}"
    try:
        return finish_removal(path)
    finally:
        lk.release()


def _running(pid: str) -> bool:
    """Whether the process ``pid`` (a name's last part) runs; a part that is no pid (not ASCII digits, 0, past
    Linux's largest pid) was no removal's, so nothing runs it."""
    if not (pid.isascii() and pid.isdigit() and len(pid) <= 7) or not 0 < int(pid) <= PID_MAX:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: running
        return True
    return True


PID_MAX = 1 << 22  # Linux's PID_MAX_LIMIT


def staging_dir(entry: Path) -> Path:
    path = entry.parent / f".staging-{entry.name}-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def commit(staged_prefix: Path, entry: Path, marker: dict[str, Any], *, replace: bool = False) -> Path:
    """Write the marker last and rename the staged prefix into place (atomic on one filesystem). With
    ``replace`` a stale entry is moved aside first and removed only once the new one is in place."""
    (staged_prefix / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n")
    if entry.exists() and not replace:  # another run finished first: keep theirs, drop ours
        shutil.rmtree(staged_prefix, ignore_errors=True)
        return entry
    old = entry.parent / f".replaced-{entry.name}-{os.getpid()}"
    if entry.exists():
        entry.rename(old)
    staged_prefix.rename(entry)
    shutil.rmtree(old, ignore_errors=True)
    return entry
