"""``status`` and ``clean``: what build dirs exist under the cache root (edge: reads and removes them)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any


def dir_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def build_dirs(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if not root.is_dir():
        return rows
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        plan: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            plan = json.loads((d / "plan.json").read_text())
        logs = [p for p in (d / "build.log", d / "dev" / "develop.log") if p.is_file()]
        last = max((p.stat().st_mtime for p in logs), default=None)
        out_dir = Path(plan.get("wheel", {}).get("out_dir", "")) if plan else None
        wheels = []
        if out_dir and out_dir.is_dir():
            name = plan["wheel"]["name"].replace("-", "_")
            wheels = sorted(str(w) for w in out_dir.glob(f"{name}-*.whl"))
        rows.append({
            "key": d.name, "path": str(d), "source": plan.get("source", {}).get("root"),
            "backends": [b["name"] for b in plan.get("backends", [])], "size": dir_size(d),
            "last_build": time.strftime("%Y-%m-%d %H:%M", time.localtime(last)) if last else None,
            "wheels": wheels,
        })
    return rows


def remove_build_dirs(dirs: list[Path], *, dry_run: bool) -> int:
    """Remove build dirs (and the compile_commands.json and library links into them); return the bytes
    freed."""
    freed = 0
    for d in dirs:
        freed += dir_size(d)
        if dry_run:
            continue
        try:
            plan = json.loads((d / "plan.json").read_text())
            roots = [plan["source"]["root"]] + [b["path"] for b in plan["backends"] if b["origin"] == "plugin"]
        except (OSError, ValueError, KeyError):
            roots = []
        links = [Path(root) / "compile_commands.json" for root in roots]
        lib_dir = Path(roots[0], "python", "triton", "_C") if roots else None
        if lib_dir and lib_dir.is_dir():  # develop's library links
            links += [p for p in lib_dir.iterdir() if p.is_symlink()]
        real = d.resolve()
        for link in links:
            if link.is_symlink() and Path(os.readlink(link)).resolve().is_relative_to(real):
                link.unlink()
        shutil.rmtree(d)
    return freed
