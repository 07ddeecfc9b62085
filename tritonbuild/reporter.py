"""What the edge says to the person running it, by meaning, not by markup: a note, a warning, a step, plain text,
a result, a detail (a command line, a compiler's output) and a progress bar, each shown or not by the reporter's
``verbosity`` (``-v``/``-q`` counted as pip counts them: ``shows``). ``Reporter`` is the protocol every stage
talks to; the rich implementation (colours, escaping of text from others) lives in ``tritonbuild.report.console``
(the tests' ``PlainReporter`` writes unstyled lines to a stream)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Literal, Protocol, runtime_checkable


class ProgressBar(Protocol):
    """One task's bar: how much is done of how much (None: not known yet), and optionally what it is doing now."""

    def update(self, done: int, total: int | None = None, description: str | None = None) -> None: ...


# Verbosity: the count of -v less the count of -q (pip's way: ``-v -q`` is 0). Each kind of message has the least
# verbosity it is shown at: -q keeps warnings and the final result lines, -qq nothing of these (an error is never the
# Reporter's: ``cli.main`` prints it whatever the verbosity); -v adds the command lines each stage runs (and the
# log's tail on a failure), -vv every line of the compilers' output.
Kind = Literal["warn", "result", "note", "step", "plain", "progress", "command", "output"]
LEAST: dict[Kind, int] = {"warn": -1, "result": -1, "note": 0, "step": 0, "plain": 0, "progress": 0, "command": 1,
                          "output": 2}
MIN_VERBOSITY, MAX_VERBOSITY = -2, 2  # -qqq says no less than -qq, -vvv no more than -vv


def shows(kind: Kind, verbosity: int) -> bool:
    """Whether a message of ``kind`` is shown at ``verbosity``."""
    return verbosity >= LEAST[kind]


def clamp(verbosity: int) -> int:
    return max(MIN_VERBOSITY, min(MAX_VERBOSITY, verbosity))


@runtime_checkable
class Reporter(Protocol):
    """Where the edge's messages go. Every text given is plain text from anywhere (a path, a commit subject, a
    compiler's line): an implementation shows it as written, never interprets it as markup, and only when its
    ``verbosity`` ``shows`` that kind of message."""

    @property
    def verbosity(self) -> int:
        """-2 (``-qq``) to 2 (``-vv``); 0 by default."""

    def result(self, text: str) -> None:
        """A line of the final result (what was built, whether it is identical): shown down to ``-q``."""

    def detail(self, text: str, kind: Literal["command", "output"] = "command") -> None:
        """A command line a stage runs (shown from ``-v``) or a line of its output (``output``: from ``-vv``)."""

    def note(self, text: str, topic: str = "note") -> None:
        """Something worth knowing, under ``topic`` ("note", "nvidia", "llvm", "compile check")."""

    def warn(self, text: str, topic: str = "warning") -> None:
        """Something the person should act on or know went differently than asked."""

    def step(self, text: str) -> None:
        """What is being done now (a command about to run, a fetch)."""

    def plain(self, text: str) -> None:
        """A line as it is, unstyled and unwrapped (a compiler's output, a cause quoted from a log)."""

    def progress(self, label: str, *, transfer: bool = False) -> AbstractContextManager[ProgressBar]:
        """A bar for one task while the context lasts (bytes when ``transfer``, counted steps otherwise); when not on
        a terminal, a plain line at most every ``LOG_INTERVAL`` seconds (``LogBar``)."""


def silent(text: str) -> None:
    """The one way to say nothing: what a caller hands as a ``log``/``say``/``warn`` callback when it chose that
    the messages are not for the person (a probe's lines, a test), so the choice is visible where it is made (no
    callback defaults to dropping what it is told)."""


class NoBar:
    def update(self, done: int, total: int | None = None, description: str | None = None) -> None:
        pass


LOG_INTERVAL = 30.0  # seconds between two progress lines in a log: under the no-output limits of CI systems


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}" if m >= 60 else f"{m}:{s:02d}"


def _amount(done: int, total: int | None, transfer: bool) -> str:
    if transfer:
        mib = f"{done / 2**20:.1f} MiB"
        return f"{mib} of {total / 2**20:.1f} MiB" if total else mib
    return f"{done}/{total}" if total else str(done)


class LogBar:
    """A progress bar for a log (stdout is not a terminal): a plain line at most every ``interval`` seconds while
    the task runs (``compile 120/213, 4:10 elapsed``), and one when it ends if it ran that long; never a control
    character."""

    def __init__(self, write: Callable[[str], None], label: str, *, transfer: bool = False,
                 interval: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.write, self.label, self.transfer, self.clock = write, label, transfer, clock
        self.interval = LOG_INTERVAL if interval is None else interval
        self.start = self.last = clock()
        self.done: int = 0
        self.total: int | None = None

    def line(self, what: str = "elapsed") -> str:
        elapsed = _clock(self.clock() - self.start)
        return f"{self.label} {_amount(self.done, self.total, self.transfer)}, {elapsed} {what}"

    def update(self, done: int, total: int | None = None, description: str | None = None) -> None:
        self.done, self.total = done, total if total is not None else self.total
        if self.clock() - self.last >= self.interval:
            self.last = self.clock()
            self.write(self.line())

    def finish(self) -> None:
        if self.clock() - self.start >= self.interval:
            self.write(self.line("in all"))


@contextmanager
def log_progress(write: Callable[[str], None], label: str, *, transfer: bool = False) -> Iterator[ProgressBar]:
    """A ``LogBar`` for the duration of the context."""
    bar = LogBar(write, label, transfer=transfer)
    yield bar
    bar.finish()

