"""What the edge says to the person running it, by meaning, not by markup: a note, a warning, a step, plain text
and a progress bar. ``Reporter`` is the protocol every stage talks to; the rich implementation (colours, escaping
of text from others) lives in ``tritonbuild.report.console``; ``PlainReporter`` writes unstyled lines to a stream
(tests, pipes)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import IO, Protocol, runtime_checkable


class ProgressBar(Protocol):
    """One task's bar: how much is done of how much (None: not known yet), and optionally what it is doing now."""

    def update(self, done: int, total: int | None = None, description: str | None = None) -> None: ...


@runtime_checkable
class Reporter(Protocol):
    """Where the edge's messages go. Every text given is plain text from anywhere (a path, a commit subject, a
    compiler's line): an implementation shows it as written, never interprets it as markup."""

    @property
    def is_terminal(self) -> bool: ...

    def note(self, text: str, topic: str = "note") -> None:
        """Something worth knowing, under ``topic`` ("note", "nvidia", "llvm", "compile check")."""

    def warn(self, text: str, topic: str = "warning") -> None:
        """Something the person should act on or know went differently than asked."""

    def step(self, text: str) -> None:
        """What is being done now (a command about to run, a fetch)."""

    def plain(self, text: str) -> None:
        """A line as it is, unstyled and unwrapped (a compiler's output, a cause quoted from a log)."""

    def progress(self, label: str, *, transfer: bool = False) -> AbstractContextManager[ProgressBar]:
        """A bar for one task while the context lasts (bytes when ``transfer``, counted steps otherwise); nothing
        when not on a terminal."""


class NoBar:
    def update(self, done: int, total: int | None = None, description: str | None = None) -> None:
        pass


class PlainReporter:
    """A ``Reporter`` writing ``topic: text`` lines to a stream, no colours and no bars: for tests and pipes."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout

    @property
    def is_terminal(self) -> bool:
        return False

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def note(self, text: str, topic: str = "note") -> None:
        self._write(f"{topic}: {text}")

    def warn(self, text: str, topic: str = "warning") -> None:
        self._write(f"{topic}: {text}")

    def step(self, text: str) -> None:
        self._write(text)

    def plain(self, text: str) -> None:
        self._write(text)

    @contextmanager
    def progress(self, label: str, *, transfer: bool = False) -> Iterator[ProgressBar]:
        yield NoBar()
