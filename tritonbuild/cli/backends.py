"""``tritonbuild backends [--check] [--json]``: the backends a source can build, and whether each fits it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click


@click.command()
@click.option("--source", "-s", help="Triton source (default: the current directory).")
@click.option("--ref", help="git ref when --source is a URL.")
@click.option("--plugin-dir", "plugin_dirs", multiple=True, help="External plugin directory (repeatable).")
@click.option("--cache-dir", help="Cache root.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--check", is_flag=True, help="Check each backend against the source's backend interface and "
              "print a verdict; exit 1 when one will fail.")
def backends(source: str | None, ref: str | None, plugin_dirs: tuple[str, ...], cache_dir: str | None,
             as_json: bool, check: bool) -> None:
    """List the backends that can be built from a source (and plugins); --check: will they work with it?"""
    import json

    from tritonbuild import paths
    from tritonbuild.gather import collect, git
    from tritonbuild.gather import source as src_mod
    from tritonbuild.gather.plugins import read_all
    from tritonbuild.report import render
    from tritonbuild.resolve import plugins
    from tritonbuild.settings import model

    env = dict(os.environ)
    resolved = model.resolve_settings({"source": source, "ref": ref, "plugin_dirs": plugin_dirs}, env)
    dirs, cwd = model.Settings.of(resolved).plugin_dirs, Path.cwd()
    root = collect.source_root(resolved, cwd, paths.usable_cache_root(env, cache_dir))
    info = src_mod.inspect_source(root, git.git_state(root))
    found, _notes, warnings = plugins.resolve_plugins(
        [(p, "plugin") for p in dirs], files=read_all(dirs, cwd),
        in_tree=info.backend_names,
        source_commit=info.git.commit if info.git else None,
        git_states=collect.plugin_git_states(dirs, cwd))
    rows = render.backends_rows(info, found)
    api = collect.compat_facts(root, info, [Path(p.path) for p in found],
                               collect.plugin_git_states(dirs, cwd)) if check else {}
    if as_json:
        click.echo(json.dumps({
            "source": info.root, "generation": info.generation, "tuple_limit": info.tuple_limit,
            "proton": info.has_proton, "proton_in_tuple": info.proton_in_tuple,
            "backends": [{"name": n, "origin": o, "path": p, "flags": f,
                          **({"api": api[p].to_dict()} if p in api else {})} for n, o, p, f in rows]}, indent=2))
        sys.exit(1 if any(a.verdict == "will fail" for a in api.values()) else 0)
    from rich.table import Table

    out = render.console()
    table = Table(title=f"backends of {info.root} ({info.generation}, tuple limit {info.tuple_limit})",
                  title_justify="left")
    for col in ("name", "origin", "path", "flags"):
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    out.print(table)
    if info.has_proton:
        out.print(f"proton: present (in the backends tuple: {info.proton_in_tuple})")
    for w in warnings:
        out.print(f"[yellow]warning:[/yellow] {w}")
    if check:
        render.print_api(api, {p: n for n, _, p, _ in rows}, out)
        sys.exit(1 if any(a.verdict == "will fail" for a in api.values()) else 0)
