"""The rich console every message goes through, and the ``Reporter`` it is: markup lives here and only here, and
every text a stage hands over (a path, a commit subject, a compiler's line) is escaped before it meets markup, so
``[red]x[/red]`` from a hostile name prints as written. Control characters are escaped too (``printable_text``),
so nothing quoted can send the terminal escape sequences."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from tritonbuild.errors import StdoutClosed
from tritonbuild.printable import printable_text
from tritonbuild.reporter import NoBar, ProgressBar, log_progress, shows

# The colour of each topic's label; a topic not named here is cyan.
TOPIC_STYLE = {"warning": "yellow", "error": "red"}


class _Bar:
    def __init__(self, bar: Any, task: Any) -> None:
        self.bar, self.task = bar, task

    def update(self, done: int, total: int | None = None, description: str | None = None) -> None:
        extra = {"description": escape(description)} if description is not None else {}
        self.bar.update(self.task, completed=done, total=total, **extra)


class SafeConsole(Console):
    """A rich Console that escapes control characters in every text it renders (a message, a table cell, a row)
    and, piped, lays a table out as its columns (no box, no stretching, each row's last cell unpadded); it is also
    the ``Reporter`` the CLI hands the stages. ``verbosity`` (``render.console`` sets it) says which messages it
    shows (``reporter.shows``); what is printed directly (a plan, a summary table) is the command's to choose."""

    verbosity = 0

    def on_broken_pipe(self) -> None:
        """A closed stdout (``plan | head -1``) ends the run quietly with 141 (``cli.main``), not rich's exit 1."""
        self.quiet = True
        raise StdoutClosed

    def render_str(self, text: str, **kwargs: Any) -> Any:
        return super().render_str(printable_text(text), **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if objects and all(isinstance(o, str) for o in objects):
            # a line of text (a message, a row, a command to copy) is one line the terminal wraps itself: rich would
            # break it at spaces, pad each break with spaces and put a newline inside a path or a command
            kwargs.setdefault("soft_wrap", True)
        if not self.is_terminal:
            for table in (o for o in objects if isinstance(o, Table)):
                # stretched to PIPE_WIDTH it would be all padding, and boxed, every row would be padded to the
                # longest cell: piped, a table is its columns, each row's last one unpadded
                table.expand, table.box, table.pad_edge = False, None, False
        elif any(isinstance(o, Table) and not fits(self, o) for o in objects):
            # too narrow a terminal: a table would fold a path or a hash mid-word; as records, each value is
            # one line that the terminal wraps itself, so it is copied whole
            for o in objects:
                if isinstance(o, Table) and not fits(self, o):
                    for line in records(o):
                        super().print(line, soft_wrap=True, highlight=False)
                else:
                    super().print(o, **kwargs)
            return
        super().print(*objects, **kwargs)

    def note(self, text: str, topic: str = "note") -> None:
        if shows("note", self.verbosity):
            say(self, topic, text, TOPIC_STYLE.get(topic, "cyan"))

    def warn(self, text: str, topic: str = "warning") -> None:
        if shows("warn", self.verbosity):
            say(self, topic, text, "yellow")

    def step(self, text: str) -> None:
        if shows("step", self.verbosity):
            self.print(escape(text), highlight=False)

    def plain(self, text: str) -> None:
        if shows("plain", self.verbosity):
            self.print(escape(text), soft_wrap=True, highlight=False)

    def result(self, text: str) -> None:
        if shows("result", self.verbosity):
            self.print(escape(text), soft_wrap=True, highlight=False)

    def detail(self, text: str, kind: Literal["command", "output"] = "command") -> None:
        if shows(kind, self.verbosity):
            self.print(escape(text), soft_wrap=True, highlight=False)

    @contextmanager
    def progress(self, label: str, *, transfer: bool = False) -> Iterator[ProgressBar]:
        if not shows("progress", self.verbosity):
            yield NoBar()
            return
        with progress_on(self, label, transfer=transfer) as bar:
            yield bar


def fits(console: Console, table: Table) -> bool:
    """Whether ``table`` lays out at ``console``'s width without folding or cutting any cell."""
    from rich.measure import Measurement

    wide = table.expand
    table.expand = False
    try:
        return Measurement.get(console, console.options.update_width(1 << 20), table).maximum <= console.width
    finally:
        table.expand = wide


def records(table: Table) -> list[Any]:
    """``table`` as lines: its title, then per row ``- first cell`` and ``  header: cell`` for the others (a
    table without headers: ``key: value``). Each line is one value, never folded by rich."""
    columns = table.columns
    rows = list(zip(*(list(c.cells) for c in columns), strict=True))
    lines: list[Any] = [Text(str(table.title).rstrip(), style="bold")] if table.title else []
    for row in rows:
        first, *rest = (_text(value) for value in row)
        if not table.show_header:
            lines.append(Text.assemble(first, ": ", *Text("  ").join(rest).split("\n")))
            continue
        lines.append(Text.assemble("- ", first))
        for column, value in zip(columns[1:], rest, strict=True):
            lines.extend(Text.assemble(f"  {column.header}: " if i == 0 else "    ", part)
                         for i, part in enumerate(value.split("\n")))
    return lines


def _text(value: Any) -> Any:
    """A cell as Text: a string is markup (as rich reads a cell), its control characters escaped first."""
    return value if isinstance(value, Text) else Text.from_markup(printable_text(str(value)))


def say(console: Console, topic: str, text: str, style: str) -> None:
    """``topic: text``, the topic in ``style``, the text as written: one line that the terminal wraps itself (rich
    would break it at spaces and pad the breaks: a command or path in it copied with a newline inside)."""
    console.print(f"[{style}]{escape(topic)}:[/{style}] {escape(text)}", highlight=False, soft_wrap=True)


@contextmanager
def progress_on(console: Console, label: str, *, transfer: bool = False) -> Iterator[ProgressBar]:
    """A transient bar on ``console`` for one task: bytes with speed when ``transfer``, done of total with elapsed
    time and an estimate otherwise; off a terminal, plain log lines (``LogBar``) instead."""
    if not console.is_terminal:
        with log_progress(lambda line: console.print(escape(printable_text(line)), highlight=False, soft_wrap=True),
                          label, transfer=transfer) as log_bar:
            yield log_bar
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns: tuple[ProgressColumn, ...] = (
        (BarColumn(), DownloadColumn(), TransferSpeedColumn()) if transfer else
        (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
         TextColumn("eta"), TimeRemainingColumn()))
    with Progress(*columns, console=console, transient=True) as bar:
        yield _Bar(bar, bar.add_task(escape(label), total=None))

