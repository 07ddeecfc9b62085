"""``llvm gc``: remove the cached LLVMs no build dir's plan uses (edge: reads the build dirs' plans, removes cache
entries under their locks).

Every dir under ``<cache>/build`` with a readable plan counts, marked or not (an older tritonbuild's): gc errs
towards keeping an LLVM. While a build dir is in use and its plan is not written yet, nothing is removed; a linked
entry is left alone, and its target too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from filelock import Timeout

from tritonbuild.errors import EnvironmentProblem
from tritonbuild.execute import builddirs
from tritonbuild.execute.lock import file_lock
from tritonbuild.llvm import cache


def collect(root: Path, *, dry_run: bool, say: Callable[[str], None]) -> int:
    """Remove (or, ``dry_run``, name) each LLVM cache entry under the cache root ``root`` that no build dir uses,
    saying a line per entry as it goes (``keep``, ``remove``, ``would remove``) and the total; the bytes freed. A
    cache or build dirs that cannot be listed, or entries that could not be removed, are an EnvironmentProblem
    (exit 3) naming them, after the lines of what was done."""
    used, busy = _used_prefixes(root / "build")
    try:
        entries = cache.entries(root)
    except OSError as exc:
        raise EnvironmentProblem(f"Cannot list the LLVM cache {root / 'llvm'}: {exc.strerror or exc}. Fix its "
                                 "permissions; nothing was removed.") from None
    freed, failed = 0, []
    for entry in entries:
        why = _keep(entry, used, busy)
        if why:
            say(f"keep   {entry} ({why})")
            continue
        size = builddirs.dir_size(entry)
        problem = None if dry_run else cache.remove_entry(entry)
        if problem and problem.startswith("in use"):
            say(f"keep   {entry} ({problem})")
        elif problem:
            failed.append(problem)
        else:
            freed += size
            say(f"{'would remove' if dry_run else 'remove'} {entry} ({size / 2**20:.1f} MiB)")
    say(f"{'would free' if dry_run else 'freed'} {freed / 2**20:.1f} MiB")
    if failed:
        raise EnvironmentProblem(f"Could not remove {len(failed)} LLVM cache entr{'y' if len(failed) == 1 else 'ies'}"
                                 f": {'; '.join(failed)}. The LLVM cache is not writable by this user (or the disk "
                                 "is read-only): fix its permissions; what could not be removed is left as it was.")
    return freed


def _keep(entry: Path, used: set[str], busy: list[str]) -> str | None:
    if entry.is_symlink():
        return "a link: left alone, and its target too"
    if str(entry) in used:
        return "used by a build dir"
    if busy:
        return f"build dir {busy[0]} is in use and has not written its plan yet"
    return None


def _used_prefixes(builds: Path) -> tuple[set[str], list[str]]:
    """The LLVM prefixes the build dirs' plans use, and the build dirs in use whose plan is not readable yet."""
    used: set[str] = set()
    busy: list[str] = []
    try:
        # every dir with a plan counts, marked or not (an older tritonbuild's): gc errs towards keeping an LLVM
        dirs = sorted(d for d in builds.iterdir() if d.is_dir() and not d.is_symlink()) if builds.is_dir() else []
    except OSError as exc:
        raise EnvironmentProblem(f"Cannot list the build dirs in {builds} (to see which LLVMs they use): "
                                 f"{exc.strerror or exc}. Fix its permissions; nothing was removed.") from None
    for d in dirs:
        try:
            used.add(str(builddirs.plan_of(d)["llvm"]["prefix"]))  # a planted FIFO or a deep plan.json: no plan
            continue
        except (KeyError, TypeError):
            pass
        lk = file_lock(d)
        try:
            lk.acquire(timeout=0)
            lk.release()
        except Timeout:
            busy.append(str(d))
        except OSError:
            continue
    return used, busy
