"""The request: what the user asked for (flags, a recipe, the environment, the working directory), made into a
Plan by the pipeline's first steps: settings (default < recipe < env < CLI) -> gathered facts -> resolved plan.

A ``Request`` is made once, by the command line (``Request.from_cli``: the one place click's keyword mapping is
read, with the environment snapshotted there), and every command that builds, plans or inspects hands it to
``make_plan`` / ``make_plans`` / ``provisioned_plans``. Nothing here reads ``os.environ``: the request's ``env``
is the environment every setting, interpreter lookup and provider of these plans sees.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.gather import collect, host, pythons
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.resolve.backend_api import BackendApi
from tritonbuild.resolve.plugins import Plugin
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.resolve.source import SourceInfo
from tritonbuild.settings import cacheroot, recipes
from tritonbuild.settings.model import SPECS, Settings, resolve_settings, show
from tritonbuild.system import probememo

# What a request holds besides settings: the recipe, where the cache and the wheels go, the target interpreters
# (the keys ``Request.from_cli`` reads of click's mapping besides the settings' own).
REQUEST_OPTIONS = ("recipe", "cache_dir", "out", "python")


def flag_settings() -> tuple[str, ...]:
    """The settings that have a command-line flag (``SPECS`` is the one list of them)."""
    return tuple(spec.name for spec in SPECS if spec.flag)


@dataclass(frozen=True)
class Request:
    """What one command asked for. ``flags``: every flag setting by name, its value as typed (None: not given);
    ``env``: the environment, snapshotted once by the command line (read-only here); ``pythons``: ``--python`` as
    given (paths or versions), else empty (the recipe's, else the active interpreter); ``smoke_test``: run the
    wheel's build-time checks before publishing it (``--no-smoke-test``: none of them, the compile check
    included); ``warn``: where a warning from making the plan goes (the command's reporter's ``warn``; a caller
    that wants none names ``reporter.silent``)."""

    flags: Mapping[str, Any]
    env: Mapping[str, str]
    cwd: Path
    recipe: str | None = None
    cache_dir: str | None = None
    out: str | None = None
    pythons: tuple[str, ...] = ()
    editable: bool = False
    keep_preflight: bool = False
    smoke_test: bool = True
    recalled: tuple[tuple[str, ...], str] = ((), "")  # the flags develop took from a checkout's record, and its path
    warn: Callable[[str], None] = field(kw_only=True, compare=False, repr=False)  # required: silence is named

    def __post_init__(self) -> None:
        unknown = set(self.flags) - set(flag_settings())
        if unknown:
            raise ValueError(f"not flag settings: {sorted(unknown)}")
        flags = {name: self.flags.get(name) for name in flag_settings()}
        object.__setattr__(self, "flags", MappingProxyType(flags))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "pythons", tuple(str(p) for p in self.pythons))

    @classmethod
    def from_cli(cls, kw: Mapping[str, Any], env: Mapping[str, str], cwd: Path, **choices: Any) -> Request:
        """The request of click's keyword mapping ``kw`` (every flag setting by name, plus ``REQUEST_OPTIONS``;
        None: not given), the environment ``env`` (copied: later changes to it are not seen) and ``cwd``.
        ``choices``: what the command itself decides (``out``, ``editable``, ``keep_preflight``,
        ``smoke_test``, ``warn``)."""
        unknown = set(kw) - set(flag_settings()) - set(REQUEST_OPTIONS)
        if unknown:
            raise ValueError(f"unknown request options: {sorted(unknown)}")
        given = kw.get("python") or ()
        opts = {"recipe": kw.get("recipe") or None, "cache_dir": kw.get("cache_dir") or None,
                "out": kw.get("out") or None, "pythons": (given,) if isinstance(given, str) else tuple(given)}
        return cls({k: kw.get(k) for k in flag_settings()}, env, cwd, **{**opts, **choices})

    def with_flags(self, **values: Any) -> Request:
        """The same request with these flag settings given (as if typed)."""
        return replace(self, flags={**self.flags, **values})


def active_python(env: Mapping[str, str]) -> str:
    """The interpreter a build is for by default: $VIRTUAL_ENV's, else $CONDA_PREFIX's, else this one."""
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if env.get(var):
            candidate = Path(env[var]) / "bin" / "python"
            if candidate.exists():
                return str(candidate)
            # an environment activated, then deleted or moved: never another interpreter in its place
            raise UserError(f"{var} is {show(env[var])}, which has no bin/python: the environment "
                            "was deleted or moved after it was activated. Recreate it (python3 -m venv PATH), "
                            f"deactivate it (unset {var}), or pass --python.")
    return sys.executable


def _recipe(request: Request) -> tuple[recipes.Recipe, str]:
    return recipes.load(request.recipe, request.cwd) if request.recipe else (recipes.Recipe(), "recipe")


def settings_of(request: Request, recipe: tuple[recipes.Recipe, str] | None = None
                ) -> tuple[Settings, str | None, Path]:
    """The request's settings (default < recipe < env < flags), the cache dir it gives (``--cache-dir``, else the
    recipe's; None: the default) and the cache root, refused up front when no build could use it."""
    rec, origin = recipe or _recipe(request)
    s = resolve_settings(dict(request.flags), request.env, rec.settings(), origin)
    names, record = request.recalled  # a remembered flag's errors name where it came from, and the way out
    s = s.with_origin(names, f"the last develop request of this checkout, {record}; `develop --forget` drops it")
    cache_dir = request.cache_dir or rec.cache_dir
    root = cacheroot.usable_cache_root(request.env, cache_dir,
                                   "--cache-dir" if request.cache_dir else f"{origin}'s cache_dir")
    return s, cache_dir, root


def target_pythons(request: Request, recipe: recipes.Recipe | None = None) -> list[str]:
    """The interpreters the request builds for (``--python``, repeatable, else the recipe's ``pythons``, else the
    active one), each found and checked up front: one that cannot build is refused with the fix."""
    given = request.pythons or tuple((recipe or _recipe(request)[0]).pythons or ())
    if not given:
        return [active_python(request.env)]
    found: list[str] = []
    for spec in given:
        path = pythons.find(str(spec), request.env, request.cwd)
        pythons.probe(path)
        if os.path.realpath(path) not in {os.path.realpath(p) for p in found}:
            found.append(path)
    return found


def make_plans(request: Request) -> list[Plan]:
    """One plan per wheel, in the order the interpreters were given. Interpreters one cp312-abi3 wheel serves
    (CPython 3.12+ of a tree with TRITON_STABLE_ABI) share one plan, built with the oldest of them (the limited
    API is 3.12's); the others import that wheel before it is published (``Plan.serves``)."""
    recipe = _recipe(request)
    with probememo.kept_in(_memo_root(request, recipe[0])):
        plans = _plans(request, recipe, target_pythons(request, recipe[0]))
    abi3 = sorted((p for p in plans if p.wheel.py_api), key=lambda p: int(p.wheel.python_abi[3:]))
    if len(abi3) < 2:
        return plans
    builder = replace(abi3[0], serves=tuple(p.python for p in abi3[1:]))
    first = next(i for i, p in enumerate(plans) if p.wheel.py_api)
    return [builder if i == first else p for i, p in enumerate(plans) if not p.wheel.py_api or i == first]


def make_plan(request: Request) -> Plan:
    """The plan of a command that works with one interpreter (develop, test, llvm, clean, check-llvm): the one
    ``--python`` names, else the active one (a recipe's ``pythons`` are for ``build`` and ``plan``)."""
    one = _one_python(request.pythons)
    recipe = _recipe(request)
    python = pythons.find(one, request.env, request.cwd) if one else active_python(request.env)
    with probememo.kept_in(_memo_root(request, recipe[0])):
        return _plans(request, recipe, [python])[0]


def _memo_root(request: Request, recipe: recipes.Recipe) -> Path | None:
    """Where the probes' memos (``llvm-config``, the interpreter, ``ptxas``, a commit's git facts) are kept while
    the plans are made: the request's cache root, so a second plan of the same inputs runs none of them."""
    try:
        return cacheroot.cache_root(request.env, request.cache_dir or recipe.cache_dir)
    except UserError:  # said where the settings are checked, in its place among the request's problems
        return None


def _plans(request: Request, recipe: tuple[recipes.Recipe, str], targets: list[str]) -> list[Plan]:
    """A plan per interpreter in ``targets``: the settings and the facts are gathered once (only the host's
    interpreter facts differ between them), then each is resolved."""
    env, cwd = request.env, request.cwd
    s, cache_dir, _root = settings_of(request, recipe)
    _check_wheelhouse(s, cwd)
    s = collect.clone_git_plugins(s, env, cache_dir)
    facts = collect.gather(s, env, cwd, cache_dir, targets[0], warn=request.warn)
    out_dir = request.out or recipe[0].out_dir
    plans = []
    for python in targets:
        if python != facts.host.python:
            facts = replace(facts, host=host.gather(python, bindings=facts.source.bindings))
        plan = resolve_plan(s, facts, editable=request.editable, keep_preflight=request.keep_preflight)
        if out_dir:
            plan = replace(plan, wheel=replace(plan.wheel, out_dir=str((cwd / out_dir).resolve())))
        plans.append(plan)
    return plans


def _check_wheelhouse(s: Settings, cwd: Path) -> None:
    """A wheelhouse that is no directory would only fail in pip, after the plan: refuse it now."""
    if s.wheelhouse and not (cwd / s.wheelhouse.expanduser()).is_dir():
        raise UserError(f"The wheelhouse {s.wheelhouse} ({s.origin('wheelhouse')}) is not a directory. Give a "
                        "directory of wheels (pip download scikit-build-core pybind11 -d DIR), or leave --wheelhouse "
                        "out.")


def provisioned_plan(request: Request, reporter: Reporter) -> Plan:
    """The plan (one interpreter), with its LLVM made available first (see ``provisioned_plans``); with the
    request's ``keep_preflight`` the include preflight's problems are kept in ``Plan.preflight``, not refused."""
    return _provisioned(lambda r: [make_plan(r)], request, reporter)[0]


def provisioned_plans(request: Request, reporter: Reporter,
                      check: Callable[[list[Plan]], None] | None = None) -> list[Plan]:
    """The plan of each wheel (``make_plans``), with their LLVM made available first; ``check`` (e.g. of the output
    dir) sees the plans before anything is provisioned or locked."""
    def make(r: Request) -> list[Plan]:
        plans = make_plans(r)
        if check is not None:
            check(plans)
        return plans

    return _provisioned(make, request, reporter)


def _provisioned(make: Callable[[Request], list[Plan]], request: Request, reporter: Reporter) -> list[Plan]:
    """Plans whose LLVM exists. If an ``auto`` download fails on the network, say so and fall back to the system
    LLVM (new plans: a different LLVM is a different build dir)."""
    from tritonbuild.llvm import provision
    from tritonbuild.system.http import NetworkError

    plans = make(request)
    try:
        for p in plans:
            provision.ensure(p, reporter, dict(request.env))
    except NetworkError as exc:
        if plans[0].settings.llvm != "auto":
            raise
        reporter.warn(f"{exc} Falling back to a system LLVM (not the pinned commit).")
        plans = make(request.with_flags(llvm="system"))
    return plans


@dataclass(frozen=True)
class Survey:
    """Every backend a request's source and plugin dirs offer, selected or not (``tritonbuild backends``):
    ``api`` (with ``check``) is each one's compatibility check by path."""

    source: SourceInfo
    plugins: tuple[Plugin, ...]
    warnings: tuple[str, ...]
    api: dict[str, BackendApi]


def survey_backends(request: Request, *, check: bool) -> Survey:
    """The backends the request's source (``source``, ``ref``) and plugin dirs offer, read as a plan reads them
    (the request's settings, cache root and plugin validation) but without resolving a plan: a plan holds only the
    selected backends and refuses one that will fail, which ``backends --check`` is there to report."""
    from tritonbuild.gather import git
    from tritonbuild.gather.plugins import read_all
    from tritonbuild.gather.source import inspect_source
    from tritonbuild.resolve.plugins import resolve_plugins

    s, _cache_dir, cache_root = settings_of(request)
    dirs, cwd = s.plugin_dirs, request.cwd
    root = collect.source_root(s, cwd, cache_root, request.warn)
    info = inspect_source(root, git.git_state(root))
    found, _notes, warnings = resolve_plugins(
        [(p, "plugin") for p in dirs], files=read_all(dirs, cwd), in_tree=info.backend_names,
        source_commit=info.git.commit if info.git else None, git_states=collect.plugin_git_states(dirs, cwd))
    api = collect.compat_facts(root, info, [Path(p.path) for p in found],
                               collect.plugin_git_states(dirs, cwd)) if check else {}
    return Survey(info, found, tuple(warnings), api)


def _one_python(given: tuple[str, ...]) -> str | None:
    """The one interpreter of a command that builds for one (develop, test, llvm, clean, or a plan of the matrix)."""
    if len(given) > 1:
        raise UserError(f"This command works with one interpreter, but --python was given {len(given)} times "
                        f"({', '.join(given)}). `build` and `plan` take several; give one here.")
    return given[0] if given else None
