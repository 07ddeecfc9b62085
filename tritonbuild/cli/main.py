"""The root command group and ``main``: every command group is registered here with ``add_command``, so
``tritonbuild.cli.main.cli`` alone is the whole command line.

Errors are typed (``tritonbuild.errors``) and mapped to exit codes only here, in ``main``; a command that ends
without an error returns its exit code (None: 0), and ``main`` is the one place the process exits.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

import click

from tritonbuild import __version__, jsonout
from tritonbuild.cli import backends, build, checkllvm, host, llvm, rebuild, recipes, wheels
from tritonbuild.errors import BuildFailed, DiskProblem, EnvironmentProblem, StdoutClosed, TritonBuildError, UserError
from tritonbuild.system.diskspace import is_disk_problem, write_failed
from tritonbuild.system.proc import Terminated

STDOUT_CLOSED = 141  # 128 + SIGPIPE: what a shell reports for a program a closed pipe stopped


class _Root(click.Group):
    """The root group: a write to a closed stdout leaves ``invoke`` as ``StdoutClosed`` (click itself would turn
    it into a silent exit 1, which means "the build failed")."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:  # prints --help and --version
        try:
            return super().make_context(*args, **kwargs)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            raise StdoutClosed from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            raise StdoutClosed from None


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what is still buffered cannot fail again
    ("Exception ignored ... BrokenPipeError"), as Python's documentation of SIGPIPE recommends."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no stdout to point anywhere: nothing is left to flush into it either
        pass


def _closed_streams_to_devnull() -> None:
    """A run started with stdout or stderr closed (``tritonbuild doctor >&-``) has None there: what it says goes to
    /dev/null, as a shell's closed descriptor means, rather than a traceback at the first word."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w"))  # noqa: SIM115 - it lives as long as the process


def _stdout_closed() -> NoReturn:
    """Exit quietly with 141, stdout dropped first."""
    _drop_stdout()
    sys.exit(STDOUT_CLOSED)


@click.group(cls=_Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tritonbuild")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Build Triton into wheels with exactly the backends you ask for."""
    ctx.obj = {"debug": debug}


for command in (build.plan, build.build, build.develop, build.test, build.clean, host.doctor, host.example,
                host.selftest, host.status, wheels.verify, wheels.compare, recipes.recipes, llvm.llvm,
                backends.backends, checkllvm.check_llvm, rebuild.rebuild):
    cli.add_command(command)


def _run(argv: list[str] | None) -> int:
    """The command's exit code (what it returned; None, and click's own exit for --help or --version: theirs),
    with a write that a full, over-quota or read-only disk stopped anywhere no stage caught it said as such (exit
    3: the host's problem), naming the destination and its file system, never a traceback."""
    try:
        code = cli.main(args=argv, prog_name="tritonbuild", standalone_mode=False)
        sys.stdout.flush()  # a closed pipe or a full disk under stdout shows here, not at the interpreter's exit
        return code if isinstance(code, int) else 0
    except OSError as exc:
        if not is_disk_problem(exc):
            raise
        _drop_stdout()  # it may be stdout that failed (> /dev/full): what is still buffered is dropped, quietly
        said = write_failed(exc, Path.cwd()) if exc.filename or exc.filename2 else (
            f"A write failed: {os.strerror(exc.errno or 0)} (a write to an open file, stdout among them, names no "
            "file, so which disk is not known here: check where stdout goes too).")
        raise DiskProblem(f"{said} Free space there, or point --cache-dir or --out at another disk, and run "
                          "again: what was written before is kept.") from None


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def main(argv: list[str] | None = None) -> None:
    """Run the command line. Ctrl-C (click turns it into Abort) prints "Interrupted." and exits 130; SIGTERM
    unwinds the same way (children stopped, locks released), prints "Terminated." and exits 143. A run that asked
    for ``--json`` and fails prints the error envelope on stdout too (``_json_failure``), with the same exit code."""
    args = argv if argv is not None else sys.argv[1:]
    debug = "--debug" in (args[:args.index("--")] if "--" in args else args)  # after --: the test runner's
    signal.signal(signal.SIGTERM, _terminated)
    _closed_streams_to_devnull()
    try:
        code = _run(argv)
    except (StdoutClosed, BrokenPipeError):
        _stdout_closed()
    except (click.exceptions.Abort, KeyboardInterrupt):
        _json_failure(args, "Interrupted.", "interrupted", 130)
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except Terminated:
        _json_failure(args, "Terminated.", "terminated", 143)
        click.echo("Terminated.", err=True)
        sys.exit(143)
    except click.exceptions.NoArgsIsHelpError as exc:  # a group run without a command: its help, as click prints it
        exc.show()
        sys.exit(2)
    except click.ClickException as exc:
        said = usage_paragraph(exc, args)
        _json_failure(args, said, "bad input", 2)
        click.echo(f"error: {said}", err=True)
        sys.exit(2)
    except TritonBuildError as exc:
        _json_failure(args, str(exc), _kind(exc), exc.exit_code, exc.log_path if isinstance(exc, BuildFailed) else None)
        if debug:
            raise
        from rich.markup import escape  # a message quotes input: its [brackets] are text, never markup

        from tritonbuild.report import render

        with contextlib.suppress(OSError, ValueError):  # what the command said comes before its error
            sys.stdout.flush()
        err = render.console(stderr=True)
        err.print(f"[red bold]error:[/red bold] {escape(str(exc))}", soft_wrap=False)
        if isinstance(exc, BuildFailed):
            _say_failure(exc, err, verbosity_of(args))
        sys.exit(exc.exit_code)
    sys.exit(code)


LOG_TAIL_LINES = 200  # -v on a failure: the log's last lines after the error's own
LOG_TAIL_BYTES = 256 << 10  # read from the log's end for them: a compiler's line may be long, a log is huge


def _say_failure(exc: BuildFailed, err: Any, verbosity: int) -> None:
    """A failed build's error tail and its log's path, whatever the verbosity; with -v the log's last lines too."""
    from rich.markup import escape

    if exc.tail:
        err.print(exc.tail, markup=False, highlight=False)
    if exc.log_path and verbosity >= 1 and (tail := _log_tail(Path(exc.log_path))):
        err.print(f"the log's last {len(tail)} lines:", markup=False, highlight=False)
        err.print("\n".join(tail), markup=False, highlight=False)
    if exc.log_path:
        err.print(f"full log: {escape(exc.log_path)}")


def _log_tail(path: Path) -> list[str]:
    """The last ``LOG_TAIL_LINES`` lines of a build log (none when it cannot be read: the error says the rest)."""
    try:
        with path.open("rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
            data = log.read(LOG_TAIL_BYTES)
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()[-LOG_TAIL_LINES:]


USAGE_VALUE_CAP = 200  # characters of one argument that click's message echoes back
_LONG_WORD = re.compile(rf"\S{{{USAGE_VALUE_CAP + 24},}}")  # what no argument spelled out (room for quotes, ...)


def _cut(text: str) -> str:
    return f"{text[:USAGE_VALUE_CAP]}... ({len(text)} characters)"


def usage_paragraph(exc: click.ClickException, args: list[str]) -> str:
    """click's own refusal (a bad value, an unknown option, a missing argument) as one paragraph, as tritonbuild's
    are: its message, where help is, an argument it echoes cut to ``USAGE_VALUE_CAP`` characters (click echoes any
    length back), every control character escaped; not click's usage line, hint and message in three."""
    message = exc.format_message()
    forms = {form for arg in args if len(arg) > USAGE_VALUE_CAP
             for form in (arg, arg.partition("=")[2], repr(arg)[1:-1]) if len(form) > USAGE_VALUE_CAP}
    for form in sorted(forms, key=len, reverse=True):  # the longest first: a value inside --flag=value
        message = message.replace(form, _cut(form))
    message = _LONG_WORD.sub(lambda m: _cut(m[0]), message)
    message = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message).strip()
    if len(message) > 8 * USAGE_VALUE_CAP:  # a value with spaces that no argument spelled out
        message = _cut(message)
    ctx = exc.ctx if isinstance(exc, click.UsageError) else None
    lists = "commands" if ctx is not None and isinstance(ctx.command, click.Group) else "options"
    where = f" (`{ctx.command_path} --help` lists the {lists})" if ctx is not None else ""
    return f"{message.rstrip('.')}{where}."


def _kind(exc: TritonBuildError) -> jsonout.ErrorKind:
    """The error's kind in the JSON envelope: what a script branches on (the exit code says as much, in a number)."""
    from tritonbuild.wheel.zipguard import BadWheel  # only when a run failed: startup stays light

    if isinstance(exc, UserError):
        return "bad input"
    if isinstance(exc, BadWheel):
        return "bad wheel"
    if isinstance(exc, (EnvironmentProblem, DiskProblem)):
        return "host"
    return "build failed" if isinstance(exc, BuildFailed) else "failed"


def json_command(args: list[str]) -> str | None:
    """The command a run invokes (``plan``, ``llvm status``) when it asks for ``--json``, else None: read from the
    arguments as click reads them, without running anything (resilient parsing runs no callback and raises no
    usage error), so that a run refused before its command ran still answers in JSON. The root group's options
    are flags only: the first word that is no option names the command (and in a group, the next one)."""
    found = _given(args, "as_json")
    return found[0] if found is not None and found[1].get("as_json") else None


def verbosity_of(args: list[str]) -> int:
    """The run's -v count less its -q count (``cli.options.verbosity_options``), read as ``json_command`` reads
    --json: 0 for a command without them."""
    found = _given(args, "verbose")
    return int(found[1].get("verbose") or 0) - int(found[1].get("quiet") or 0) if found is not None else 0


def _given(args: list[str], param: str) -> tuple[str, dict[str, Any]] | None:
    """The command ``args`` invoke (``plan``, ``llvm status``) and the values of its options, when it has the option
    ``param``; None otherwise or when its arguments cannot be read."""
    words = args[:args.index("--")] if "--" in args else args
    command: click.Command = cli
    names: list[str] = []
    rest = list(words)
    while isinstance(command, click.Group):
        at = next((i for i, w in enumerate(rest) if not w.startswith("-")), None)
        found = command.get_command(click.Context(command), rest[at]) if at is not None else None
        if at is None or found is None:
            return None
        names.append(rest[at])
        command, rest = found, rest[at + 1:]
    if not any(p.name == param for p in command.params):
        return None
    try:
        ctx = command.make_context(" ".join(names), list(rest), resilient_parsing=True, ignore_unknown_options=True)
    except (click.ClickException, click.exceptions.Exit, ValueError, TypeError):
        return None
    return " ".join(names), ctx.params


def _json_failure(args: list[str], message: str, kind: jsonout.ErrorKind, exit_code: int,
                  log: str | None = None) -> None:
    """Print the error envelope on stdout when the run asked for ``--json`` (stderr still gets the paragraph)."""
    command = json_command(args)
    if command is None:
        return
    with contextlib.suppress(OSError, ValueError):  # a closed stdout: the exit code still says it
        click.echo(jsonout.error(command, message, kind, exit_code, log))
        sys.stdout.flush()
