"""The request: what the user asked for (flags, a recipe, the environment, the working directory), made into a
Plan by the pipeline's first steps: settings (default < recipe < env < CLI) -> gathered facts -> resolved plan.

Every command that builds, plans or inspects goes through ``make_plan``; the command line only collects the
flag values (``tritonbuild.cli.options``) and hands them here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from tritonbuild import paths
from tritonbuild.errors import UserError
from tritonbuild.gather import collect, host, pythons
from tritonbuild.plan import Plan
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.settings import recipes
from tritonbuild.settings.model import SPECS, Resolved, resolve_settings

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


def _recipe(kw: Mapping[str, Any], cwd: Path) -> tuple[recipes.Recipe, str]:
    return recipes.load(str(kw["recipe"]), cwd) if kw.get("recipe") else (recipes.Recipe(), "recipe")


def target_pythons(kw: Mapping[str, Any], env: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[str]:
    """The interpreters the request builds for (``--python``, repeatable, else the recipe's ``pythons``, else the
    active one), each found and checked up front: one that cannot build is refused with the fix."""
    env = dict(os.environ) if env is None else dict(env)
    given = kw.get("python") or _recipe(kw, cwd or Path.cwd())[0].pythons or ()
    if isinstance(given, str):
        given = (given,)
    if not given:
        return [active_python(env)]
    found: list[str] = []
    for spec in given:
        path = pythons.find(str(spec), env, cwd or Path.cwd())
        pythons.probe(path)
        if os.path.realpath(path) not in {os.path.realpath(p) for p in found}:
            found.append(path)
    return found


def make_plans(kw: Mapping[str, Any], env: Mapping[str, str] | None = None, cwd: Path | None = None, *,
               editable: bool = False) -> list[Plan]:
    """One plan per wheel, in the order the interpreters were given. Interpreters one cp312-abi3 wheel serves
    (CPython 3.12+ of a tree with TRITON_STABLE_ABI) share one plan, built with the oldest of them (the limited
    API is 3.12's); the others import that wheel before it is published (``Plan.serves``)."""
    plans = _plans(kw, env, cwd, target_pythons(kw, env, cwd), editable=editable)
    abi3 = sorted((p for p in plans if p.wheel.py_api), key=lambda p: int(p.wheel.python_abi[3:]))
    if len(abi3) < 2:
        return plans
    builder = replace(abi3[0], serves=tuple(p.python for p in abi3[1:]))
    first = next(i for i, p in enumerate(plans) if p.wheel.py_api)
    return [builder if i == first else p for i, p in enumerate(plans) if not p.wheel.py_api or i == first]


def make_plan(kw: Mapping[str, Any], env: Mapping[str, str] | None = None, cwd: Path | None = None, *,
              editable: bool = False, keep_preflight: bool = False) -> Plan:
    """The plan for flag values ``kw`` (settings by name, plus ``REQUEST_OPTIONS``; None: not given) and one
    interpreter (``kw["python"]``: a path, or a one-element list of the command line's ``--python``)."""
    env = dict(os.environ) if env is None else dict(env)
    one = _one_python(kw.get("python"))
    python = pythons.find(one, env, cwd or Path.cwd()) if one else active_python(env)
    return _plans(kw, env, cwd, [python], editable=editable, keep_preflight=keep_preflight)[0]


def _plans(kw: Mapping[str, Any], env: Mapping[str, str] | None, cwd: Path | None, targets: list[str], *,
           editable: bool, keep_preflight: bool = False) -> list[Plan]:
    """A plan per interpreter in ``targets``: the settings and the facts are gathered once (only the host's
    interpreter facts differ between them), then each is resolved."""
    env = dict(os.environ) if env is None else dict(env)
    cwd = cwd or Path.cwd()
    recipe, recipe_origin = _recipe(kw, cwd)
    s = resolve_settings({k: kw.get(k) for k in flag_settings()}, env, recipe.settings(), recipe_origin)
    cache_dir = kw.get("cache_dir") or recipe.cache_dir
    paths.usable_cache_root(env, cache_dir, "--cache-dir" if kw.get("cache_dir") else f"{recipe_origin}'s cache_dir")
    _check_wheelhouse(s["wheelhouse"], cwd)
    s = collect.clone_git_plugins(s, env, cache_dir)
    facts = collect.gather(s, env, cwd, cache_dir, targets[0])
    out_dir = kw.get("out") or recipe.out_dir
    plans = []
    for python in targets:
        if python != facts.host.python:
            facts = replace(facts, host=host.gather(python, bindings=facts.source.bindings))
        plan = resolve_plan(s, facts, env, editable=editable, keep_preflight=keep_preflight)
        if out_dir:
            plan = replace(plan, wheel=replace(plan.wheel, out_dir=str((cwd / out_dir).resolve())))
        plans.append(plan)
    return plans


def _check_wheelhouse(given: Resolved, cwd: Path) -> None:
    """A wheelhouse that is no directory would only fail in pip, after the plan: refuse it now."""
    if given.value and not (cwd / Path(str(given.value)).expanduser()).is_dir():
        raise UserError(f"The wheelhouse {given.value} ({given.origin}) is not a directory. Give a directory of "
                        "wheels (pip download scikit-build-core pybind11 -d DIR), or leave --wheelhouse out.")


def provisioned_plan(kw: Mapping[str, Any], console: Any, *, editable: bool = False,
                     keep_preflight: bool = False) -> Plan:
    """The plan (one interpreter), with its LLVM made available first (see ``provisioned_plans``); with
    ``keep_preflight`` the include preflight's problems are kept in ``Plan.preflight``, not refused."""
    return _provisioned(lambda k: [make_plan(k, editable=editable, keep_preflight=keep_preflight)], kw, console)[0]


def provisioned_plans(kw: Mapping[str, Any], console: Any,
                      check: Callable[[list[Plan]], None] | None = None) -> list[Plan]:
    """The plan of each wheel (``make_plans``), with their LLVM made available first; ``check`` (e.g. of the output
    dir) sees the plans before anything is provisioned or locked."""
    def make(k: Mapping[str, Any]) -> list[Plan]:
        plans = make_plans(k)
        if check is not None:
            check(plans)
        return plans

    return _provisioned(make, kw, console)


def _provisioned(make: Callable[[Mapping[str, Any]], list[Plan]], kw: Mapping[str, Any], console: Any) -> list[Plan]:
    """Plans whose LLVM exists. If an ``auto`` download fails on the network, say so and fall back to the system
    LLVM (new plans: a different LLVM is a different build dir)."""
    from tritonbuild.http import NetworkError
    from tritonbuild.llvm import provision

    plans = make(kw)
    try:
        for p in plans:
            provision.ensure(p, console, dict(os.environ))
    except NetworkError as exc:
        if plans[0].settings["llvm"]["value"] != "auto":
            raise
        console.print(f"[yellow]warning:[/yellow] {exc} Falling back to a system LLVM (not the pinned commit).")
        plans = make({**kw, "llvm": "system"})
    return plans


def _one_python(given: Any) -> str | None:
    """The one interpreter of a command that builds for one (develop, test, llvm, clean, or a plan of the matrix)."""
    if not given or isinstance(given, str):
        return given or None
    if len(given) > 1:
        raise UserError(f"This command works with one interpreter, but --python was given {len(given)} times "
                        f"({', '.join(given)}). `build` and `plan` take several; give one here.")
    return str(given[0])

