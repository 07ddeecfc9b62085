"""``verify`` and ``compare``: checks of built wheels, ours or anyone's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tritonbuild import jsonout
from tritonbuild.cli.options import AsciiInt, environment

if TYPE_CHECKING:
    from tritonbuild.wheel.checks.base import Finding

LABELS = {"ok": "[green]ok[/green]  ", "fail": "[red]FAIL[/red]", "skip": "[yellow]skip[/yellow]",
          "note": "[cyan]note[/cyan]"}


def _existing(paths: tuple[str, ...], what: str) -> list[Path]:
    """The given paths, each checked to be a regular file before any work starts (exit 2 otherwise)."""
    from tritonbuild.errors import UserError
    from tritonbuild.system.fileutil import given_file

    for p in map(Path, paths):
        kind = given_file(p, what, "Give the path of a .whl file.")
        if kind is None:
            raise UserError(f"The {what} {p} does not exist. Give the path of a .whl file.")
        if not kind:
            raise UserError(f"The {what} {p} is not a regular file (a directory?). Give the path of a .whl file.")
    return [Path(p) for p in paths]


@click.command()
@click.argument("wheels", nargs=-1, required=True, type=click.Path())
@click.option("--no-import", is_flag=True, help="Skip the fresh-venv import test.")
@click.option("--python", "pythons", multiple=True,
              help="Interpreter for the import test, repeatable: each wheel is imported by the one of its tag "
                   "(default: this one when its tag fits, else one of that version found as --python 3.12 would).")
@click.option("--compile", "compile_check", is_flag=True,
              help="Also compile the kernel corpus (matmul, reduction, softmax, ...) for the wheel's backends.")
@click.option("--compile-timeout", type=AsciiInt(1), default=120, show_default=True,
              help="Seconds one kernel may take before it counts as a hang.")
@click.option("--wheelhouse", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A dir of wheels the import test's venv installs the wheel's Requires-Dist from (no index; "
                   "fill it with pip download -d DIR NAME...). Without it the wheel is installed alone.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON: one object, a list of wheels, each "
              "with its checks.")
def verify(wheels: tuple[str, ...], no_import: bool, pythons: tuple[str, ...], compile_check: bool,
           compile_timeout: int, wheelhouse: Path | None, as_json: bool) -> int:
    """Check wheels: RECORD hashes, backends against its provenance, an import in a fresh venv, and with
    --compile real kernels compiled through it (any wheel: yours or the official one). Several wheels (a
    matrix) are each checked with the interpreter of their tag. Each check is ok, FAIL, skip (it could not run
    here: the reason) or note; exit 1 on any FAIL, a malformed or hostile wheel included."""
    from rich.markup import escape

    from tritonbuild.printable import printable
    from tritonbuild.report import render

    if compile_check and no_import:
        raise click.UsageError("--compile needs the fresh-venv import (drop --no-import).")
    out, env, done = render.console(stderr=as_json), environment(), []
    _given_pythons(pythons, env)
    for given, wheel in zip(wheels, _existing(wheels, "wheel"), strict=True):
        python, checks = _verify_one(wheel, pythons, env, not no_import, compile_timeout if compile_check else None,
                                     wheelhouse.resolve() if wheelhouse else None)
        done.append({"wheel": given, "python": python, "ok": all(f.status != "fail" for f in checks),
                     "findings": [{"check": f.check, "status": f.status, "text": f.text} for f in checks]})
        if as_json:
            continue
        if len(wheels) > 1:
            out.print(f"[bold]{escape(printable(given))}[/bold]" + (f" (with {escape(python)})" if python else ""))
        for found in checks:
            out.print(f"{LABELS[found.status]} {found.check}: {escape(found.text)}")
    failed = not all(row["ok"] for row in done)
    if as_json:
        click.echo(jsonout.dumps("verify", {"wheels": done}, 1 if failed else 0))
    return 1 if failed else 0


def _given_pythons(pythons: tuple[str, ...], env: dict[str, str]) -> None:
    """Each ``--python`` found (a path that is an executable file, a command on PATH, an installed version) before
    any wheel is read, with --no-import too: a mistyped interpreter is refused (exit 2), not passed over with "ok"."""
    from tritonbuild.gather import pythons as interpreters

    for given in pythons:
        interpreters.find(given, env)


def _verify_one(wheel: Path, pythons: tuple[str, ...], env: dict[str, str], import_test: bool,
                compile_timeout: int | None, wheelhouse: Path | None) -> tuple[str | None, list[Finding]]:
    """The interpreter that imports ``wheel`` (None without the import test) and the wheel's findings."""
    from tritonbuild.wheel import verify as ver
    from tritonbuild.wheel import zipguard
    from tritonbuild.wheel.checks.base import Finding

    try:
        python = ver.interpreter_for(wheel, pythons, env) if import_test else None
    except zipguard.BadWheel as exc:  # a file name that does not parse
        return None, [Finding("wheel", "fail", f"not a readable wheel: {exc}")]
    return python, list(ver.verify(wheel, python=python, import_test=import_test, compile_timeout=compile_timeout,
                                   wheelhouse=wheelhouse))


@click.command()
@click.argument("wheels", nargs=-1, required=True, type=click.Path())
@click.option("--allow", "allow", type=click.Path(),
              help="Accepted differences: lines of '<kind> <glob>  # reason'.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON: one object, a list of pairs.")
def compare(wheels: tuple[str, ...], allow: str | None, as_json: bool) -> int:
    """Compare wheels in pairs, A B [A2 B2 ...] (yours and the official one, per Python of a matrix): files,
    metadata, entry points, backends, ELF needs.

    Exit code 1 when a difference is not accepted by --allow, or a wheel is malformed or hostile (one paragraph
    naming it); 2 for a missing file or a bad allow-list.
    """
    from tritonbuild.wheel import compare as cmp

    if len(wheels) % 2:
        raise click.UsageError(f"compare takes wheels in pairs (A B [A2 B2 ...]); {len(wheels)} were given.")
    paths = _existing(wheels, "wheel")
    rules = cmp.read_allow(Path(allow)) if allow else []  # a bad allow-list fails before any wheel is read
    results = [cmp.compare(a, b, rules=rules) for a, b in zip(paths[::2], paths[1::2], strict=True)]
    if as_json:
        click.echo(jsonout.dumps("compare", {"pairs": results}, 1 if any(r["unaccepted"] for r in results) else 0))
    else:
        from tritonbuild.report import compare as report_compare

        for result in results:
            report_compare.print_compare(result)
    return 1 if any(r["unaccepted"] for r in results) else 0
