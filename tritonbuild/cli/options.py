"""Click options made from the one settings model (``tritonbuild.settings.model.SPECS``).

A setting's flag, its ``--no-`` form, its type, range, choices and help all come from its ``Spec``; the
request options (recipe, cache dir, interpreter) are the only ones written here. ``request_of`` makes a command's
``tritonbuild.gather.request.Request`` of them; ``environment`` is the command line's one read of ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from tritonbuild.settings.model import SPECS, Spec, ascii_float, ascii_int

if TYPE_CHECKING:
    from tritonbuild.gather.request import Request

F = TypeVar("F", bound=Callable[..., Any])
COMMANDLINE = ParameterSource.COMMANDLINE


def _help(spec: Spec) -> str:
    env = f" (env: {', '.join(spec.env_names)})" if spec.env_names else ""
    return spec.help[:1].upper() + spec.help[1:] + env + "."


def _checked(spec: Spec, value: Any) -> Any:
    """A flag's value refused by its setting's own check (``Spec.check``): the same paragraph (exit 2) as the
    environment and a recipe get for the same value."""
    spec.check([value] if spec.kind == "list" else value, f"cli {spec.flag}")
    return value


def _ascii(kind: click.ParamType[Any], value: Any, parse: Callable[[str], Any], what: str,
           param: click.Parameter | None, ctx: click.Context | None) -> Any:
    """A flag's text read as the settings read numbers (``ascii_int``/``ascii_float``: int() would also take other
    scripts' digits, ``1_6``, ``+4`` and spaces); a value click already converted passes as it is."""
    if not isinstance(value, str):
        return value
    try:
        return parse(value)
    except ValueError:
        kind.fail(f"{value!r} is not {what} written in ASCII digits", param, ctx)


class _Int(click.IntRange):
    def __init__(self, spec: Spec) -> None:
        super().__init__(spec.minimum, spec.maximum)
        self.spec = spec

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = _ascii(self, value, ascii_int, "a whole number", param, ctx)
        return _checked(self.spec, click.INT.convert(value, param, ctx))


class _Float(click.FloatRange):
    def __init__(self, spec: Spec) -> None:
        super().__init__(spec.minimum, spec.maximum)
        self.spec = spec

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = _ascii(self, value, ascii_float, "a number", param, ctx)
        return _checked(self.spec, click.FLOAT.convert(value, param, ctx))


class AsciiInt(click.IntRange):
    """A whole number option that is not a setting, read as the settings read theirs (``ascii_int``), in click's
    range."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return super().convert(_ascii(self, value, ascii_int, "a whole number", param, ctx), param, ctx)


class _Word(click.Choice[str]):
    def __init__(self, spec: Spec) -> None:
        super().__init__(spec.choices)
        self.spec = spec

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return _checked(self.spec, value)


class _Text(click.types.StringParamType):
    def __init__(self, spec: Spec) -> None:
        self.spec = spec

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return _checked(self.spec, super().convert(value, param, ctx))


def setting_option(spec: Spec) -> Callable[[F], F]:
    """The click option of one setting; its destination is the setting's name."""
    assert spec.flag is not None
    if spec.kind == "bool":
        return click.option(spec.flag, spec.name, default=None, help=_help(spec))
    types: dict[str, type[_Int | _Float | _Word | _Text]] = {"int": _Int, "float": _Float, "word": _Word}
    return click.option(*spec.flag.split("/"), spec.name, type=types.get(spec.kind, _Text)(spec),
                        multiple=spec.kind == "list", help=_help(spec))


class NonEmpty(click.types.StringParamType):
    """An option's text that may not be empty (nor only spaces): an empty value, a script's unset variable
    (``--cache-dir "$CACHE"``), would mean ``meaning``, which nobody types on purpose (``clean --all`` would wipe
    the default cache). One paragraph, exit 2, as an empty --source is refused."""

    def __init__(self, meaning: str, instead: str) -> None:
        self.meaning, self.instead = meaning, instead

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from tritonbuild.errors import UserError

        text = super().convert(value, param, ctx)
        if isinstance(text, str) and not text.strip():
            flag = max(param.opts, key=len) if param is not None and param.opts else "The option"
            raise UserError(f"{flag} {text!r} is empty, which would mean {self.meaning}: {self.instead}.")
        return text


def cache_dir_option(help: str = "Cache root for build dirs, clones and LLVMs.") -> Callable[[F], F]:
    """``--cache-dir``, the same for every command that takes it: an empty one is refused, not the default."""
    return click.option("--cache-dir", help=help, type=NonEmpty(
        "the default cache root (TRITONBUILD_CACHE_DIR, else ~/.cache/tritonbuild)",
        "name the cache directory, or leave --cache-dir out for the default"))


REQUEST = (
    click.option("--recipe", help="A recipe name (see `recipes list`) or a TOML file.", type=NonEmpty(
        "no recipe", "name a recipe (see `tritonbuild recipes list`) or a TOML file, or leave --recipe out")),
    cache_dir_option(),
    click.option("--python", "python", multiple=True,
                 help="Python to build for: a path or a version (3.12, cp312, 3.13t); repeatable for a wheel per "
                      "interpreter (default: $VIRTUAL_ENV's, else $CONDA_PREFIX's, else this one)."),
)


def verbosity_options(func: F) -> F:
    """``-v``/``-q`` as pip has them, for the commands that build: each repeatable, counted together (``-v -q`` is
    the default), ``verbosity(kw)`` their sum. Output only: no setting, so the plan and the provenance are the same
    whatever they are, and ``--json``'s object does not change."""
    func = click.option("-q", "--quiet", count=True, help="Less output, repeatable: -q only warnings, errors and the "
                        "result; -qq only errors (errors are never silenced).")(func)
    return click.option("-v", "--verbose", count=True, help="More output, repeatable: -v also each command a stage "
                        "runs and the build log's tail on a failure; -vv also every line the compilers print.")(func)


def verbosity(kw: dict[str, Any]) -> int:
    """The count of -v less the count of -q (``verbosity_options``), taken out of the command's keywords."""
    return int(kw.pop("verbose", 0) or 0) - int(kw.pop("quiet", 0) or 0)


def plan_options(func: F) -> F:
    """Every setting's option and the request options: what each command that resolves a plan takes."""
    for opt in reversed((*(setting_option(spec) for spec in SPECS if spec.flag), *REQUEST)):
        func = opt(func)
    return func


# How ``--help`` of a command that takes the plan options lays them out: the options most runs need on the first
# screen, then one section per concern. Every setting with a flag is in exactly one section (a test holds it); a
# command's own options (--out, --json, ...) go under "Common" when named there, else under "Other".
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Common", ("source", "ref", "backends", "plugin_dirs", "llvm", "recipe", "python", "out", "jobs", "patches",
                "submodules", "offline", "as_json", "verbose", "quiet")),
    ("LLVM", ("llvm_mirror", "allow_unpinned", "llvm_src", "llvm_assertions", "llvm_link", "require_pinned_llvm")),
    ("Checks before and after the build", ("strict", "api_check", "canary", "canary_budget", "compile_check",
                                          "compile_check_timeout", "no_smoke_test")),
    ("Toolchain, compiler cache and speed", ("clang", "linker", "build_type", "debug_info", "ccache",
                                            "compiler_cache", "ccache_remote", "distcc", "stable_paths",
                                            "unity_build", "unity_exclude", "link_jobs", "cmake_args", "targets",
                                            "deps")),
    ("The wheel", ("wheel_name", "version_scheme", "version_suffix", "proton", "stable_abi", "ext_headers",
                   "reproducible", "strip", "zip_level", "repair", "plat", "repair_exclude", "bundle_libs",
                   "bundle_nvidia_tools", "cuda_tools_from", "wheelhouse")),
    ("Container", ("container", "container_engine", "container_python")),
)


class PlanCommand(click.Command):
    """A command taking the plan options, whose ``--help`` shows them by section (``SECTIONS``), the common ones
    first, instead of one list of some sixty."""

    def invoke(self, ctx: click.Context) -> Any:
        if ctx.command_path.removeprefix(f"{ctx.find_root().info_name} ") not in ("build", "plan"):
            _runs_on_this_host(ctx)  # `llvm build` too
        return super().invoke(ctx)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, list[tuple[str, str]]] = {}
        placed = {name: title for title, names in SECTIONS for name in names}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                rows.setdefault(placed.get(param.name or "", "Other"), []).append(record)
        for title in [t for t, _ in SECTIONS] + ["Other"]:
            if rows.get(title):
                with formatter.section(f"{title} options"):
                    formatter.write_dl(rows[title])


def plan_command(name: str | None = None, group: click.Group | None = None) -> Callable[[F], click.Command]:
    """``click.command`` (or ``group.command``) for a command that takes ``plan_options``."""
    make = group.command if group is not None else click.command
    return make(name, cls=PlanCommand)


def _runs_on_this_host(ctx: click.Context) -> None:
    """A command other than ``build`` runs on this host: a container option typed for it is refused; a container
    the environment names (for the job's builds) is said to be left out here."""
    from tritonbuild.errors import UserError
    from tritonbuild.settings.model import SPEC_BY_NAME

    command = ctx.command_path.removeprefix(f"{ctx.find_root().info_name} ")
    typed = [opt for name, opt, value in given_options(ctx)
             if name in SPEC_BY_NAME and SPEC_BY_NAME[name].host_only and value]
    if typed:
        raise UserError(f"{typed[0]} runs `build` in an image; `{command}` runs on this host. Leave {typed[0]} out, "
                        "or use `build --container IMAGE`.")
    container_left_out(ctx)


def container_left_out(ctx: click.Context) -> None:
    """Say that a container the environment names (for a CI job's builds) is left out by this command, which runs
    on this host."""
    from tritonbuild.settings.model import env_settings

    command = ctx.command_path.removeprefix(f"{ctx.find_root().info_name} ")
    given = env_settings(environment())
    where = given.origin("container") if given.container else _recipe_container(ctx.params.get("recipe"))
    if where:
        warn_on_stderr(f"{where} names a container image; `{command}` runs on this host, and leaves it out (only "
                       "`build` runs in one).")


def _recipe_container(recipe: object) -> str | None:
    """``recipe NAME`` when the command's recipe names a container (a recipe that cannot be read: the command
    itself says why)."""
    from tritonbuild.errors import UserError
    from tritonbuild.settings import recipes

    if not isinstance(recipe, str) or not recipe:
        return None
    try:
        found, origin = recipes.load(recipe, Path.cwd())
    except (UserError, OSError):
        return None
    return origin if found.values.get("container") else None


def given_options(ctx: click.Context) -> list[tuple[str, str, str | None]]:
    """The options typed on the command line of ``ctx``'s command, as ``(name, option, value)`` in the command's
    order (``value`` None for a flag; one item per value of a repeatable option): what ``build --container`` runs
    again inside the image. Nothing from the environment or a default is in it (the environment goes its own way)."""
    items: list[tuple[str, str, str | None]] = []
    for param in ctx.command.params:
        name = param.name or ""
        if not isinstance(param, click.Option) or ctx.get_parameter_source(name) != COMMANDLINE:
            continue
        value, long = ctx.params.get(name), max(param.opts, key=len)
        if param.count:
            items += [(name, long, None)] * int(value or 0)
        elif param.is_flag and param.secondary_opts:
            items.append((name, long if value else max(param.secondary_opts, key=len), None))
        elif param.is_flag:
            if value:
                items.append((name, long, None))
        else:
            items += [(name, long, str(v)) for v in (value or () if param.multiple else (value,))]
    return items


def environment() -> dict[str, str]:
    """The process's environment, snapshotted: the one read of ``os.environ`` for what a command asked for (every
    request, plan and lookup below the command line gets this copy)."""
    return dict(os.environ)


def request_of(kw: Mapping[str, Any], **choices: Any) -> Request:
    """The command's request: click's keyword mapping ``kw`` (``plan_options``' values, or a command's own of the
    same names), the environment snapshotted now, the working directory, warnings said on stderr; ``choices``:
    ``Request.from_cli``'s."""
    from tritonbuild.gather.request import Request

    return Request.from_cli(kw, environment(), Path.cwd(), **{"warn": warn_on_stderr, **choices})


def warn_on_stderr(text: str) -> None:
    """A warning from making a plan, said by the reporter of stderr (``warning: text``): stdout stays the
    command's answer (a plan, JSON)."""
    from tritonbuild.report import render

    render.console(stderr=True).warn(text)
