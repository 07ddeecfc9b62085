"""``plan``, ``build``, ``develop``, ``test`` and ``clean``: the commands that resolve a plan from the settings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tritonbuild.cli.options import NonEmpty, plan_command, plan_options, request_of, verbosity, verbosity_options

if TYPE_CHECKING:
    from tritonbuild.execute.lastrequest import Recall
    from tritonbuild.gather.request import Request


@plan_command()
@plan_options
@click.option("--json", "as_json", is_flag=True, help="Print the plans as JSON: one object (see the README).")
@click.option("--settings", "show_settings", is_flag=True, help="Also show where each setting came from.")
def plan(as_json: bool, show_settings: bool, **kw: Any) -> None:
    """Resolve the build and print what `build` will do (a plan per --python). Changes nothing on disk."""
    from tritonbuild import jsonout
    from tritonbuild.cli.container import check_container
    from tritonbuild.execute.buildenv import build_python_note
    from tritonbuild.gather.request import make_plans
    from tritonbuild.report import render

    req = request_of(kw)
    check_container(req)  # what `build --container` refuses, refused here too, before anything is cloned
    plans = make_plans(req)
    notes = [build_python_note(p) for p in plans]
    if as_json:
        click.echo(jsonout.dumps("plan", {"plans": [p.to_dict() for p in plans]}))
        return
    out = render.console()
    for p, note in zip(plans, notes, strict=True):
        render.print_plan(p, out)
        if note:
            out.print(f"[cyan]note:[/cyan] {note}")
        if show_settings:
            render.print_settings(p, out)
    if len(plans) > 1:
        render.print_matrix(plans, out)


@plan_command()
@plan_options
@click.option("--out", "-o", help="Output directory for the wheel (default: ./dist, or the recipe's out_dir).",
              type=NonEmpty("./dist (or the recipe's out_dir)", "name the output directory, or leave --out out"))
@click.option("--no-smoke-test", is_flag=True, help="Skip the wheel's build-time checks before publishing it: the "
              "import, and with it the compile check (and the RECORD and library checks).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout, one object with a list of "
              "wheels (progress goes to stderr).")
@click.option("--compile-commands", is_flag=True, help="Also link compile_commands.json at the source root for "
              "editors, as `develop` does (by default `build` writes nothing into the checkout).")
@verbosity_options
def build(out: str | None, no_smoke_test: bool, as_json: bool, compile_commands: bool, **kw: Any) -> int:
    """Build a wheel with the selected backends into ./dist (or --out); one per --python.

    Several interpreters build one after the other in build dirs of the same depth, so the compiler cache serves
    every translation unit that does not include Python's headers from the first build.
    """
    from tritonbuild import jsonout
    from tritonbuild.execute import outdir
    from tritonbuild.execute.runs import run_builds
    from tritonbuild.gather.request import provisioned_plans
    from tritonbuild.report import render
    from tritonbuild.report.summary import BuildTables
    from tritonbuild.wheel import publish

    console = render.console(stderr=as_json, verbosity=verbosity(kw))
    req = request_of(kw, out=out, smoke_test=not no_smoke_test)
    from tritonbuild.cli.container import build_in_container

    if (code := build_in_container(req, click.get_current_context(), console)) is not None:
        return code  # --container: the build ran inside the image, its exit code is ours
    # the output dir is checked before the LLVM is provisioned or a lock taken
    plans = provisioned_plans(req, console, check=outdir.check)
    results = run_builds(plans, console, BuildTables(console), env=req.env, smoke=req.smoke_test,
                         compile_commands=compile_commands)
    if as_json:
        manifests = [publish.manifest(p, r) for p, r in zip(plans, results, strict=True)]
        click.echo(jsonout.dumps("build", {"wheels": manifests}))
    return 0


@plan_command()
@plan_options
@click.option("--forget", is_flag=True, help="Ignore this checkout's last develop request: use only the options "
              "given now (and remember them instead).")
@verbosity_options
def develop(forget: bool, **kw: Any) -> None:
    """Build incrementally and install editable into the active environment.

    The environment is $VIRTUAL_ENV, else $CONDA_PREFIX, else this interpreter (--python picks another).
    Python files of the source and plugins are live; a rebuilt libtriton is used on the next import.
    A checkout's last develop request is remembered: options not given now (nor by the environment) are taken
    from it, and it says so in one line.
    """
    from tritonbuild.execute import develop as dev
    from tritonbuild.execute import lastrequest
    from tritonbuild.gather.request import provisioned_plan
    from tritonbuild.report import render

    console = render.console(verbosity=verbosity(kw))
    recalled = _recalled("develop", request_of(kw, editable=True), console, forget=forget)
    req = recalled.request
    p = provisioned_plan(req, console)
    unsaved = lastrequest.remember(req, recalled, Path(p.cmake.build_dir))
    if unsaved:
        console.warn(unsaved)
    for w in p.warnings:
        console.warn(w)
    r = dev.develop(p, console, env=req.env)
    what = {"no": "no reconfigure", "yes": "configured", "clean": "clean reconfigure"}[r.configured]
    ninja = "ninja: no work" if r.ninja_no_work else "rebuilt"
    installed = "editable install updated" if r.installed else "editable install unchanged"
    console.print(f"develop {p.key}: {what}, {ninja}, {installed} in {r.site} ({r.seconds:.2f} s; log {r.log})")
    for name, path in r.targets.items():
        console.print(f"target {name}: {path or 'built (no file of that name in the build dir)'}")


@plan_command()
@click.argument("suite", type=click.Choice(["lit", "unit", "python"]), default="lit")
@plan_options
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
def test(suite: str, extra: tuple[str, ...], **kw: Any) -> int:
    """Run the source's lit tests, C++ unit tests (ctest) or Python tests against the develop build.

    Arguments after -- go to the test runner (an unknown option before -- is an error, not forwarded); the exit
    code is the runner's.
    """
    from tritonbuild.execute import source_tests
    from tritonbuild.gather.request import make_plan
    from tritonbuild.report import render

    console = render.console()
    p = make_plan(_recalled("test", request_of(kw), console).request)
    return source_tests.run(p, suite, list(extra), console)


def _recalled(command: str, req: Request, console: Any, *, forget: bool = False) -> Recall:
    """The request over its checkout's last develop request, said in one line when any part of it is used."""
    from tritonbuild.execute import lastrequest

    recalled = lastrequest.recall(req, forget=forget)
    if recalled.note:
        console.warn(recalled.note, topic="note")
    if recalled.used:
        console.plain(f"{command}: using the last request of this checkout: {recalled.used}")
    return recalled


@plan_command()
@click.option("--all", "all_", is_flag=True, help="Remove every build dir under the cache root, the patched "
              "copies (--patch) and llvm compat's exported trees, and forget every checkout's develop request (with "
              "--develop: every develop dir and those requests, nothing else).")
@click.option("--develop", "develop_only", is_flag=True, help="Only build dirs `develop` used, with the links it "
              "made in the checkout, and forget its develop request: this checkout's, or with --all every "
              "checkout's.")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@plan_options
def clean(all_: bool, develop_only: bool, dry_run: bool, **kw: Any) -> None:
    """Remove build dirs: with no setting given, every one made from this checkout (--source, else the current
    directory); with settings (the options `build` takes), the build dir of their plan; with --all, every one.

    Only dirs tritonbuild made are removed, each under its lock: one a running build or develop holds is left
    alone and named, and so is anything else under the cache root (a link is never followed). The links build and
    develop made in the checkout (compile_commands.json, python/triton/_C's libraries) go with their build dir.
    """
    from tritonbuild.cli.host import cache_root_to_read
    from tritonbuild.execute import builddirs as st
    from tritonbuild.execute.lastrequest import checkout_of
    from tritonbuild.settings import cacheroot

    req = request_of(kw)
    given = cache_root_to_read(req.cache_dir, req.env) if all_ else cacheroot.cache_root(req.env, req.cache_dir)
    root = given / "build"
    targets = st.listed(root) if all_ else _of_request(req, root)  # the settings and cache dir checked first
    st.listed(root)  # a root linked to nowhere stops every clean before anything is touched
    if develop_only:
        targets = [d for d in targets if not st.is_build_dir(d) or st.has_develop(d)]
    checkout = None if all_ else checkout_of(req)
    links = st.checkout_links(checkout, root) if checkout is not None else []
    done = st.remove_build_dirs(targets, dry_run=dry_run)
    copies = st.remove_cache_copies(root.parent, dry_run=dry_run) if all_ and not develop_only else st.Cleaned()
    if checkout is not None:  # the checkout's links into build dirs removed now, gone, or made from its old path
        done.links = st.drop_stale_links(links, checkout, done.removed, dry_run=dry_run)
    _say_cleaned(root, done, copies, dry_run)
    if all_ or develop_only:  # develop's memory of a checkout goes with what it built
        _forget(root.parent, None if all_ else checkout_of(req), dry_run)


def _forget(cache_root: Path, checkout: Path | None, dry_run: bool) -> None:
    """Remove the develop records of every checkout (``checkout`` None) or of one; say how many."""
    from tritonbuild.execute.lastrequest import records
    from tritonbuild.printable import printable
    from tritonbuild.report import render

    found = records(cache_root, checkout)
    gone = 0
    for path in found:
        try:
            if not dry_run:
                path.unlink()
            gone += 1
        except FileNotFoundError:
            pass
        except OSError as exc:
            render.console().print(f"note: {printable(str(path))} could not be removed ({exc.strerror or exc}): the "
                                   "next develop of its checkout still reads it", soft_wrap=True, highlight=False,
                                   markup=False)
    if gone:
        render.console().print(f"{'would forget' if dry_run else 'forgot'} {gone} develop request(s) "
                               f"(under {printable(str(cache_root / 'develop'))})", soft_wrap=True, highlight=False,
                               markup=False)


def _say_cleaned(root: Path, done: Any, copies: Any, dry_run: bool) -> None:
    from rich.markup import escape

    from tritonbuild.errors import EnvironmentProblem
    from tritonbuild.report import render

    out = render.console()
    for note in done.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    for d in done.removed:
        out.print(escape(f"{'would remove' if dry_run else 'removed'} {d}"), soft_wrap=True, highlight=False)
    for line in done.links:
        out.print(escape(line), soft_wrap=True, highlight=False)
    verb = "would free" if dry_run else "freed"
    out.print(f"{len(done.removed)} build dir(s), {verb} {done.freed / 2**20:.1f} MiB"
              + (f"; {len(done.notes)} left alone" if done.notes else ""))
    for note in copies.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    if copies.removed or copies.notes or copies.failed:
        out.print(f"{len(copies.removed)} patched copy or llvm compat dir(s), {verb} {copies.freed / 2**20:.1f} MiB"
                  + (f"; {len(copies.notes)} left alone" if copies.notes else ""))
    done.failed += copies.failed
    if done.failed:
        raise EnvironmentProblem(
            f"Could not {'look into' if dry_run else 'remove'} {len(done.failed)} dir(s) under {root.parent}: "
            f"{'; '.join(done.failed)}. Each path named is where it stopped: fix its permissions (the cache root may "
            "not be this user's, or the disk read-only) or remove it as its owner, and run clean again; a build dir "
            "whose removal was cut short keeps its marker, so clean still knows it.")


def _of_request(req: Request, root: Path) -> list[Path]:
    """The build dirs a ``clean`` without --all names: with no setting but --source given (no recipe, no --python),
    every one made from the checkout; otherwise the one of the plan."""
    from tritonbuild.execute import builddirs as st
    from tritonbuild.execute.lastrequest import checkout_of
    from tritonbuild.settings.model import SPEC_BY_NAME

    by_source = not req.recipe and not req.pythons and all(
        v in (None, (), []) for n, v in req.flags.items() if SPEC_BY_NAME[n].identity != "tree")
    checkout = checkout_of(req) if by_source else None
    if checkout is None:
        return _of_plan(req)
    found = st.of_source(root, checkout)
    if not found and not checkout.exists():  # a checkout removed since is cleaned by its path; a typo is said
        from tritonbuild.errors import UserError

        raise UserError(f"{checkout} (--source) does not exist, and no build dir under {root} was made from it. "
                        "Check the path (`tritonbuild status` lists each build dir's source), or use clean --all.")
    return found


def _of_plan(req: Request) -> list[Path]:
    from tritonbuild.gather.request import make_plan

    p = make_plan(req)
    d = Path(p.cmake.build_dir)
    return [d] if d.exists() or d.is_symlink() else []
