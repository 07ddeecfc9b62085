"""``tritonbuild example DEST``: the example tree (and the SPIR-V ABI dep, and optionally a plugin) written into a
new or empty directory that is not itself a link; what a failed write put there is removed (edge: writes files)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tritonbuild import example as ex
from tritonbuild.errors import UserError


def write_into(dest: str, generation: str, with_plugin: bool, say: Callable[[str], None]) -> Path:
    """Write the example into ``dest`` (made when missing), saying a line per tree written; its resolved path.
    An empty ``dest`` (which would mean the current directory), one that is itself a link (the dirs above it are
    the user's to lay out), a non-empty dir or a write that fails is refused (exit 2), with what was written of it
    removed."""
    if not dest.strip():
        raise UserError(f"DEST {dest!r} is empty, which would mean the current directory: name a new directory "
                        "(tritonbuild example ./example).")
    given = Path(dest)
    try:
        linked = given.is_symlink()
    except OSError as exc:  # a parent this user may not search
        raise UserError(f"Cannot write the example into {given}: {_why(exc)}. Pick a directory you can write "
                        "to.") from None
    if linked:
        raise UserError(f"{given} is a link (to {os.readlink(given)}); tritonbuild writes the example only into a "
                        "real directory, never through a link. Pick a new directory.")
    root = given.resolve()
    existed = True  # until known otherwise: nothing is undone
    try:
        existed = root.exists()
        if existed and any(root.iterdir()):
            raise UserError(f"{root} exists and is not empty; tritonbuild will not write into it. Pick a new "
                            "directory.")
        _write(root, generation, with_plugin, say)
    except OSError as exc:
        _undo(root, existed)
        raise UserError(f"Cannot write the example into {root}: {_why(exc)}. Pick a directory you can write to; "
                        "what was written of it has been removed.") from None
    return root


def _write(root: Path, generation: str, with_plugin: bool, say: Callable[[str], None]) -> None:
    ex.write_tree(root / "triton", generation=generation)
    ex.write_spirv_abi(root / "spirv-kernel-abi")
    say(f"wrote {root / 'triton'}")
    say(f"wrote {root / 'spirv-kernel-abi'} (what the spirv backend downloads at configure time; "
        f"offline: --dep spirv-kernel-abi={root / 'spirv-kernel-abi'})")
    if with_plugin:
        ex.write_plugin(root / "triton-shared", "triton_shared")
        say(f"wrote {root / 'triton-shared'} (plugin 'triton_shared')")


def _why(exc: OSError) -> str:
    """An OSError in a few words; copytree's shutil.Error holds a list of (src, dst, why): the first one."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        _src, dst, why = exc.args[0][0]
        return f"{str(why).split(']', 1)[-1].split(':', 1)[0].strip()} ({dst})"
    return f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc.strerror or exc)


def _undo(root: Path, existed: bool) -> None:
    """Remove what a failed write wrote: the dir it made, or what it put into the empty dir it was given."""
    if not existed:
        shutil.rmtree(root, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
