"""No-op builds republish the previous wheel instead of configuring, installing and re-zipping it (edge: files, ninja).

A wheel is a function of the plan, the build outputs and the files the install step copies from the source
(the Python packages of the tree, its backends and plugins, staged NVIDIA files, the staging dir). After each
successful build, ``remember`` keeps a hard link to the wheel in the build dir with a digest of those inputs:
the plan's identity (``plan.identity``), every input file's path, size and mtime, and ``.ninja_log`` (ninja appends
a line for every command it runs, so an unchanged log means no output was rebuilt since). The next build first asks
ninja for a dry run: with no work to do and the same digest, the wheel would be byte-identical, so it is published
again as it is. Anything else (an edit, a changed plan, a missing wheel) takes the full path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tritonbuild.execute.staging import cmake_build_dir, make_program, staging_dir
from tritonbuild.plan import Plan, identity, identity_dict
from tritonbuild.system import proc
from tritonbuild.system.fileutil import place

STATE = "last-wheel.json"
_SKIP_DIRS = {"__pycache__", ".git", "build", ".pytest_cache"}


def input_roots(plan: Plan) -> list[Path]:
    """Where the install step reads files that ninja does not track: the Python packages and backend dirs of the
    source and plugins, the staged NVIDIA files and the staging dir (pyproject, LICENSE)."""
    root = Path(plan.cmake.build_dir)
    roots = [Path(plan.source.root) / "python", *(Path(b.path) for b in plan.backends),
             root / "tritonbuild-nvidia", staging_dir(plan)]
    return sorted({p for p in roots if p.exists()})


def _files(roots: Iterable[Path]) -> Iterable[tuple[str, int, int]]:
    todo = [str(r) for r in reversed(list(roots))]
    while todo:
        with os.scandir(todo.pop()) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in reversed(entries):
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in _SKIP_DIRS:
                    todo.append(entry.path)
                continue
            if entry.name == "compile_commands.json" and entry.is_symlink():
                continue  # develop's (or build --compile-commands') link for editors: no input of the wheel
            try:
                st = entry.stat()
            except OSError:
                continue
            yield entry.path, st.st_size, st.st_mtime_ns


def _plan_hash(plan: Plan) -> str:
    """The plan's identity without the checkouts' dirty flags: the first edit after a commit changes only what
    ``build_info.json`` says (written anew by every run, installed with the rest), so a quick rebuild still
    applies; republishing (``digest``) keeps them, since the wheel then differs."""
    data = identity_dict(plan)
    data["source"].pop("dirty", None)
    for backend in data.get("backends") or ():
        backend.pop("dirty", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def digest(plan: Plan) -> str:
    """The inputs of the wheel besides what ninja tracks, as one sha256 (the plan by its ``identity``: the same
    whether a part was downloaded by this build or found in the cache)."""
    h = hashlib.sha256(identity(plan).encode())
    log = cmake_build_dir(plan) / ".ninja_log"
    for path, size, mtime in _files(input_roots(plan)):
        h.update(f"{path}\0{size}\0{mtime}\n".encode())
    if log.is_file():
        st = log.stat()
        h.update(f"ninja_log\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def ninja_idle(plan: Plan, env: Mapping[str, str]) -> bool:
    """Whether ninja has nothing to do for the plan's targets (a dry run: it changes nothing)."""
    build = cmake_build_dir(plan)
    ninja = make_program(build)
    if not ninja or not (build / "build.ninja").is_file():
        return False
    res = proc.run([ninja, "-C", str(build), "-n", *plan.cmake.build_targets], env=env, timeout=300)
    return res.ok and "ninja: no work to do" in res.stdout


def _kept(plan: Plan) -> Path:
    return Path(plan.cmake.build_dir) / "last-wheel"


def remember(plan: Plan, wheel: Path, record: Mapping[str, object]) -> None:
    """After a successful build: keep the wheel (a hard link when the build dir shares its file system) and
    the digest it was built from. ``record`` is what the summary needs again (timings aside)."""
    kept = _kept(plan)
    shutil.rmtree(kept, ignore_errors=True)
    kept.mkdir(parents=True)
    copy = place(wheel, kept)
    st = copy.stat()
    state = {"digest": digest(plan), "plan": _plan_hash(plan), "wheel": copy.name,
             "size": st.st_size, "mtime_ns": st.st_mtime_ns, "record": dict(record)}
    (Path(plan.cmake.build_dir) / STATE).write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")


def forget(plan: Plan) -> None:
    """A build is under way: the kept wheel may no longer be republished as is (its digest goes), but it stays
    the base a quick rebuild reuses members from, also after this build fails."""
    path = Path(plan.cmake.build_dir) / STATE
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        path.unlink(missing_ok=True)
        return
    state.pop("digest", None)
    path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n")


def _state(plan: Plan) -> tuple[Path, dict[str, Any]] | None:
    """The kept wheel and the state it was kept with, when the wheel is still intact."""
    try:
        state = json.loads((Path(plan.cmake.build_dir) / STATE).read_text())
        copy = _kept(plan) / str(state.get("wheel", ""))
        st = copy.stat()
    except (OSError, ValueError):
        return None
    if (st.st_size, st.st_mtime_ns) != (state.get("size"), state.get("mtime_ns")):
        return None  # changed in place since (it is a hard link to the published wheel)
    return copy, state


def previous(plan: Plan, env: Mapping[str, str]) -> tuple[Path, dict[str, object]] | None:
    """The kept wheel and its record when this build would make the same wheel again; None otherwise."""
    found = _state(plan)
    if found is None or found[1].get("digest") != digest(plan) or not ninja_idle(plan, env):
        return None
    return found[0], dict(found[1].get("record") or {})


def last(plan: Plan) -> Path | None:
    """The kept wheel when it was built from this same plan (an edit since is fine): what a quick rebuild
    reuses members and metadata from."""
    found = _state(plan)
    if found is None or found[1].get("plan") != _plan_hash(plan):
        return None
    return found[0]


def publish_again(copy: Path, out_dir: Path) -> Path:
    """Put the kept wheel into ``out_dir``: nothing to do when the file there is the same one (same inode, or a
    copy with the same size and mtime); else a hard link or a copy, renamed into place (``fileutil.place``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / copy.name
    if final.exists():
        a, b = final.stat(), copy.stat()
        if (a.st_ino, a.st_dev) == (b.st_ino, b.st_dev) or (a.st_size, a.st_mtime_ns) == (b.st_size, b.st_mtime_ns):
            return final
    return place(copy, out_dir)
