"""Command line: parse into settings, gather facts, resolve a Plan, execute, report.

Errors are typed (``tritonbuild.errors``) and mapped to exit codes only here, in ``main``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tritonbuild import __version__
from tritonbuild.errors import BuildFailed, TritonBuildError

F = TypeVar("F", bound=Callable[..., Any])


def _int_range(name: str) -> click.IntRange:
    """A whole-number option's range: the setting's own (settings.Spec), as for its env var and recipe key."""
    from tritonbuild.settings import SPEC_BY_NAME

    spec = SPEC_BY_NAME[name]
    return click.IntRange(spec.minimum, spec.maximum)


def _choice(name: str) -> click.Choice[str]:
    """A word option's choices: the setting's own (settings.Spec), as for its env var and recipe key."""
    from tritonbuild.settings import SPEC_BY_NAME

    return click.Choice(SPEC_BY_NAME[name].choices)


def plan_options(func: F) -> F:
    """Options shared by every command that resolves a plan."""
    opts = [
        click.option("--source", "-s", help="Triton source: a path or a git URL (default: the current directory)."),
        click.option("--ref", help="git ref to check out when --source is a URL."),
        click.option("--backends", "-b", help="In-tree backends: 'nvidia;amd', 'nvidia,amd' or 'all'."),
        click.option("--plugin-dir", "plugin_dirs", multiple=True, help="External plugin directory (repeatable)."),
        click.option("--llvm", help="LLVM: auto, system, download, source, or a prefix path (env: LLVM_SYSPATH)."),
        click.option("--llvm-mirror", help="Base URL of prebuilt LLVM archives."),
        click.option("--allow-unpinned/--no-allow-unpinned", default=None,
                     help="Accept an LLVM archive without a pinned sha256."),
        click.option("--llvm-src", help="llvm-project URL or local clone for --llvm source."),
        click.option("--llvm-assertions/--no-llvm-assertions", default=None,
                     help="Build LLVM from source with assertions."),
        click.option("--clang/--no-clang", default=None, help="Build with clang and lld."),
        click.option("--ccache/--no-ccache", default=None, help="Use ccache (default: when found)."),
        click.option("--jobs", "-j", type=_int_range("jobs"), help="Parallel compile jobs."),
        click.option("--link-jobs", type=_int_range("link_jobs"), help="Parallel link jobs."),
        click.option("--build-type", help="CMake build type (default TritonRelBuildWithAsserts, like setup.py)."),
        click.option("--debug-info", type=_choice("debug_info"),
                     help="Debug info: lines (-g1, default for -g build types), full (-g), none (-g0), tree."),
        click.option("--linker", type=_choice("linker"),
                     help="Linker for gcc builds (default auto: lld when installed, else gold)."),
        click.option("--proton/--no-proton", default=None, help="Build the proton profiler."),
        click.option("--offline/--no-offline", default=None, help="Never touch the network."),
        click.option("--cmake-arg", "cmake_args", multiple=True, help="Extra CMake argument (repeatable)."),
        click.option("--dep", "deps", multiple=True,
                     help="NAME=PATH|URL for a dependency the tree fetches at configure time (repeatable)."),
        click.option("--target", "targets", multiple=True,
                     help="Also build this CMake target (repeatable), e.g. triton-opt; it stays in the build dir."),
        click.option("--bundle-nvidia-tools/--no-bundle-nvidia-tools", default=None,
                     help="Copy ptxas, cuobjdump, nvdisasm into the wheel's nvidia backend (default: when found)."),
        click.option("--strict/--no-strict", default=None, help="Refuse to add back required backends."),
        click.option("--compile-check/--no-compile-check", default=None,
                     help="Compile real kernels with the wheel before publishing it (default: on)."),
        click.option("--compile-check-timeout", type=_int_range("compile_check_timeout"),
                     help="Seconds one kernel of the compile check may take (default 120)."),
        click.option("--require-pinned-llvm/--no-require-pinned-llvm", default=None,
                     help="Refuse an LLVM that is not the source's pin (the nightly recipe: on)."),
        click.option("--api-check/--no-api-check", default=None,
                     help="Refuse backends that do not fit the source's backend interface (default: on)."),
        click.option("--wheel-name", help="Distribution name (env: TRITON_WHEEL_NAME)."),
        click.option("--wheelhouse", help="Wheels for the isolated build environment of a --python that lacks "
                                          "scikit-build-core/pybind11 (offline)."),
        click.option("--version-scheme", type=_choice("version_scheme"),
                     help="Version suffix scheme (default: setup, like Triton's setup.py)."),
        click.option("--ccache-remote", help="ccache remote storage URL (redis://..., http://...)."),
        click.option("--compiler-cache", type=_choice("compiler_cache"),
                     help="Compiler cache (default: ccache when found)."),
        click.option("--distcc", help="distcc hosts ('host[:port]/jobs ...'): distribute compiles behind ccache."),
        click.option("--zip-level", type=_int_range("zip_level"), help="Deflate level of the wheel (default 6)."),
        click.option("--reproducible/--no-reproducible", default=None, help="Byte-identical wheels."),
        click.option("--strip/--no-strip", default=None, help="Strip debug info from libtriton."),
        click.option("--repair/--no-repair", default=None, help="manylinux repair with auditwheel."),
        click.option("--repair-exclude", "repair_exclude", multiple=True,
                     help="A library the user's system provides: never bundled or grafted (repeatable; default "
                          "libcuda.so.1)."),
        click.option("--llvm-link", type=_choice("llvm_link"),
                     help="How libtriton links a shared-libLLVM LLVM (default auto: static for wheels when possible)."),
        click.option("--bundle-libs/--no-bundle-libs", default=None,
                     help="Copy needed non-system libraries into the wheel (default: on)."),
        click.option("--version-suffix", help="Version suffix (env: TRITON_WHEEL_VERSION_SUFFIX)."),
        click.option("--recipe", help="A recipe name (see `recipes list`) or a TOML file."),
        click.option("--cache-dir", help="Cache root for build dirs, clones and LLVMs."),
        click.option("--python", "python",
                     help="Python to build for (default: $VIRTUAL_ENV's, else $CONDA_PREFIX's, else this one)."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def _cli_settings() -> tuple[str, ...]:
    """The settings that have a command-line flag (settings.SPECS is the one list of them)."""
    from tritonbuild.settings import SPECS

    return tuple(spec.name for spec in SPECS if spec.flag)


def make_plan(kw: dict[str, Any], env: dict[str, str] | None = None, cwd: Path | None = None, *,
              editable: bool = False) -> Any:
    from tritonbuild import facts, recipes, resolve, settings

    env = dict(os.environ) if env is None else env
    cwd = cwd or Path.cwd()
    recipe, recipe_origin = (recipes.load(str(kw["recipe"]), cwd) if kw.get("recipe")
                             else (recipes.Recipe(), "recipe"))
    cli_values = {k: kw.get(k) for k in _cli_settings()}
    s = settings.resolve_settings(cli_values, env, recipe.settings(), recipe_origin)
    python = kw.get("python") or _active_python(env)
    cache_dir = kw.get("cache_dir") or recipe.cache_dir
    s = facts.clone_git_plugins(s, env, cache_dir)
    f = facts.gather(s, env, cwd, cache_dir, python)
    plan = resolve.resolve_plan(s, f, env, editable=editable)
    out_dir = kw.get("out") or recipe.out_dir
    if out_dir:
        from dataclasses import replace

        plan = replace(plan, wheel=replace(plan.wheel, out_dir=str((cwd / out_dir).resolve())))
    return plan


def provisioned_plan(kw: dict[str, Any], console: Any, *, editable: bool = False) -> Any:
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tritonbuild")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Build Triton into wheels with exactly the backends you ask for."""
    ctx.obj = {"debug": debug}


@cli.command()
@plan_options
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (the schema is in the README).")
@click.option("--settings", "show_settings", is_flag=True, help="Also show where each setting came from.")
def plan(as_json: bool, show_settings: bool, **kw: Any) -> None:
    """Resolve the build and print what `build` will do. Changes nothing on disk."""
    from tritonbuild.build import build_python_note

    p = make_plan(kw)
    note = build_python_note(p)
    if as_json:
        click.echo(p.to_json())
        return
    from tritonbuild import report

    out = report.console()
    report.print_plan(p, out)
    if note:
        out.print(f"[cyan]note:[/cyan] {note}")
    if show_settings:
        report.print_settings(p, out)


@cli.command()
@click.option("--python", "python", help="Python interpreter to check (default: this one).")
def doctor(python: str | None) -> None:
    """What this host has: cmake, ninja, ccache, compilers, lld, LLVMs, Python headers, RAM/cores/disk."""
    from tritonbuild import doctor as doc
    from tritonbuild import host, report
    from tritonbuild.backends import CORE_LLVM_TARGETS, expand_targets
    from tritonbuild.llvm.probe import probe, system_prefixes

    h = host.gather(python)
    llvms = []
    if os.environ.get("LLVM_SYSPATH"):
        llvms.append(probe(Path(os.environ["LLVM_SYSPATH"]), "env LLVM_SYSPATH"))
    llvms += [probe(Path(p), how) for p, how in system_prefixes()]
    report.print_doctor(doc.rows(h, llvms, expand_targets(CORE_LLVM_TARGETS, h.machine)), report.console())


@cli.command()
@plan_options
@click.option("--out", "-o", help="Output directory for the wheel (default: ./dist).")
@click.option("--no-smoke-test", is_flag=True, help="Skip importing the wheel before publishing it.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout (progress goes to stderr).")
def build(out: str | None, no_smoke_test: bool, as_json: bool, **kw: Any) -> None:
    """Build a wheel with the selected backends into ./dist (or --out)."""
    import json

    from tritonbuild import build as build_mod
    from tritonbuild import report

    console = report.console(stderr=as_json)
    p = provisioned_plan({**kw, "out": out}, console)
    report.print_plan(p, console)
    result = build_mod.build_wheel(p, console, smoke=not no_smoke_test)
    build_mod.print_summary(p, result, console)
    if as_json:
        click.echo(json.dumps(build_mod.result_dict(p, result), indent=2, sort_keys=True))


@cli.command()
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--generation", type=click.Choice(["G1", "G2", "G3"]), default="G2", show_default=True)
@click.option("--plugin", "with_plugin", is_flag=True, help="Also write an external plugin next to it.")
def example(dest: str, generation: str, with_plugin: bool) -> None:
    """Write the small Triton-shaped example tree (a real CMake project) into DEST."""
    from tritonbuild import example as ex
    from tritonbuild.errors import UserError

    root = Path(dest).resolve()
    if root.exists() and any(root.iterdir()):
        raise UserError(f"{root} exists and is not empty; tritonbuild will not write into it. Pick a new directory.")
    ex.write_tree(root / "triton", generation=generation)
    ex.write_spirv_abi(root / "spirv-kernel-abi")
    click.echo(f"wrote {root / 'triton'}")
    click.echo(f"wrote {root / 'spirv-kernel-abi'} (what the spirv backend downloads at configure time; "
               f"offline: --dep spirv-kernel-abi={root / 'spirv-kernel-abi'})")
    if with_plugin:
        ex.write_plugin(root / "triton-shared", "triton_shared")
        click.echo(f"wrote {root / 'triton-shared'} (plugin 'triton_shared')")


@cli.command()
@click.option("--out", "-o", default="dist", show_default=True, help="Where to put the example wheel.")
@click.option("--cache-dir", help="Cache root.")
@click.option("--llvm", help="LLVM prefix (default: auto).")
def selftest(out: str, cache_dir: str | None, llvm: str | None) -> None:
    """Build the bundled example tree (nvidia;amd;spirv + a plugin) into a wheel, import it, and compile a vector
    add to SPIR-V through its spirv backend.

    Needs no network and no Triton checkout: a check that this host can build Triton wheels before a
    one-hour real build.
    """
    from tritonbuild import selftest as run_selftest

    run_selftest.run(out, cache_dir, llvm, make_plan)


@cli.command()
@plan_options
def develop(**kw: Any) -> None:
    """Build incrementally and install editable into the active environment.

    The environment is $VIRTUAL_ENV, else $CONDA_PREFIX, else this interpreter (--python picks another).
    Python files of the source and plugins are live; a rebuilt libtriton is used on the next import.
    """
    from tritonbuild import develop as dev
    from tritonbuild import report

    console = report.console()
    p = provisioned_plan(kw, console, editable=True)
    for w in p.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")
    r = dev.develop(p, console)
    what = {"no": "no reconfigure", "yes": "configured", "clean": "clean reconfigure"}[r.configured]
    ninja = "ninja: no work" if r.ninja_no_work else "rebuilt"
    installed = "editable install updated" if r.installed else "editable install unchanged"
    console.print(f"develop {p.key}: {what}, {ninja}, {installed} in {r.site} ({r.seconds:.2f} s; log {r.log})")
    for name, path in r.targets.items():
        console.print(f"target {name}: {path or 'built (no file of that name in the build dir)'}")


def _active_python(env: dict[str, str]) -> str:
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if env.get(var):
            candidate = Path(env[var]) / "bin" / "python"
            if candidate.exists():
                return str(candidate)
    return sys.executable


@cli.command()
@click.argument("suite", type=click.Choice(["lit", "unit", "python"]), default="lit")
@plan_options
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
def test(suite: str, extra: tuple[str, ...], **kw: Any) -> None:
    """Run the source's lit tests, C++ unit tests (ctest) or Python tests against the develop build.

    Arguments after -- go to the test runner (an unknown option before -- is an error, not forwarded); the exit
    code is the runner's.
    """
    from tritonbuild import report, testing

    p = make_plan(kw)
    rc = testing.run(p, suite, list(extra), report.console())
    sys.exit(rc)


@cli.command()
@click.option("--all", "all_", is_flag=True, help="Remove every build dir under the cache root.")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@plan_options
def clean(all_: bool, dry_run: bool, **kw: Any) -> None:
    """Remove the build dir of the plan these options make (the options `build` takes), or all of them."""
    from tritonbuild import paths, report
    from tritonbuild import status as st

    root = paths.cache_root(dict(os.environ), kw.get("cache_dir")) / "build"
    if all_:
        targets = sorted(d for d in root.iterdir() if d.is_dir()) if root.is_dir() else []
    else:
        p = make_plan(kw)
        targets = [Path(p.cmake.build_dir)] if Path(p.cmake.build_dir).exists() else []
    freed = st.remove_build_dirs(targets, dry_run=dry_run)
    verb = "would free" if dry_run else "freed"
    report.console().print(f"{len(targets)} build dir(s), {verb} {freed / 2**20:.1f} MiB")


@cli.command()
@click.option("--cache-dir", help="Cache root.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(cache_dir: str | None, as_json: bool) -> None:
    """Build dirs under the cache root: their plans, sizes, last build time and wheel outputs."""
    import json

    from tritonbuild import paths, report
    from tritonbuild import status as st

    rows = st.build_dirs(paths.cache_root(dict(os.environ), cache_dir) / "build")
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table(title="build dirs", title_justify="left")
    for col in ("key", "source", "backends", "size", "last build", "wheels"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["key"], r["source"] or "?", ", ".join(r["backends"]), f"{r['size'] / 2**20:.1f} MiB",
                      r["last_build"] or "-", "\n".join(r["wheels"]) or "-")
    report.console().print(table)


@cli.command()
@click.argument("wheel", type=click.Path(exists=True, dir_okay=False))
@click.option("--no-import", is_flag=True, help="Skip the fresh-venv import test.")
@click.option("--python", "python", help="Interpreter for the import test (default: this one).")
@click.option("--compile", "compile_check", is_flag=True,
              help="Also compile the kernel corpus (matmul, reduction, softmax, ...) for the wheel's backends.")
@click.option("--compile-timeout", type=click.IntRange(min=1), default=120, show_default=True,
              help="Seconds one kernel may take before it counts as a hang.")
def verify(wheel: str, no_import: bool, python: str | None, compile_check: bool, compile_timeout: int) -> None:
    """Check a wheel: RECORD hashes, backends against its provenance, an import in a fresh venv, and with
    --compile real kernels compiled through it (any wheel: yours or the official one)."""
    from tritonbuild import report
    from tritonbuild import verify as ver

    if compile_check and no_import:
        raise click.UsageError("--compile needs the fresh-venv import (drop --no-import).")
    checks = ver.verify(Path(wheel), python=python, import_test=not no_import,
                        compile_timeout=compile_timeout if compile_check else None)
    out = report.console()
    for name, ok, detail in checks:
        out.print(f"{'[green]ok[/green]  ' if ok else '[red]FAIL[/red]'} {name}: {detail}")
    if not all(ok for _, ok, _ in checks):
        sys.exit(1)


@cli.group()
def recipes() -> None:
    """Named build recipes (recipes/*.toml)."""


@recipes.command(name="list")
def recipes_list() -> None:
    """List the recipes shipped with tritonbuild."""
    from tritonbuild import recipes as rec
    from tritonbuild.paths import recipes_dir

    for name in rec.names_available():
        r = rec.read(recipes_dir() / f"{name}.toml")
        click.echo(f"{name:12} {r.description or ''}")


@recipes.command(name="show")
@click.argument("name")
def recipes_show(name: str) -> None:
    """Print a recipe (a name or a path) after validating it."""
    from tritonbuild import recipes as rec

    path = rec.find(name, Path.cwd())
    rec.read(path)
    click.echo(f"# {path}")
    click.echo(path.read_text().rstrip())


def main(argv: list[str] | None = None) -> None:
    import tritonbuild.backends_cli  # registers `backends`
    import tritonbuild.compare_cli  # registers `compare`
    import tritonbuild.llvm_cli  # noqa: F401  (registers the `llvm` command group)

    args = argv if argv is not None else sys.argv[1:]
    debug = "--debug" in (args[:args.index("--")] if "--" in args else args)  # after --: the test runner's
    try:
        cli.main(args=argv, prog_name="tritonbuild", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except TritonBuildError as exc:
        if debug:
            raise
        from tritonbuild import report

        err = report.console(stderr=True)
        err.print(f"[red bold]error:[/red bold] {exc}", soft_wrap=False)
        if isinstance(exc, BuildFailed):
            if exc.tail:
                err.print(exc.tail, markup=False, highlight=False)
            if exc.log_path:
                err.print(f"full log: {exc.log_path}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    sys.exit(0)
