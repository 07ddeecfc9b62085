"""``recipes list`` and ``recipes show``: the named build recipes shipped with tritonbuild."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def recipes() -> None:
    """Named build recipes (recipes/*.toml)."""


@recipes.command(name="list")
def recipes_list() -> None:
    """List the recipes shipped with tritonbuild."""
    from tritonbuild.settings import recipes as rec
    from tritonbuild.system.paths import recipes_dir

    for name in rec.names_available():
        r = rec.read(recipes_dir() / f"{name}.toml")
        click.echo(f"{name:12} {r.description or ''}")


@recipes.command(name="show")
@click.argument("name")
def recipes_show(name: str) -> None:
    """Print a recipe (a name or a path) after validating it."""
    from tritonbuild.settings import recipes as rec

    path = rec.find(name, Path.cwd())
    rec.read(path)
    click.echo(f"# {path}")
    click.echo(path.read_text().rstrip())
