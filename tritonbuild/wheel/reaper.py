"""Running a wheel's own code with a time limit, and stopping everything it starts (edge): ``verify``'s import.

``run`` starts ``python -m tritonbuild.wheel.reaper`` (through ``tritonbuild.system.proc``), which first points its own
stdin at /dev/null and its stdout and stderr at files in a scratch dir, so no process the wheel starts can hold a
pipe tritonbuild waits on; then becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``: a process that leaves its
parent, even after ``setsid`` and a double fork, is adopted by the reaper instead of by init) and runs the program
for at most the given seconds. Whatever way it ends (the program exits or times out, or SIGTERM reaches the reaper:
tritonbuild's death signal), the reaper then kills every process left under it, adopted orphans included, and
writes how it went to a status file. What it cannot stop: a process that escapes its process tree altogether (a
daemon started through systemd or another service, over D-Bus, ssh or a socket), see docs/security.md.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.system import proc

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
MAX_WRITTEN = 256 << 20  # RLIMIT_FSIZE of the program: its output files (and any file it writes) stay this small
READ_BACK = 64 << 10  # the last bytes of each output file read back
STOP_WITHIN = 10.0  # seconds the reaper spends killing what is left before it gives up


@dataclass(frozen=True)
class Ran:
    """How the program ended: its exit code (124: it timed out), the tail of its stdout and stderr, whether it
    ran past the limit, and how many processes were still running under it at the end and were killed."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    stopped: int

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


def argv(seconds: float, status: str = "-") -> list[str]:
    """The reaper's own command line for a program whose output the caller reads as it comes (a pipe): the
    program keeps the reaper's stdout and stderr, ``main`` returns its exit code, and everything it leaves is
    killed when it ends. tritonbuild is found where this process found it, whatever PYTHONPATH the program gets
    (the reaper's own interpreter runs isolated from it and from site-packages: it needs only the standard
    library)."""
    boot = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r}); "
            "from tritonbuild.wheel.reaper import main; sys.exit(main(sys.argv[1:]))")
    return [sys.executable, "-I", "-S", "-c", boot, str(seconds), "-", "-", status, "--"]  # PYTHON* are the program's


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - READ_BACK))
            return f.read(READ_BACK).decode(errors="replace")
    except OSError:
        return ""


def run(argv: list[str], *, cwd: Path, scratch: Path, timeout: float, env: Mapping[str, str] | None = None) -> Ran:
    """``argv`` run under the reaper for at most ``timeout`` seconds, in ``cwd``, with ``env`` (None: this
    process's), its output kept in ``scratch``; every process it leaves is killed before this returns."""
    out, err, status = scratch / "reaper.out", scratch / "reaper.err", scratch / "reaper.json"
    status.unlink(missing_ok=True)
    me = [sys.executable, "-m", "tritonbuild.wheel.reaper", str(timeout), str(out), str(err), str(status), "--"]
    # a backstop only (the reaper keeps the limit itself); at least proc.LONG, so the reaper leads a session of its
    # own that proc stops with SIGTERM first, which the reaper turns into killing everything under it
    res = proc.run([*me, *argv], cwd=cwd, env=env, timeout=max(timeout + 3 * STOP_WITHIN, proc.LONG))
    try:
        found = json.loads(status.read_text()) if status.is_file() else {}
    except (OSError, ValueError):
        found = {}
    if not isinstance(found, dict) or not isinstance(found.get("returncode"), int):
        why = res.output.splitlines()[-1] if res.output else f"exit code {res.returncode}"
        return Ran(res.returncode or 125, "", f"the reaper did not report ({why})", res.returncode == 124, 0)
    return Ran(found["returncode"], _tail(out), _tail(err), found.get("timed_out") is True,
               int(found.get("stopped", 0)))


# --- the reaper process ----------------------------------------------------------------------------------------

def _children() -> list[int]:
    """This process's children, adopted orphans included, from /proc (zombies too: waitpid reaps them)."""
    me, found = str(os.getpid()), []
    for name in os.listdir("/proc"):
        if not (name.isascii() and name.isdigit()):
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[1] == me:
            found.append(int(name))
    return found


def _reap() -> bool:
    """Reap every child that ended; False when this process has no child left at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def kill_all() -> int:
    """SIGKILL every process under this one until none is left (orphans of a killed one come back here, as this
    is a subreaper), for at most ``STOP_WITHIN`` seconds; how many were killed."""
    killed: set[int] = set()
    until = time.monotonic() + STOP_WITHIN
    while _reap() and time.monotonic() < until:
        for pid in _children():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.02)
    return len(killed)


def _redirect(out: str, err: str, *, through: bool) -> None:
    """stdin from /dev/null, stdout and stderr into new files: the pipes tritonbuild reads are closed here
    (``through``: stdin only; the caller reads the output as it comes)."""
    files = ((1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), (2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC))
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), *(() if through else files)):
        new = os.open(path, flags | os.O_NOFOLLOW if path != os.devnull else flags, 0o600)
        os.dup2(new, fd)
        os.close(new)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM (tritonbuild's death signal, or proc stopping our session, which repeats it): leave through the
    ``finally`` that kills everything, once; a repeat must not cut that short."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(128 + signum)


def main(args: list[str]) -> int:
    if len(args) < 6 or args[4] != "--":
        print("usage: python -m tritonbuild.wheel.reaper SECONDS OUT ERR STATUS -- PROGRAM ARG...", file=sys.stderr)
        return 2
    seconds, out, err, status = float(args[0]), args[1], args[2], args[3]
    through = out == err == "-"  # the caller reads the output as it comes (``argv``)
    _redirect(out, err, through=through)
    signal.signal(signal.SIGTERM, _terminated)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_WRITTEN, MAX_WRITTEN))
    rc, timed_out = 125, False
    try:
        res = proc.run(args[5:], timeout=seconds, capture=False)
        rc, timed_out = res.returncode, res.returncode == 124 and "timed out" in res.stderr
        if rc in (124, 127) and res.stderr:
            print(res.stderr, file=sys.stderr)
    finally:
        stopped = kill_all()
        if status != "-":
            tmp = f"{status}.tmp"
            with open(tmp, "w") as f:
                json.dump({"returncode": rc, "timed_out": timed_out, "stopped": stopped}, f)
            os.replace(tmp, status)
    return rc if through else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
