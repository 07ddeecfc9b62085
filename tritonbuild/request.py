"""The request: what the user asked for (flags, a recipe, the environment, the working directory), made into a
Plan by the pipeline's first steps: settings (default < recipe < env < CLI) -> gathered facts -> resolved plan.

Every command that builds, plans or inspects goes through ``make_plan``; the command line only collects the
flag values (``tritonbuild.cli.options``) and hands them here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tritonbuild.gather import collect
from tritonbuild.plan import Plan
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.settings import recipes
from tritonbuild.settings.model import SPECS, resolve_settings

# What a request holds besides settings: the recipe, where the cache and the wheels go, the target interpreter.
REQUEST_OPTIONS = ("recipe", "cache_dir", "out", "python")


def flag_settings() -> tuple[str, ...]:
    """The settings that have a command-line flag (``SPECS`` is the one list of them)."""
    return tuple(spec.name for spec in SPECS if spec.flag)


def active_python(env: Mapping[str, str]) -> str:
    """The interpreter a build is for by default: $VIRTUAL_ENV's, else $CONDA_PREFIX's, else this one."""
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if env.get(var):
            candidate = Path(env[var]) / "bin" / "python"
            if candidate.exists():
                return str(candidate)
    return sys.executable


def make_plan(kw: Mapping[str, Any], env: Mapping[str, str] | None = None, cwd: Path | None = None, *,
              editable: bool = False) -> Plan:
    """The plan for flag values ``kw`` (settings by name, plus ``REQUEST_OPTIONS``; None: not given)."""
    env = dict(os.environ) if env is None else dict(env)
    cwd = cwd or Path.cwd()
    recipe, recipe_origin = (recipes.load(str(kw["recipe"]), cwd) if kw.get("recipe")
                             else (recipes.Recipe(), "recipe"))
    s = resolve_settings({k: kw.get(k) for k in flag_settings()}, env, recipe.settings(), recipe_origin)
    python = kw.get("python") or active_python(env)
    cache_dir = kw.get("cache_dir") or recipe.cache_dir
    s = collect.clone_git_plugins(s, env, cache_dir)
    plan = resolve_plan(s, collect.gather(s, env, cwd, cache_dir, python), env, editable=editable)
    out_dir = kw.get("out") or recipe.out_dir
    if out_dir:
        plan = replace(plan, wheel=replace(plan.wheel, out_dir=str((cwd / out_dir).resolve())))
    return plan


def provisioned_plan(kw: Mapping[str, Any], console: Any, *, editable: bool = False) -> Plan:
    """The plan, with its LLVM made available first. If an ``auto`` download fails on the network, say so and
    fall back to the system LLVM (a new plan: a different LLVM is a different build dir)."""
    from tritonbuild.http import NetworkError
    from tritonbuild.llvm import provision

    p = make_plan(kw, editable=editable)
    try:
        provision.ensure(p, console, dict(os.environ))
    except NetworkError as exc:
        if p.settings["llvm"]["value"] != "auto":
            raise
        console.print(f"[yellow]warning:[/yellow] {exc} Falling back to a system LLVM (not the pinned commit).")
        p = make_plan({**kw, "llvm": "system"}, editable=editable)
    return p
