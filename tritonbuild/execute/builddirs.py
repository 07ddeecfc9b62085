"""``status`` and ``clean``: what build dirs, patched copies and llvm compat exports exist under the cache root
(edge: reads and removes them).

Everything under ``<cache>/build`` is treated as possibly foreign: ``clean`` removes only a dir tritonbuild made
(its ``MARKER``, or a ``plan.json`` whose key is the dir's name), never follows a link (a linked entry is left
alone with its target), and removes a build dir only while holding its lock, the one ``build`` and ``develop``
hold: a dir in use is skipped and named. ``clean --all`` also removes the patched copies of ``--patch``
(``<cache>/patched/<key>``, marked, with their scratch dirs; under the copy's lock) and llvm compat's exported
trees (``<cache>/compat/trees/<commit>``, marked; skipped while a build dir made from one is locked), by the same
rules.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import Timeout

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.execute import lastrequest
from tritonbuild.execute.lock import LOCK, MARKER, file_lock, held, lock_held
from tritonbuild.jsonout import iso_time
from tritonbuild.system.fileutil import read_checked, remove_tree


def dir_size(path: Path) -> int:
    if path.is_symlink():
        return 0
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


PLAN_LIMIT = 16 << 20  # a plan.json tritonbuild writes is kilobytes


def plan_of(d: Path) -> dict[str, Any]:
    """The dir's plan.json when it is a regular file tritonbuild could have written (opened without blocking: a FIFO
    planted under build/ must not hang status, clean or gc; capped; nesting too deep for json is not a plan)."""
    with contextlib.suppress(OSError, ValueError, RecursionError, UserError):
        text = read_checked(d / "plan.json", d, "a build dir's plan.json", limit=PLAN_LIMIT)
        plan = json.loads(text) if text is not None else None
        if isinstance(plan, dict):
            return plan
    return {}


def is_build_dir(d: Path) -> bool:
    """A real dir (not a link) that tritonbuild made: its marker, or a plan.json naming it."""
    if d.is_symlink() or not d.is_dir():
        return False
    return (d / MARKER).is_file() or plan_of(d).get("key") == d.name


def _row(d: Path) -> dict[str, Any]:
    plan = plan_of(d)
    logs = [p for p in (d / "build.log", d / "dev" / "develop.log") if p.is_file()]
    last = max((p.stat().st_mtime for p in logs), default=None)
    wheels: list[str] = []
    try:
        out_dir = Path(plan["wheel"]["out_dir"]) if plan else None
        if out_dir and out_dir.is_dir():
            name = str(plan["wheel"]["name"]).replace("-", "_")  # a name, not a pattern: no glob of it
            wheels = sorted(str(w) for w in out_dir.iterdir() if w.name.startswith(f"{name}-") and w.suffix == ".whl")
        source = plan.get("source", {}).get("root")
        backends = [str(b["name"]) for b in plan.get("backends", [])]
    except (KeyError, TypeError, AttributeError, OSError, ValueError):  # a plan.json that is not tritonbuild's
        source, backends = None, []
    return {"key": d.name, "path": str(d), "source": source, "backends": backends, "size": dir_size(d),
            "last_build": iso_time(last) if last else None,
            "wheels": wheels, "develop": has_develop(d), "develop_request": develop_request(d)}


def has_develop(d: Path) -> bool:
    """Whether ``develop`` used build dir ``d``: the record of its last request that ``develop`` keeps there (a
    ``dev`` dir alone says nothing: build's canary configures one too)."""
    dev, record = d / "dev", d / lastrequest.IN_BUILD_DIR
    return dev.is_dir() and not dev.is_symlink() and record.is_file() and not record.is_symlink()


def develop_request(d: Path) -> str | None:
    """The last develop request of build dir ``d`` as options (its record checked as ``develop`` checks it), else
    None."""
    found, _note = lastrequest.read(d / lastrequest.IN_BUILD_DIR, None)
    return lastrequest.command_line(found.flags, found.recipe) if found else None


def sources_of(d: Path) -> list[Path]:
    """The checkouts build dir ``d``'s plan builds: its source root, and with ``--patch`` the user's checkout."""
    source = plan_of(d).get("source", {})
    roots = [source.get(k) for k in ("root", "checkout")] if isinstance(source, dict) else []
    found = []
    for r in roots:
        with contextlib.suppress(OSError, RuntimeError, ValueError):
            if isinstance(r, str) and r:
                found.append(Path(r).resolve())
    return found


def of_source(root: Path, checkout: Path) -> list[Path]:
    """The build dirs under ``root`` made from ``checkout`` (a real path)."""
    try:
        return [d for d in _build_entries(root) if _listed_build_dir(d) and checkout in sources_of(d)]
    except OSError as exc:
        raise EnvironmentProblem(_unreadable(root, exc)) from None


def listed(root: Path, doing: str = "nothing was removed") -> list[Path]:
    """Every entry of the build dirs' root ``root`` (none when there is none): what ``clean --all``, ``status`` and
    ``llvm gc`` look at. A root that is a link is followed (the build dirs live where it points; each entry that is
    a link is not). A root that is no directory (a link to nowhere: a disk not mounted) or cannot be read is an
    EnvironmentProblem naming it (exit 3); ``doing``: what that means for the command."""
    if os.path.lexists(root) and not root.is_dir():
        raise EnvironmentProblem(f"{root} is not a directory (a link to nowhere, a disk not mounted?), so the build "
                                 "dirs cannot be seen. Fix it, or point --cache-dir at the cache root that holds "
                                 f"them; {doing}.")
    try:
        return sorted(root.iterdir()) if root.is_dir() else []
    except OSError as exc:
        raise EnvironmentProblem(_unreadable(root, exc)) from None


def _unreadable(root: Path, exc: OSError) -> str:
    where = exc.filename or root
    return (f"Cannot read {where} (under the cache root's {root.name}): {exc.strerror or exc}. Fix its permissions, "
            "remove it as its owner, or pass --cache-dir.")


def _failure(d: Path, exc: OSError) -> str:
    return f"{exc.filename or d}: {exc.strerror or exc}"


def build_dirs(root: Path) -> list[dict[str, Any]]:
    """A row per build dir under ``root`` (links and dirs that are not tritonbuild's are not listed); a root or a
    dir that cannot be read is an EnvironmentProblem naming the root (exit 3)."""
    try:
        return _rows(root)
    except OSError as exc:
        raise EnvironmentProblem(_unreadable(root, exc)) from None


def _rows(root: Path) -> list[dict[str, Any]]:
    dirs = [d for d in listed(root, "nothing is listed") if _listed_build_dir(d)]
    rows = [_row(d) for d in dirs]
    current = current_develop_dirs(d for d, r in zip(dirs, rows, strict=True) if r["develop"])
    for d, r in zip(dirs, rows, strict=True):
        r["develop_current"] = d in current
    return rows


def _listed_build_dir(d: Path) -> bool:
    """``is_build_dir``, where a dir whose name no plan's key has (lost+found) and that cannot be read is none."""
    try:
        return is_build_dir(d)
    except OSError:
        if could_be_key(d.name):
            raise
        return False


def current_develop_dirs(dirs: Iterable[Path]) -> set[Path]:
    """Of develop dirs ``dirs``, the one each checkout's develop uses now: the one whose record of the last develop
    request is newest (``develop`` writes it there and as the checkout's record on every run, before it builds).
    The others were used by an earlier develop of that checkout (another Python, other flags)."""
    newest: dict[str, tuple[int, Path]] = {}
    for d in dirs:
        found, _note = lastrequest.read(d / lastrequest.IN_BUILD_DIR, None)
        with contextlib.suppress(OSError):
            when = (d / lastrequest.IN_BUILD_DIR).lstat().st_mtime_ns
            if found is not None and (found.checkout not in newest or when > newest[found.checkout][0]):
                newest[found.checkout] = (when, d)
    return {d for _when, d in newest.values()}


@dataclass
class Cleaned:
    removed: list[Path] = field(default_factory=list)
    freed: int = 0
    notes: list[str] = field(default_factory=list)  # what was left alone, and why
    failed: list[str] = field(default_factory=list)  # what could not be removed (the host's problem)
    links: list[str] = field(default_factory=list)  # the checkout's links removed with them (or that would be)

    def take(self, d: Path, dry_run: bool, remove: Callable[[Path], None] = remove_tree) -> None:
        """Remove ``d`` (not with ``dry_run``) and count it, or say why it could not be removed."""
        size = dir_size(d)
        try:
            if not dry_run:
                remove(d)
            self.removed.append(d)
            self.freed += size
        except OSError as exc:
            self.failed.append(_failure(d, exc))


def _links_into(d: Path) -> list[Path]:
    """The compile_commands.json and library links a build dir's plan put into checkouts."""
    plan = plan_of(d)
    try:
        roots = [str(plan["source"]["root"])] + [str(b["path"]) for b in plan["backends"] if b["origin"] == "plugin"]
    except (KeyError, TypeError):
        return []
    links = [Path(root) / "compile_commands.json" for root in roots]
    lib_dir = Path(roots[0], "python", "triton", "_C")
    with contextlib.suppress(OSError, ValueError):  # ValueError: a NUL in a path
        if lib_dir.is_dir():  # develop's library links
            links += [p for p in lib_dir.iterdir() if p.is_symlink()]
    return links


def _backend_links(d: Path) -> list[Path]:
    """A 2024 tree's ``python/triton/backends/<name>`` links that develop made for build dir ``d``'s backends (to
    their ``backend`` dirs, as setup.py's develop links them): they point into the source, not the build dir."""
    from tritonbuild.system import paths

    plan = plan_of(d)
    try:
        root = Path(str(plan["source"]["root"]))
        wanted = {Path(str(b["path"]), "backend").resolve() for b in plan["backends"]}
        listed = sorted((root / "python" / "triton" / "backends").iterdir())
    except (KeyError, TypeError, OSError, RuntimeError, ValueError):  # ValueError: a NUL in a path
        return []
    found = []
    for link in listed:
        with contextlib.suppress(OSError, RuntimeError, ValueError):
            if paths.made_link(link, root) and link.resolve() in wanted:
                found.append(link)
    return found


_KEY = re.compile(r"[0-9a-f]{16}")


def could_be_key(name: str) -> bool:
    """Whether a build dir's name could be a plan's key (16 hex digits): one that cannot (lost+found) is no build
    dir tritonbuild made, whatever it holds."""
    return _KEY.fullmatch(name) is not None


_ELSEWHERE = re.compile(r"(/.*/build/[0-9a-f]{16})/(?:dev|cmake)/")  # where build and develop point their links


def checkout_links(checkout: Path, builds: Path) -> list[tuple[Path, Path]]:
    """``(link, build dir)`` of the links in ``checkout`` that build and develop make (compile_commands.json,
    python/triton/_C's libraries) and that lead into a build dir under ``builds``, read without following them:
    one whose build dir is gone, or made from another path (a moved checkout), is found too."""
    cands = [checkout / "compile_commands.json"]
    with contextlib.suppress(OSError):
        lib_dir = checkout / "python" / "triton" / "_C"
        if lib_dir.is_dir() and not lib_dir.is_symlink():
            cands += sorted(p for p in lib_dir.iterdir() if p.name.startswith("lib"))
    bases = {builds, builds.resolve()} if builds.is_dir() else {builds}
    found = []
    for link in cands:
        with contextlib.suppress(OSError, ValueError):
            if not link.is_symlink():
                continue
            target = Path(os.path.normpath(link.parent / os.readlink(link)))
            for base in bases:
                if target.is_relative_to(base) and _KEY.fullmatch(target.relative_to(base).parts[0]):
                    found.append((link, base / target.relative_to(base).parts[0]))
                    break
            else:  # into a build dir of another cache root that is gone (a cache deleted by hand, a temp one)
                m = _ELSEWHERE.match(str(target))
                if m and not os.path.lexists(m.group(1)):
                    found.append((link, Path(m.group(1))))
    return found


def drop_stale_links(links: list[tuple[Path, Path]], checkout: Path, removed: list[Path], *,
                     dry_run: bool) -> list[str]:
    """Remove (or with ``dry_run`` name) the ``checkout_links`` whose build dir this clean removed, is gone, or
    was made from another path; return a line for each."""
    gone = {d.resolve() for d in removed}
    said = []
    for link, d in links:
        if d.resolve() in gone:
            why = "its build dir is removed with it"
        elif not d.is_dir():
            why = "its build dir is gone"
        elif checkout not in sources_of(d):
            why = "its build dir was made from another path: the checkout was moved"
        else:
            continue
        if not dry_run:
            with contextlib.suppress(FileNotFoundError):
                link.unlink()
        said.append(f"{'would remove' if dry_run else 'removed'} the link {link} ({why})")
    return said


def _remove(d: Path) -> None:
    """Remove build dir ``d`` (its lock held by the caller: its marker, plan and lock file go last, so a removal
    cut short leaves a dir ``clean`` still knows as its own) and the links into it; for a develop dir also a 2024
    tree's backend links."""
    real = d.resolve()
    for link in _links_into(d):
        with contextlib.suppress(OSError, ValueError):
            if link.is_symlink() and Path(os.path.join(link.parent, os.readlink(link))).resolve().is_relative_to(real):
                link.unlink()
    if has_develop(d):
        for link in _backend_links(d):
            with contextlib.suppress(OSError):
                link.unlink()
    last = (LOCK, MARKER, "plan.json")  # what makes it a build dir goes last: one cut short is cleaned again
    for entry in sorted(d.iterdir(), key=lambda e: e.name in last):
        if entry.name == LOCK:
            continue
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink()
    (d / LOCK).unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # a run that took the lock meanwhile made a new lock file: its dir now
        d.rmdir()


def _in_use(d: Path) -> str | None:
    return _busy(d) if held(d) else None


def _busy(what: Path, lock: str = "its lock is held") -> str:
    return f"{what} is in use by a running tritonbuild ({lock}): left alone"


def _skip_reason(d: Path) -> str | None:
    if d.is_symlink():
        return f"{d} is a link (to {os.readlink(d)}), not a build dir: left alone, and its target too"
    if not d.is_dir():
        return f"{d} is not a directory: left alone"
    if not is_build_dir(d):
        return f"{d} holds no tritonbuild build (no {MARKER}, no plan.json naming it): left alone"
    return None


def remove_build_dirs(dirs: list[Path], *, dry_run: bool) -> Cleaned:
    """Remove the build dirs among ``dirs`` that are tritonbuild's and not in use (and the compile_commands.json
    and library links into them); the rest is named in ``notes`` or ``failed``."""
    out = Cleaned()
    for d in dirs:
        try:
            why = _skip_reason(d) or (_in_use(d) if dry_run else None)
        except OSError as exc:
            if could_be_key(d.name):
                out.failed.append(_failure(d, exc))
            else:  # lost+found: no build has its name
                out.notes.append(f"{d} cannot be read ({exc.strerror or exc}) and is no build dir: left alone")
            continue
        if why:
            out.notes.append(why)
            continue
        if dry_run:
            out.take(d, dry_run)
            continue
        lk = file_lock(d)
        try:
            lk.acquire(timeout=0)
        except Timeout:
            out.notes.append(_busy(d))
            continue
        except OSError as exc:
            out.failed.append(_failure(d, exc))
            continue
        try:
            out.take(d, dry_run, _remove)
        finally:
            lk.release()
    return out


# --- what else tritonbuild keeps under the cache root: patched copies, llvm compat's exported trees ----------------

_STAGING = re.compile(r"^\.[0-9a-f]{12}-")  # an export being written (gather.commits.export's mkdtemp, marked)
STAGING_AGE = 3600  # seconds: a marked staging dir older than this was cut short, not in progress


def _copy_of(d: Path) -> str | None:
    """What the patched copy ``d`` was made from, or None when ``d`` is not tritonbuild's patched copy."""
    from tritonbuild.gather.patches import COPY_MARK

    if d.is_symlink() or not d.is_dir():
        return None
    with contextlib.suppress(OSError, UserError):
        text = read_checked(d / COPY_MARK, d, "a patched copy's marker", limit=1 << 16)  # not a planted FIFO
        if text is not None:
            return text.partition(" of ")[2].strip() or "?"
    return "?" if (d / "tree.synced.json").is_file() else None


def _export_of(d: Path) -> str | None:
    """The commit of llvm compat's exported tree ``d``, or None when ``d`` is not one."""
    from tritonbuild.gather.commits import MARKER as EXPORT_MARK

    if d.is_symlink() or not d.is_dir() or not (d / EXPORT_MARK).is_file():
        return None
    return d.name


def _build_entries(root: Path) -> list[Path]:
    """The entries of the build dirs' root, a root that is a link followed (as ``listed``)."""
    return sorted(root.iterdir()) if root.is_dir() else []


def _entries(d: Path) -> list[Path]:
    return sorted(d.iterdir()) if d.is_dir() and not d.is_symlink() else []


def cache_copies(cache_root: Path) -> list[dict[str, Any]]:
    """A row per patched copy (``<cache>/patched``), per llvm compat export (``<cache>/compat/trees``) and per
    ``--submodule`` export (``<cache>/submodules``) that tritonbuild made: kind, path, what it is of, size; one
    that cannot be read is an EnvironmentProblem naming it (exit 3)."""
    try:
        return _copy_rows(cache_root)
    except OSError as exc:
        raise EnvironmentProblem(_unreadable(cache_root, exc)) from None


def _copy_rows(cache_root: Path) -> list[dict[str, Any]]:
    rows = [{"kind": "patched copy", "path": str(d), "of": of, "size": dir_size(d)}
            for d in _entries(cache_root / "patched") if (of := _copy_of(d))]
    rows += [{"kind": "llvm compat tree", "path": str(d), "of": f"commit {of}", "size": dir_size(d)}
             for d in _entries(cache_root / "compat" / "trees") if (of := _export_of(d))]
    rows += [{"kind": "submodule export", "path": str(d), "of": f"commit {of}", "size": dir_size(d)}
             for d in _entries(cache_root / "submodules") if (of := _export_of(d))]
    return rows


def remove_cache_copies(cache_root: Path, *, dry_run: bool) -> Cleaned:
    """``clean --all`` beyond the build dirs: the patched copies (with their scratch dirs), each under its lock,
    and llvm compat's exported trees, each unless a running build holds a build dir made from it. What tritonbuild
    did not make (no marker) and what is in use are left alone and named in ``notes``."""
    out = Cleaned()
    builds = cache_root / "build"
    steps = ((cache_root / "patched", functools.partial(_clean_patched, cache_root / "patched", builds, out, dry_run)),
             (cache_root / "compat" / "trees",
              functools.partial(_clean_exports, cache_root / "compat" / "trees", builds, out, dry_run)),
             (cache_root / "submodules",  # --submodule's exports
              functools.partial(_clean_exports, cache_root / "submodules", builds, out, dry_run)))
    for where, clean in steps:
        try:
            clean()
        except OSError as exc:
            out.failed.append(_failure(where, exc))
    return out


def _clean_patched(root: Path, builds: Path, out: Cleaned, dry_run: bool) -> None:
    from tritonbuild.gather.patches import SCRATCH_MARK

    keys: dict[str, list[Path]] = {}
    for e in _entries(root):
        key, dot, suffix = e.name.rpartition(".")
        if e.is_symlink():
            out.notes.append(f"{e} is a link (to {os.readlink(e)}), not a patched copy: left alone, and its target too")
        elif dot and suffix == "lock" and e.is_file():
            keys.setdefault(key, [])
        elif dot and suffix == "scratch" and e.is_dir() and (e / SCRATCH_MARK).is_file():
            keys.setdefault(key, []).append(e)
        elif _copy_of(e):
            keys.setdefault(e.name, []).append(e)
        else:
            out.notes.append(f"{e} is no patched copy tritonbuild made (no marker): left alone")
    for key, dirs in keys.items():
        _remove_locked(root / f"{key}.lock", dirs, [u for d in dirs for u in _users(d, builds)], out, dry_run)


def _remove_locked(lock_file: Path, dirs: list[Path], users: list[Path], out: Cleaned, dry_run: bool) -> None:
    """Remove ``dirs`` and then ``lock_file`` while holding that lock (the one ``--patch`` takes while it syncs the
    copy) and the locks of the build dirs made from them (``users``: a build compiling from the copy holds its
    own); one in use: named. A dry run only looks whether they are held, making no lock file."""
    try:
        if dry_run:
            busy = lock_held(lock_file)
        else:
            fd = os.open(lock_file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        out.failed.append(f"{lock_file}: {exc.strerror or exc}")
        return
    if dry_run and busy:
        out.notes.extend(_busy(d) for d in dirs)
    elif dry_run:
        _remove_unused(dirs, users, out, dry_run)
    if dry_run:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            out.notes.extend(_busy(d) for d in dirs)
            return
        if _remove_unused(dirs, users, out, dry_run):
            lock_file.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _remove_unused(dirs: list[Path], users: list[Path], out: Cleaned, dry_run: bool) -> bool:
    """Remove ``dirs`` while holding the locks of the build dirs made from them; False (each named) when one is
    held."""
    taken: list[Any] = []
    try:
        for u in users:
            if _taken(u, dry_run, taken):
                out.notes.extend(_busy(d, f"the build dir {u} made from it is locked") for d in dirs)
                return False
        for d in dirs:
            out.take(d, dry_run)
        return True
    finally:
        for lk in taken:
            lk.release()


def _clean_exports(root: Path, builds: Path, out: Cleaned, dry_run: bool) -> None:
    from tritonbuild.gather.commits import STAGING_MARK, staging_pid

    for e in _entries(root):
        if e.is_symlink() or not e.is_dir():
            out.notes.append(f"{e} is no exported tree tritonbuild made (a link or a file): left alone")
            continue
        if _export_of(e) is None:
            if not _STAGING.match(e.name) or staging_pid(e) is None:
                out.notes.append(f"{e} is no exported tree tritonbuild made (no marker): left alone")
                continue
            if time.time() - max(e.stat().st_mtime, (e / STAGING_MARK).stat().st_mtime) < STAGING_AGE:
                out.notes.append(f"{e} is an export llvm compat is writing now (or cut short less than an hour "
                                 "ago): left alone")
                continue
        _remove_export(e, _users(e, builds), out, dry_run)


def _users(tree: Path, builds: Path) -> list[Path]:
    """The build dirs whose plan builds ``tree`` (as its source or its patched copy's checkout), and those with no
    plan to say (a build that locked its dir and has not written its plan yet may build from it)."""
    real = tree.resolve()
    return [d for d in _build_entries(builds) if _listed_build_dir(d)
            and (not plan_of(d) or any(r.is_relative_to(real) for r in sources_of(d)))]


def _remove_export(tree: Path, users: list[Path], out: Cleaned, dry_run: bool) -> None:
    """Remove ``tree`` while holding the locks of the build dirs made from it: one held is a canary or build of
    llvm compat at work there, and the tree is left alone. A dry run only looks whether they are held."""
    try:
        _remove_unused([tree], users, out, dry_run)
    except OSError as exc:
        out.failed.append(f"{exc.filename or tree}: {exc.strerror or exc}")


def _taken(d: Path, dry_run: bool, taken: list[Any]) -> bool:
    """Whether build dir ``d`` is in use; if not, its lock is taken into ``taken`` (a dry run takes none). OSError
    when the lock cannot be opened."""
    if dry_run:
        return held(d)
    lk = file_lock(d)
    try:
        lk.acquire(timeout=0)
    except Timeout:
        return True
    taken.append(lk)
    return False
