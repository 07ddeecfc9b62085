"""``status`` and ``clean``: what build dirs exist under the cache root (edge: reads and removes them).

Everything under ``<cache>/build`` is treated as possibly foreign: ``clean`` removes only a dir tritonbuild made
(its ``MARKER``, or a ``plan.json`` whose key is the dir's name), never follows a link (a linked entry is left
alone with its target), and removes a build dir only while holding its lock, the one ``build`` and ``develop``
hold: a dir in use is skipped and named.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonbuild.execute.lock import LOCK, MARKER, file_lock


def dir_size(path: Path) -> int:
    if path.is_symlink():
        return 0
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _plan_of(d: Path) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        plan = json.loads((d / "plan.json").read_text())
        if isinstance(plan, dict):
            return plan
    return {}


def is_build_dir(d: Path) -> bool:
    """A real dir (not a link) that tritonbuild made: its marker, or a plan.json naming it."""
    if d.is_symlink() or not d.is_dir():
        return False
    return (d / MARKER).is_file() or _plan_of(d).get("key") == d.name


def _row(d: Path) -> dict[str, Any]:
    plan = _plan_of(d)
    logs = [p for p in (d / "build.log", d / "dev" / "develop.log") if p.is_file()]
    last = max((p.stat().st_mtime for p in logs), default=None)
    wheels: list[str] = []
    try:
        out_dir = Path(plan["wheel"]["out_dir"]) if plan else None
        if out_dir and out_dir.is_dir():
            name = str(plan["wheel"]["name"]).replace("-", "_")
            wheels = sorted(str(w) for w in out_dir.glob(f"{name}-*.whl"))
        source = plan.get("source", {}).get("root")
        backends = [str(b["name"]) for b in plan.get("backends", [])]
    except (KeyError, TypeError, AttributeError, OSError):  # a plan.json that is not tritonbuild's
        source, backends = None, []
    return {"key": d.name, "path": str(d), "source": source, "backends": backends, "size": dir_size(d),
            "last_build": time.strftime("%Y-%m-%d %H:%M", time.localtime(last)) if last else None,
            "wheels": wheels}


def build_dirs(root: Path) -> list[dict[str, Any]]:
    """A row per build dir under ``root`` (links and dirs that are not tritonbuild's are not listed)."""
    if not root.is_dir():
        return []
    return [_row(d) for d in sorted(root.iterdir()) if is_build_dir(d)]


@dataclass
class Cleaned:
    removed: list[Path] = field(default_factory=list)
    freed: int = 0
    notes: list[str] = field(default_factory=list)  # what was left alone, and why
    failed: list[str] = field(default_factory=list)  # what could not be removed (the host's problem)


def _links_into(d: Path) -> list[Path]:
    """The compile_commands.json and library links a build dir's plan put into checkouts."""
    plan = _plan_of(d)
    try:
        roots = [str(plan["source"]["root"])] + [str(b["path"]) for b in plan["backends"] if b["origin"] == "plugin"]
    except (KeyError, TypeError):
        return []
    links = [Path(root) / "compile_commands.json" for root in roots]
    lib_dir = Path(roots[0], "python", "triton", "_C")
    with contextlib.suppress(OSError):
        if lib_dir.is_dir():  # develop's library links
            links += [p for p in lib_dir.iterdir() if p.is_symlink()]
    return links


def _remove(d: Path) -> None:
    """Remove build dir ``d`` (its lock held by the caller: the lock file goes last) and the links into it."""
    real = d.resolve()
    for link in _links_into(d):
        with contextlib.suppress(OSError):
            if link.is_symlink() and Path(os.path.join(link.parent, os.readlink(link))).resolve().is_relative_to(real):
                link.unlink()
    for entry in d.iterdir():
        if entry.name == LOCK:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (d / LOCK).unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # a run that took the lock meanwhile made a new lock file: its dir now
        d.rmdir()


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
    from filelock import Timeout

    out = Cleaned()
    for d in dirs:
        why = _skip_reason(d)
        if why:
            out.notes.append(why)
            continue
        size = dir_size(d)
        lk = file_lock(d)
        try:
            lk.acquire(timeout=0)
        except Timeout:
            out.notes.append(f"{d} is in use by a running tritonbuild (its lock is held): left alone")
            continue
        except OSError as exc:
            out.failed.append(f"{d}: {exc.strerror or exc}")
            continue
        try:
            if not dry_run:
                _remove(d)
            out.removed.append(d)
            out.freed += size
        except OSError as exc:
            out.failed.append(f"{exc.filename or d}: {exc.strerror or exc}")
        finally:
            lk.release()
    return out
