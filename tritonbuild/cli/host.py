"""``doctor``, ``selftest``, ``example`` and ``status``: this host, the bundled example tree, the build dirs."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import click

from tritonbuild import jsonout
from tritonbuild.cli.options import NonEmpty, cache_dir_option, environment
from tritonbuild.errors import EnvironmentProblem, UserError


@click.command()
@click.option("--python", "python", help="Python interpreter to check (default: this one).")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON: one object, a list of rows.")
def doctor(python: str | None, as_json: bool) -> None:
    """What this host has: cmake, ninja, ccache, compilers, lld, LLVMs, Python headers, RAM/cores/disk."""
    from tritonbuild.gather import host
    from tritonbuild.llvm.probe import probe, system_prefixes
    from tritonbuild.report import doctor as doc
    from tritonbuild.report import render
    from tritonbuild.resolve.backends import CORE_LLVM_TARGETS, expand_targets
    from tritonbuild.resolve.llvm import STRATEGIES
    from tritonbuild.settings.model import env_settings

    h = host.gather(python)
    llvms = []
    given = env_settings(environment())  # the llvm setting as the environment gives it (checked)
    if given.llvm not in STRATEGIES:  # a prefix: LLVM_SYSPATH, the setting's one variable
        llvms.append(probe(Path(given.llvm), given.origin("llvm")))
    llvms += [probe(Path(p), how) for p, how in system_prefixes()]
    rows = doc.rows(h, llvms, expand_targets(CORE_LLVM_TARGETS, h.machine))
    if as_json:
        click.echo(jsonout.dumps("doctor", {"rows": [{"name": n, "status": s, "detail": d} for n, s, d in rows]}))
        return
    render.print_doctor(rows, render.console())


@click.command()
@click.argument("dest", type=click.Path(file_okay=False))
@click.option("--generation", type=click.Choice(["G1", "G2", "G3", "G4"]), default="G2", show_default=True)
@click.option("--plugin", "with_plugin", is_flag=True, help="Also write an external plugin next to it.")
def example(dest: str, generation: str, with_plugin: bool) -> None:
    """Write the small Triton-shaped example tree (a real CMake project) into DEST."""
    given = Path(dest)
    if given.is_symlink():
        raise UserError(f"{given} is a link (to {os.readlink(given)}); tritonbuild writes the example only into a "
                        "real directory, never through a link. Pick a new directory.")
    root = given.resolve()
    existed = True  # until known otherwise: nothing is undone
    try:
        existed = root.exists()
        if existed and any(root.iterdir()):
            raise UserError(f"{root} exists and is not empty; tritonbuild will not write into it. Pick a new "
                            "directory.")
        _write_example(root, generation, with_plugin)
    except OSError as exc:
        _undo(root, existed)
        raise UserError(f"Cannot write the example into {root}: {_why(exc)}. Pick a directory you can write to; "
                        "what was written of it has been removed.") from None


def _why(exc: OSError) -> str:
    """An OSError in a few words; copytree's shutil.Error holds a list of (src, dst, why): the first one."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        _src, dst, why = exc.args[0][0]
        return f"{str(why).split(']', 1)[-1].split(':', 1)[0].strip()} ({dst})"
    return f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc.strerror or exc)


def _write_example(root: Path, generation: str, with_plugin: bool) -> None:
    from tritonbuild import example as ex

    ex.write_tree(root / "triton", generation=generation)
    ex.write_spirv_abi(root / "spirv-kernel-abi")
    click.echo(f"wrote {root / 'triton'}")
    click.echo(f"wrote {root / 'spirv-kernel-abi'} (what the spirv backend downloads at configure time; "
               f"offline: --dep spirv-kernel-abi={root / 'spirv-kernel-abi'})")
    if with_plugin:
        ex.write_plugin(root / "triton-shared", "triton_shared")
        click.echo(f"wrote {root / 'triton-shared'} (plugin 'triton_shared')")


def _undo(root: Path, existed: bool) -> None:
    """Remove what a failed ``example`` wrote: the dir it made, or what it put into the empty dir it was given."""
    if not existed:
        shutil.rmtree(root, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


@click.command()
@click.option("--out", "-o", default="dist", show_default=True, help="Where to put the example wheel.",
              type=NonEmpty("the current directory", "name the output directory, or leave --out out for ./dist"))
@cache_dir_option("Cache root.")
@click.option("--llvm", help="LLVM prefix, or a strategy (default: system, the host's own: a self-test is offline).")
def selftest(out: str, cache_dir: str | None, llvm: str | None) -> None:
    """Build the bundled example tree (nvidia;amd;spirv + a plugin) into a wheel, import it, and compile a vector
    add to SPIR-V through its spirv backend.

    Needs no network and no Triton checkout: a check that this host can build Triton wheels before a
    one-hour real build.
    """
    from rich.markup import escape

    from tritonbuild.execute import selftest as run_selftest
    from tritonbuild.report import render
    from tritonbuild.report.summary import BuildTables

    console = render.console()
    spirv = run_selftest.run(out, cache_dir, llvm, env=environment(), cwd=Path.cwd(), reporter=console,
                             shows=BuildTables(console))
    console.print(f"[cyan]spirv:[/cyan] {escape(spirv)}")
    console.print("[green bold]self-test passed:[/green bold] this host builds and imports a multi-backend "
                  "Triton-shaped wheel. Next: tritonbuild plan --source PATH-OR-URL --backends 'nvidia;amd'")


@click.command()
@cache_dir_option("Cache root.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(cache_dir: str | None, as_json: bool) -> None:
    """Build dirs under the cache root: their plans, sizes, last build time and wheel outputs."""
    from tritonbuild.execute import builddirs as st
    from tritonbuild.report import render

    builds = cache_root_to_read(cache_dir, environment()) / "build"
    try:
        rows = st.build_dirs(builds)
    except OSError as exc:
        raise EnvironmentProblem(f"Cannot read the build dirs in {builds}: {exc.strerror or exc}. Fix its "
                                 "permissions (or pass --cache-dir).") from None
    if as_json:
        click.echo(jsonout.dumps("status", {"build_dirs": rows, "cache_copies": st.cache_copies(builds.parent)}))
        return
    render.print_build_dirs(rows, render.console())
    render.print_cache_copies(st.cache_copies(builds.parent), render.console())


def cache_root_to_read(cache_dir: str | None, env: Mapping[str, str]) -> Path:
    """The cache root ``status``, ``clean --all`` and ``llvm gc`` look into, checked as plan and build check it: a
    path no directory can be at (a file on the way, text no file system takes) is bad input, exit 2. One this user
    cannot write is still read (what cannot be removed is named entry by entry)."""
    from tritonbuild.settings import cacheroot

    try:
        return cacheroot.usable_cache_root(env, cache_dir)
    except EnvironmentProblem:
        return cacheroot.cache_root(env, cache_dir)
