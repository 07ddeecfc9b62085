"""The build dir's lock, and the one-paragraph error for a full or read-only disk (edge).

Taking the lock also marks the dir as tritonbuild's (``MARKER``: ``clean --all`` removes only marked dirs),
stops what an earlier run left working there (``tritonbuild.execute.orphans``) and records this run's child
process groups in the dir until the lock is released.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path
from typing import Any

from tritonbuild.errors import DiskProblem, EnvironmentProblem
from tritonbuild.execute import orphans
from tritonbuild.execute.diagnose import disk_hint
from tritonbuild.llvm import cache, provision
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.system import paths, proc
from tritonbuild.system.diskspace import destination, free_bytes, is_disk_problem, mount_point, write_failed

LOCK = ".tritonbuild.lock"
MARKER = paths.BUILD_DIR_MARKER  # written into every build dir tritonbuild makes or uses


def file_lock(root: Path) -> Any:
    """The FileLock of build dir ``root`` (not taken)."""
    from filelock import FileLock

    return FileLock(str(root / LOCK))


def held(root: Path) -> bool:
    """Whether a run holds build dir ``root``'s lock now (``lock_held``)."""
    return lock_held(root / LOCK)


def lock_held(lock_file: Path) -> bool:
    """Whether a run holds the lock ``lock_file`` now, found without making a lock file where there is none (a
    dir no run ever locked is in no run's use; ``clean --dry-run`` and ``llvm gc`` write nothing there). OSError
    when the lock file cannot be opened."""
    try:
        fd = os.open(lock_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # refused only while a run holds it
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def mark(root: Path, key: str) -> None:
    if not (root / MARKER).is_file():
        (root / MARKER).write_text(f"tritonbuild build dir {key}\n")


class Held:
    """A taken build dir lock, and the plan's cached LLVM held in use (``llvm``: a descriptor, or None);
    ``release`` forgets this run's process record and frees both."""

    def __init__(self, lk: Any, llvm: int | None = None) -> None:
        self.lk, self.llvm = lk, llvm

    def release(self) -> None:
        try:
            proc.record_groups_in(None)
        finally:
            if self.llvm is not None:
                os.close(self.llvm)
            self.lk.release()


def lock(plan: Plan, reporter: Reporter) -> Held:
    from filelock import Timeout

    root = Path(plan.cmake.build_dir)
    root.mkdir(parents=True, exist_ok=True)
    mark(root, plan.key)
    lk = file_lock(root)
    try:
        lk.acquire(timeout=1)
    except Timeout:
        raise EnvironmentProblem(
            f"Another tritonbuild run is using the build dir {root} (its lock is held). Wait for it to finish, "
            "or build another plan."
        ) from None
    try:
        for note in orphans.stop_stale(root):
            reporter.warn(note, topic="note")
        proc.record_groups_in(root / orphans.RECORD)
        return Held(lk, use_llvm(plan, reporter))
    except BaseException:
        proc.record_groups_in(None)
        lk.release()
        raise


def use_llvm(plan: Plan, reporter: Reporter) -> int | None:
    """Hold the plan's cached LLVM in use (``cache.use``) for the run, so ``llvm gc`` leaves it; one removed since
    it was provisioned is provisioned again. The descriptor to close, or None when the LLVM is no cache entry."""
    provided = plan.llvm.strategy in provision.PROVIDERS
    entry = cache.entry_of(plan.llvm.prefix, provided=provided)
    if entry is None:
        return None
    for _attempt in range(3 if provided else 1):
        try:
            fd = cache.use(entry)
        except OSError as exc:  # a cache this user may read but not lock (a read-only mount): used as it is
            if not cache.is_complete(entry):
                raise
            reporter.warn(f"cannot hold the LLVM {entry} in use ({exc.filename}: {exc.strerror or exc}): an llvm "
                          "gc by the cache's owner could remove it during this run", topic="note")
            return None
        if cache.is_complete(entry):
            return fd
        os.close(fd)
        provision.ensure(plan, reporter, {})
    if not provided:
        raise EnvironmentProblem(f"The LLVM at {entry} was removed (by `tritonbuild llvm gc`?) as this run started. "
                                 "Fetch it again (`tritonbuild llvm fetch` with the options that made it), or give "
                                 "another --llvm prefix.")
    raise EnvironmentProblem(f"The LLVM at {entry} was removed (by `tritonbuild llvm gc`?) each time this run "
                             "provisioned it again. Run the command again once nothing removes LLVMs from the cache.")


def free_gib(path: Path) -> float | None:
    free = free_bytes(path)  # on the file system of its nearest existing dir
    return None if free is None else free / 2**30


def disk_problem(plan: Plan, exc: OSError, root: Path) -> OSError | DiskProblem:
    """A full or read-only disk as one paragraph: the destination written, its file system and free space
    (``tritonbuild.system.diskspace``), then what the build dir needs when it is on that file system; any other OSError
    as it was."""
    if not is_disk_problem(exc):
        return exc
    build_dir = Path(plan.cmake.build_dir)
    hint = None
    if mount_point(destination(exc, root)) == mount_point(build_dir):
        hint = disk_hint(plan, os.strerror(exc.errno or 0), free_gib(build_dir))
    if hint is None and exc.errno == errno.EROFS:
        hint = "Point --cache-dir (or TRITONBUILD_CACHE_DIR) at a writable place; nothing was written to the output " \
               "dir."
    hint = hint or ("Free space there (or point --cache-dir at a larger disk); what was built so far is kept, the "
                    "next run resumes, and the output dir is untouched.")
    return DiskProblem(f"{write_failed(exc, root)} {hint}")
