"""``verify`` and ``compare``: checks of built wheels, ours or anyone's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


@click.command()
@click.argument("wheels", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--no-import", is_flag=True, help="Skip the fresh-venv import test.")
@click.option("--python", "pythons", multiple=True,
              help="Interpreter for the import test, repeatable: each wheel is imported by the one of its tag "
                   "(default: this one when its tag fits, else one of that version found as --python 3.12 would).")
@click.option("--compile", "compile_check", is_flag=True,
              help="Also compile the kernel corpus (matmul, reduction, softmax, ...) for the wheel's backends.")
@click.option("--compile-timeout", type=click.IntRange(min=1), default=120, show_default=True,
              help="Seconds one kernel may take before it counts as a hang.")
def verify(wheels: tuple[str, ...], no_import: bool, pythons: tuple[str, ...], compile_check: bool,
           compile_timeout: int) -> None:
    """Check wheels: RECORD hashes, backends against its provenance, an import in a fresh venv, and with
    --compile real kernels compiled through it (any wheel: yours or the official one). Several wheels (a
    matrix) are each checked with the interpreter of their tag."""
    from tritonbuild.report import render
    from tritonbuild.wheel import verify as ver

    if compile_check and no_import:
        raise click.UsageError("--compile needs the fresh-venv import (drop --no-import).")
    out, failed = render.console(), False
    for wheel in wheels:
        python = ver.interpreter_for(Path(wheel), pythons) if not no_import else None
        checks = ver.verify(Path(wheel), python=python, import_test=not no_import,
                            compile_timeout=compile_timeout if compile_check else None)
        if len(wheels) > 1:
            out.print(f"[bold]{Path(wheel).name}[/bold]" + (f" (with {python})" if python else ""))
        for name, ok, detail in checks:
            out.print(f"{'[green]ok[/green]  ' if ok else '[red]FAIL[/red]'} {name}: {detail}")
        failed = failed or not all(ok for _, ok, _ in checks)
    if failed:
        sys.exit(1)


@click.command()
@click.argument("wheels", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--allow", "allow", type=click.Path(exists=True, dir_okay=False),
              help="Accepted differences: lines of '<kind> <glob>  # reason'.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON (a list for several pairs).")
def compare(wheels: tuple[str, ...], allow: str | None, as_json: bool) -> None:
    """Compare wheels in pairs, A B [A2 B2 ...] (yours and the official one, per Python of a matrix): files,
    metadata, entry points, backends, ELF needs.

    Exit code 1 when a difference is not accepted by --allow.
    """
    from tritonbuild.wheel import compare as cmp

    if len(wheels) % 2:
        raise click.UsageError(f"compare takes wheels in pairs (A B [A2 B2 ...]); {len(wheels)} were given.")
    results = [cmp.compare(Path(a), Path(b), Path(allow) if allow else None)
               for a, b in zip(wheels[::2], wheels[1::2], strict=True)]
    if as_json:
        click.echo(json.dumps(results[0] if len(results) == 1 else results, indent=2, sort_keys=True))
    else:
        from tritonbuild.report import compare as report_compare

        for result in results:
            report_compare.print_compare(result)
    if any(r["unaccepted"] for r in results):
        sys.exit(1)
