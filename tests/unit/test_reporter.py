"""The Reporter protocol and its implementations: text from others is shown as written (no markup interpreted, no
control characters passed through), each message kind keeps its words, and the CLI's console is a Reporter."""

from __future__ import annotations

import io

import pytest

from tests.helpers import PlainReporter
from tritonbuild.report import render
from tritonbuild.report.console import SafeConsole
from tritonbuild.reporter import Reporter

HOSTILE = "[red]x[/red] [bold]y [link=http://e.invalid]z"


def _safe(buf: io.StringIO, color: bool = False) -> SafeConsole:
    return SafeConsole(file=buf, width=4096, force_terminal=color, color_system="truecolor" if color else None)


def test_the_rich_reporter_prints_markup_in_text_from_others_literally() -> None:
    buf = io.StringIO()
    rep: Reporter = _safe(buf)
    rep.note(HOSTILE)
    rep.note(HOSTILE, topic="nvidia")
    rep.warn(HOSTILE)
    rep.warn(HOSTILE, topic="note")
    rep.step(HOSTILE)
    rep.plain(HOSTILE)
    assert buf.getvalue().splitlines() == [f"note: {HOSTILE}", f"nvidia: {HOSTILE}", f"warning: {HOSTILE}",
                                           f"note: {HOSTILE}", HOSTILE, HOSTILE]


def test_the_rich_reporter_colours_only_its_own_label() -> None:
    buf = io.StringIO()
    _safe(buf, color=True).warn("[red]x[/red]")
    out = buf.getvalue()
    assert "\x1b[33mwarning:\x1b[0m" in out  # the label is yellow
    assert "[red]x[/red]" in out and "\x1b[31m" not in out  # the text's markup is text, not red


def test_control_characters_from_others_never_reach_the_terminal() -> None:
    buf = io.StringIO()
    rep = _safe(buf)
    rep.note("evil\x1b]0;title\x07 name")
    rep.plain("evil\x1b[2J")
    assert "\x1b" not in buf.getvalue() and "\x07" not in buf.getvalue()


def test_the_cli_console_is_a_reporter() -> None:
    assert isinstance(render.console(), Reporter)


def test_the_plain_reporter_writes_topic_lines_and_no_bar() -> None:
    buf = io.StringIO()
    rep = PlainReporter(buf)
    assert isinstance(rep, Reporter)
    rep.note("a [b]", topic="llvm")
    rep.warn("c")
    rep.step("$ ninja")
    with rep.progress("building") as bar:
        bar.update(1, 2, "phase")
    assert buf.getvalue() == "llvm: a [b]\nwarning: c\n$ ninja\n"


def test_a_progress_bar_off_a_terminal_prints_nothing() -> None:
    buf = io.StringIO()
    rep = _safe(buf)
    with rep.progress("[red]building", transfer=False) as bar:
        bar.update(3, 10, "linking")
    with rep.progress("x.tar.gz", transfer=True) as bar:
        bar.update(100, None)
    assert buf.getvalue() == ""


WHEEL = "/home/someone/nightly/dist/triton-3.6.0.dev20260113+gitd8da7c99-cp312-cp312-manylinux_2_28_x86_64.whl"
SHA = "f31f72b5c8a0" + "0123456789abcdef" * 3 + "0123"


def _narrow(width: int) -> tuple[io.StringIO, SafeConsole]:
    buf = io.StringIO()
    return buf, SafeConsole(file=buf, width=width, force_terminal=True, color_system=None)


@pytest.mark.parametrize("width", [40, 60, 80])
def test_a_table_too_wide_for_the_terminal_becomes_records_with_every_path_and_hash_on_one_line(width: int) -> None:
    from rich.table import Table

    buf, con = _narrow(width)
    wheels = Table(title="wheels ", title_justify="left")
    for col in ("wheel", "sha256", "backends"):
        wheels.add_column(col)
    wheels.add_row(WHEEL, SHA, "nvidia, triton_shared\n[hostile]\x1b[31m")
    built = Table(title="built", show_header=False)
    built.add_column()
    built.add_column()
    built.add_row("wheel", WHEEL)
    con.print(wheels)
    con.print(built)
    lines = buf.getvalue().splitlines()
    assert lines[:3] == ["wheels", f"- {WHEEL}", f"  sha256: {SHA}"]
    assert lines[3:5] == ["  backends: nvidia, triton_shared", "    \\x1b[31m"]  # markup kept, escapes escaped
    assert lines[5:] == ["built", f"wheel: {WHEEL}"]


def test_a_table_that_fits_the_terminal_stays_a_table() -> None:
    from rich.table import Table

    buf, con = _narrow(80)
    small = Table(title="dirs")
    small.add_column("key")
    small.add_row("6638c1839")
    con.print(small)
    assert "┃ key" in buf.getvalue() and "│ 6638c1839 │" in buf.getvalue()


def test_a_long_message_at_a_narrow_terminal_is_one_line_without_padding() -> None:
    buf, con = _narrow(60)
    command = f"tritonbuild llvm build --source {WHEEL} --backends 'nvidia;amd'"
    con.warn(f"LLVM 22.1.8 is not the pin; for the pinned LLVM, `{command}` builds it.")
    con.print(f"ok   sbom: {WHEEL} listed with its SHA-256")
    lines = buf.getvalue().splitlines()
    assert lines == [f"warning: LLVM 22.1.8 is not the pin; for the pinned LLVM, `{command}` builds it.",
                     f"ok   sbom: {WHEEL} listed with its SHA-256"]


def _say_all(rep: Reporter) -> None:
    rep.warn("w")
    rep.result("r")
    rep.note("n")
    rep.step("s")
    rep.plain("p")
    rep.detail("$ cmd")
    rep.detail("compiler line", "output")


# What each verbosity shows, as pip counts -v and -q: -qq nothing of these (errors are cli.main's), -q warnings and
# results, the default every message but the details, -v the command lines, -vv the compilers' output too.
LEVELS = {-2: [], -1: ["warning: w", "r"], 0: ["warning: w", "r", "note: n", "s", "p"],
          1: ["warning: w", "r", "note: n", "s", "p", "$ cmd"],
          2: ["warning: w", "r", "note: n", "s", "p", "$ cmd", "compiler line"]}


@pytest.mark.parametrize("verbosity", sorted(LEVELS))
def test_each_verbosity_shows_its_messages(verbosity: int, capsys: pytest.CaptureFixture[str]) -> None:
    buf = io.StringIO()
    _say_all(PlainReporter(buf, verbosity=verbosity))
    assert buf.getvalue().splitlines() == LEVELS[verbosity]
    made = render.console(verbosity=verbosity)  # the CLI's console (stdout is captured: piped)
    assert made.verbosity == verbosity and made.quiet == (verbosity == -2)
    _say_all(made)
    made.print("summary table")  # what a command prints directly: shown unless -qq
    assert capsys.readouterr().out.splitlines() == LEVELS[verbosity] + (["summary table"] if verbosity > -2 else [])


def test_verbosity_beyond_the_levels_is_the_last_level_and_quiet_drops_progress_lines() -> None:
    buf = io.StringIO()
    assert PlainReporter(buf, verbosity=-5).verbosity == -2 and PlainReporter(buf, verbosity=7).verbosity == 2
    quiet = PlainReporter(buf, verbosity=-1)
    with quiet.progress("compile") as bar:
        bar.update(1, 2)
    assert buf.getvalue() == ""
    assert render.console(verbosity=-1).progress("compile").__enter__().__class__.__name__ == "NoBar"


def test_v_and_q_are_counted_as_pip_counts_them() -> None:
    from tritonbuild.cli.main import json_command, verbosity_of

    assert verbosity_of(["build", "-vv"]) == 2 and verbosity_of(["build", "-v", "-q"]) == 0
    assert verbosity_of(["develop", "-qq", "--quiet"]) == -3 and verbosity_of(["rebuild", "p.json", "-v"]) == 1
    assert verbosity_of(["plan", "-q"]) == 0  # plan takes neither: nothing read
    assert json_command(["build", "-q", "--json"]) == "build"
