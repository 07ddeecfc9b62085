"""``tritonbuild backends [--check] [--json]``: the backends a source can build, and whether each fits it."""

from __future__ import annotations

import click

from tritonbuild.cli.options import cache_dir_option, request_of


@click.command()
@click.option("--source", "-s", help="Triton source (default: the current directory).")
@click.option("--ref", help="git ref when --source is a URL.")
@click.option("--plugin-dir", "plugin_dirs", multiple=True, help="External plugin directory (repeatable).")
@cache_dir_option("Cache root.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--check", is_flag=True, help="Check each backend against the source's backend interface and "
              "print a verdict; exit 1 when one will fail.")
def backends(source: str | None, ref: str | None, plugin_dirs: tuple[str, ...], cache_dir: str | None,
             as_json: bool, check: bool) -> int:
    """List the backends that can be built from a source (and plugins); --check: will they work with it?"""
    from tritonbuild import jsonout
    from tritonbuild.gather.request import survey_backends
    from tritonbuild.printable import printable
    from tritonbuild.report import render

    req = request_of({"source": source, "ref": ref, "plugin_dirs": plugin_dirs, "cache_dir": cache_dir})
    survey = survey_backends(req, check=check)
    info, api, warnings = survey.source, survey.api, survey.warnings
    rows = render.backends_rows(info, survey.plugins)
    if as_json:
        failing = 1 if any(a.verdict == "will fail" for a in api.values()) else 0
        click.echo(jsonout.dumps("backends", {
            "source": info.root, "generation": info.generation, "tuple_limit": info.tuple_limit,
            "proton": info.has_proton, "proton_in_tuple": info.proton_in_tuple, "warnings": list(warnings),
            "backends": [{"name": n, "origin": o, "path": p, "flags": f,
                          **({"api": api[p].to_dict()} if p in api else {})} for n, o, p, f in rows]}, failing))
        return failing
    from rich.table import Table

    out = render.console()
    table = Table(title=f"backends of {printable(info.root)} ({info.generation}, tuple limit {info.tuple_limit})",
                  title_justify="left")
    for col in ("name", "origin", "path", "flags"):
        table.add_column(col)
    for name, origin, path, flags in rows:
        table.add_row(name, origin, printable(path), flags)
    out.print(table)
    if info.has_proton:
        out.print(f"proton: present (in the backends tuple: {info.proton_in_tuple})")
    for w in warnings:
        out.print(f"[yellow]warning:[/yellow] {w}")
    if check:
        render.print_api(api, {p: n for n, _, p, _ in rows}, out)
        return 1 if any(a.verdict == "will fail" for a in api.values()) else 0
    return 0
