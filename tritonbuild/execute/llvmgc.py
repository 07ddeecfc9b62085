"""``llvm gc``: remove the cached LLVMs no build dir's plan uses (edge: reads the build dirs' plans, removes cache
entries under their locks).

gc errs towards keeping: every dir under ``<cache>/build`` with a plan counts, marked or not (an older
tritonbuild's), and while any build dir cannot tell which LLVM it uses (in use with no plan written yet, or a plan
this user cannot read) nothing is removed. A ``build`` that is not a directory (a dangling link: its disk not
mounted) stops gc before anything is removed. Prefixes are compared by where they really are, so a cache root
named through a link matches the plans made through its target; a build dir that is a link counts as its target.
A linked entry is left alone, and its target too. A build holds its cached LLVM's entry lock shared while it runs
(``execute.lock.use_llvm``) and gc removes an entry only holding that lock alone, so a build that starts while gc
runs keeps its LLVM whichever comes first.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tritonbuild.errors import EnvironmentProblem
from tritonbuild.execute import builddirs
from tritonbuild.execute.lock import held
from tritonbuild.llvm import cache


def collect(root: Path, *, dry_run: bool, say: Callable[[str], None]) -> int:
    """Remove (or, ``dry_run``, name) each LLVM cache entry under the cache root ``root`` that no build dir uses,
    and what an earlier removal left (``cache.leftovers``), saying a line per entry as it goes (``keep``,
    ``remove``, ``would remove``) and the total; the bytes freed. A cache or build dirs that cannot be read, or
    entries that could not be removed, are an EnvironmentProblem (exit 3) naming them, after the lines of what was
    done."""
    used, blockers = _used_prefixes(root / "build")
    try:
        entries, leftovers = cache.entries(root), cache.leftovers(root)
    except OSError as exc:
        raise EnvironmentProblem(f"Cannot list the LLVM cache {root / 'llvm'}: {exc.strerror or exc}. Fix its "
                                 "permissions; nothing was removed.") from None
    freed, failed = 0, []
    targets = {os.path.realpath(e): e for e in entries if e.is_symlink()}
    for entry in [*entries, *leftovers]:
        why = _keep(entry, used, blockers, targets, dry_run) if entry in entries else \
            ("in use by another tritonbuild run (its entry's lock is held)"
             if dry_run and _in_use_entry(cache.left_entry(entry)) else None)
        if why:
            say(f"keep   {entry} ({why})")
            continue
        size = entry.stat().st_size if entry.is_file() else builddirs.dir_size(entry)
        problem = None if dry_run else (cache.remove_entry(entry) if entry in entries else cache.finish_leftover(entry))
        if problem and problem.startswith("in use"):
            say(f"keep   {entry} ({problem})")
        elif problem:
            failed.append(problem)
        else:
            freed += size
            what = "" if entry in entries else ", left by an earlier run"
            say(f"{'would remove' if dry_run else 'remove'} {entry} ({size / 2**20:.1f} MiB{what})")
    say(f"{'would free' if dry_run else 'freed'} {freed / 2**20:.1f} MiB")
    if failed:
        raise EnvironmentProblem(f"Could not remove {len(failed)} LLVM cache entr{'y' if len(failed) == 1 else 'ies'}"
                                 f": {'; '.join(failed)}. Each path named is where it stopped: fix it (its "
                                 "permissions, a read-only disk, a link tritonbuild does not follow) or remove it as "
                                 "its owner, and run llvm gc again.")
    return freed


def _keep(entry: Path, used: set[str], blockers: list[str], targets: dict[str, Path], dry_run: bool) -> str | None:
    real = os.path.realpath(entry)
    if entry.is_symlink():
        return "a link: left alone, and its target too"
    if real in targets:
        return f"the target of the link {targets[real]}"
    if real in used:
        return "used by a build dir"
    if blockers:
        return blockers[0]
    return "in use by another tritonbuild run (its lock is held)" if dry_run and _in_use_entry(entry) else None


def _in_use_entry(entry: Path) -> bool:
    try:
        return cache.in_use(entry)
    except OSError:
        return False  # the removal names what stops it


def _used_prefixes(builds: Path) -> tuple[set[str], list[str]]:
    """The LLVM prefixes the build dirs' plans use (where they really are), and why nothing may be removed now (a
    build dir in use whose plan is not written yet, one whose plan cannot be read)."""
    dirs = builddirs.listed(builds, "nothing was removed")
    used: set[str] = set()
    blockers: list[str] = []
    for d in dirs:
        prefix, blocker = _prefix_of(d)
        if prefix:
            used.add(os.path.realpath(prefix))
        elif blocker and builddirs.could_be_key(d.name):
            blockers.append(blocker)  # a dir no build could have made (lost+found) keeps nothing
    return used, blockers


def _prefix_of(d: Path) -> tuple[str | None, str | None]:
    """The LLVM prefix build dir ``d``'s plan uses (a link: its target's), or why it keeps every LLVM (None, None:
    it has no plan and is not in use, so it uses none; a file is no build dir)."""
    plan = d / "plan.json"
    try:
        if not d.is_dir():
            return None, (f"build dir {d} is a link to nowhere" if d.is_symlink() else None)
        os.lstat(plan)
    except FileNotFoundError:
        return None, _in_use(d)
    except OSError as exc:
        return None, _unknown(d, exc)
    prefix = builddirs.plan_of(d).get("llvm", {})
    if isinstance(prefix, dict) and _absolute(prefix.get("prefix")):
        return prefix["prefix"], None  # tritonbuild writes it absolute: a relative one is no plan of its own
    if isinstance(prefix, dict) and "prefix" in prefix and prefix["prefix"] is None:
        return None, None  # a plan with no LLVM
    return None, f"the plan of build dir {d} cannot be read, so which LLVM it uses is not known"


def _absolute(prefix: object) -> bool:
    return isinstance(prefix, str) and "\0" not in prefix and Path(prefix).is_absolute()


def _in_use(d: Path) -> str | None:
    try:
        return f"build dir {d} is in use and has not written its plan yet" if held(d) else None
    except OSError as exc:
        return _unknown(d, exc)


def _unknown(d: Path, exc: OSError) -> str:
    return f"build dir {d} cannot be read ({exc.strerror or exc}), so which LLVM it uses is not known"
