"""``doctor``, ``selftest``, ``example`` and ``status``: this host, the bundled example tree, the build dirs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click

from tritonbuild import jsonout
from tritonbuild.cli.options import NonEmpty, cache_dir_option, container_left_out, environment
from tritonbuild.errors import EnvironmentProblem


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
    from tritonbuild.example.into import write_into

    write_into(dest, generation, with_plugin, say=click.echo)


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

    container_left_out(click.get_current_context())
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
    rows = st.build_dirs(builds)
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
