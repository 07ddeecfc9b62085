"""``build --container IMAGE``: the command line's side (the request's settings, the options typed, the out dir and
the recipe file), handed to ``tritonbuild.execute.container``."""

from __future__ import annotations

import click

from tritonbuild.cli.options import given_options
from tritonbuild.gather.request import Request, settings_of
from tritonbuild.reporter import Reporter
from tritonbuild.settings import recipes


def check_container(req: Request) -> None:
    """``plan --container``: refuse what ``build --container`` refuses (``container.check``), from the settings
    alone, before the plan clones or reaches anything a value names."""
    from tritonbuild.execute import container

    recipe = recipes.load(req.recipe, req.cwd) if req.recipe else (recipes.Recipe(), "recipe")
    s, _cache_dir, _root = settings_of(req, recipe)
    if s.container:
        container.check(s, req.cwd)


def build_in_container(req: Request, ctx: click.Context, console: Reporter) -> int | None:
    """The exit code of the build run inside the container the request asks for (``--container``, its variable or
    the recipe's ``container``); None when it asks for none (an empty value: this host)."""
    from tritonbuild.execute import container

    recipe = recipes.load(req.recipe, req.cwd) if req.recipe else (recipes.Recipe(), "recipe")
    s, cache_dir, _root = settings_of(req, recipe)
    if not s.container:
        return None
    out = (req.cwd / (req.out or recipe[0].out_dir or "dist")).resolve()
    recipe_file = recipes.find(req.recipe, req.cwd).resolve() if req.recipe else None
    return container.build_in_container(s, given_options(ctx), req.env, req.cwd, cache_dir, out,
                                        recipe_file, console)
