"""What an earlier run left working in a build dir: the process groups it recorded in the lock dir while it held
the lock (``tritonbuild.system.proc.record_groups_in``). The next run that takes the lock stops those still alive there
before it starts, so two runs never compile the same units side by side (edge: reads /proc, sends signals)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from tritonbuild.system import proc

RECORD = ".tritonbuild.pgid"


def _in_dir(pid: int, root: Path) -> bool:
    """Whether process ``pid`` works in ``root``: its current dir is inside it, or its command line names it."""
    with contextlib.suppress(OSError):
        if Path(os.readlink(f"/proc/{pid}/cwd")).is_relative_to(root):
            return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except OSError:
        return False
    return any(str(root) in a for a in argv)


def recorded(root: Path) -> tuple[int | None, list[int]]:
    """The pid and process groups the record in ``root`` names; nothing for a missing or malformed record."""
    try:
        data = json.loads((root / RECORD).read_text())
        pid = int(data["pid"])
        groups = [int(g) for g in data["groups"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None, []
    return pid, groups


def stop_stale(root: Path) -> list[str]:
    """Stop the recorded groups (each the session of a child, with Ninja's command groups) that still have
    processes working in ``root`` (SIGTERM, then SIGKILL after
    ``proc.GRACE`` seconds); the caller holds ``root``'s lock, so their run is gone. Returns what was stopped."""
    real = root.resolve()
    pid, groups = recorded(root)
    notes = []
    ours = {os.getpgrp(), os.getpid(), os.getsid(0)}
    for pgid in groups:
        if pgid <= 1 or pgid in ours:  # a record is only a file in the build dir: never our own group or init's
            continue
        members = [m for m in proc.session_members(pgid) if m != os.getpid() and _in_dir(m, real)]
        if members and proc.stop_session(pgid):
            notes.append(f"stopped {len(members)} process(es) (process group {pgid} and its session, pids "
                         f"{', '.join(map(str, members[:8]))}) that an earlier tritonbuild run (pid {pid}) left "
                         f"working in {root}")
    (root / RECORD).unlink(missing_ok=True)
    return notes
