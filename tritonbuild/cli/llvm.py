"""``tritonbuild llvm ...``: status, fetch, build, path, gc, compat."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tritonbuild import jsonout
from tritonbuild.cli.options import cache_dir_option, environment, plan_command, plan_options, request_of
from tritonbuild.errors import BuildFailed

if TYPE_CHECKING:
    from tritonbuild.execute.compat import Finding


@click.group()
def llvm() -> None:
    """The LLVM a source pins: what is available, fetch or build it, where it is."""


@plan_command(group=llvm)
@plan_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def status(as_json: bool, **kw: Any) -> None:
    """The pin, the candidates found, which one `build` would use and why."""
    from tritonbuild.gather.request import make_plan
    from tritonbuild.llvm import cache
    from tritonbuild.report import render

    p = make_plan(request_of(kw))
    entries = [{"prefix": str(e), **cache.read_marker(e)} for e in cache.entries(Path(p.cache_root))]
    data = {"pin": {"file": p.llvm.pin_file, "hash": p.llvm.pinned_hash, "build_number": p.llvm.build_number,
                    "sha256": p.llvm.sha256}, "archive": p.llvm.archive, "host_suffix": p.llvm.host_suffix,
            "required_targets": list(p.llvm.required_targets), "chosen": {
                "strategy": p.llvm.strategy, "prefix": p.llvm.prefix, "version": p.llvm.version,
                "is_pinned": p.llvm.is_pinned, "found_by": p.llvm.found_by},
            "not_chosen": [{"candidate": c, "why": w} for c, w in p.llvm.rejected], "cache": entries,
            "problem": p.llvm.problem}
    if as_json:
        click.echo(jsonout.dumps("llvm status", data))
        return
    ready = p.llvm.strategy not in ("download", "source") or cache.current(Path(p.llvm.prefix or "/"), p.llvm.sha256)
    render.print_llvm_status(p.llvm, entries, ready, render.console())


@plan_command(group=llvm)
@plan_options
def fetch(**kw: Any) -> None:
    """Download the prebuilt LLVM for the pin, verify it, and cache it."""
    _provide("download", kw)


@plan_command(name="build", group=llvm)
@plan_options
@click.option("--targets", help="LLVM targets (';'/',' separated; default: what the plan needs).")
def build_llvm(targets: str | None, **kw: Any) -> None:
    """Build the pinned LLVM commit from source (mlir and lld, only the needed targets) into the cache."""
    from tritonbuild.resolve.backends import expand_targets, split_list

    over = {"targets": expand_targets(split_list(targets), platform.machine())} if targets else {}
    _provide("source", kw, **over)


def _provide(strategy: str, kw: dict[str, Any], **over: Any) -> None:
    """The plan made with ``--llvm STRATEGY`` and its LLVM provided that way (``over``: what the provider's request
    takes instead of the plan's); prints the prefix."""
    from tritonbuild.gather.request import make_plan
    from tritonbuild.llvm import provision
    from tritonbuild.report import render

    req = request_of(kw).with_flags(llvm=strategy)
    prefix = provision.PROVIDERS[strategy](provision.request_from(make_plan(req), **over), render.console(stderr=True),
                                           req.env)
    click.echo(str(prefix))


@plan_command(group=llvm)
@plan_options
def path(**kw: Any) -> None:
    """Print the prefix `build` would use (for scripts); exit 2 when it is not available yet."""
    from tritonbuild.gather.request import make_plan
    from tritonbuild.llvm import cache

    click.echo(cache.ready_prefix(make_plan(request_of(kw)).llvm))


@plan_command(group=llvm)
@plan_options
@click.option("--range", "given_range", metavar="A..B",
              help="The first-parent history to search, A (the oldest tested) to B, both branches, tags or commits "
                   "(default: HEAD~50..HEAD).")
@click.option("--no-canary", is_flag=True, help="Only the include preflight per commit, no canary compile (fast).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout (progress goes to stderr).")
def compat(given_range: str | None, no_canary: bool, as_json: bool, **kw: Any) -> int:
    """Which commits of a checkout build with one LLVM: each commit tested is exported (as a checkout has it; the
    checkout is never touched), planned with the include preflight, and canary-compiled when that finds nothing;
    the newest commit is tested first, then the oldest, then (both failing: a window may lie between) commits
    between them, then the interval halved to the boundary.

    Prints the newest commit that passes and the first that fails, with its causes. Results are cached per commit
    and LLVM; only the two boundary commits' exported trees are kept. Takes the options `build` takes (--llvm: a
    prefix or system). Exit code 0: a passing commit was found; 1: none; 2: bad input.
    """
    from rich.markup import escape

    from tritonbuild.execute import compat as finder
    from tritonbuild.report import render

    console = render.console(stderr=as_json)
    req = request_of(kw)

    def say(step: finder.Step, number: int, most: int) -> None:
        verdict = "[green]pass[/green]" if step.ok else "[red]fail[/red]"
        console.print(f"step {number} (of at most {most}): {escape(step.commit[:12])} {escape(step.subject)}: "
                      f"{verdict} ({step.seconds:.1f} s{', cached' if step.cached else ''}"
                      f"{'; the preflight fails it, no canary' if step.canary and step.preflight else ''})")

    found = finder.find(req, console, given_range, no_canary=no_canary, say=say, on_start=console.plain)
    if as_json:
        click.echo(jsonout.dumps("llvm compat", found.to_json(), 0 if found.answer.found else 1))
        return 0 if found.answer.found else 1
    for line in _compat_lines(found):
        console.plain(line)
    if not found.answer.found:
        from tritonbuild.resolve.bisect import window_found

        n, between = len(found.history.commits), len(found.steps) - 2
        probed = (f", and so do the {between} commit(s) tested between them (a run of passing commits narrower "
                  f"than {window_found(n)} may lie between those)") if between > 0 else ""
        raise BuildFailed(f"No commit of {found.history.start}..{found.history.end} in {found.checkout} was found "
                          f"to build with LLVM {found.llvm.version} at {found.llvm.prefix}: the oldest and the "
                          f"newest both fail (causes above){probed}. Search another range (--range OLDER..NEWER), "
                          "patch the source (--patch), or use another LLVM.")
    return 0


def _compat_lines(found: Finding) -> list[str]:
    """The answer for a person: newest passing, first failing with its causes grouped as check-llvm prints them,
    and where the kept trees are."""
    a = found.answer
    lines = []
    ok = found.commit(a.newest_passing)
    if ok is not None:
        lines.append(f"newest passing: {ok.sha[:12]} {ok.subject}" + (
            " (the newest commit of the range)" if a.first_failing is None else ""))
    for step in found.shown():
        label = "first failing" if a.found else ("oldest" if step.commit == found.history.commits[0].sha
                                                 else "newest") + " (fails)"
        lines.append(f"{label}: {step.commit[:12]} {step.subject}")
        lines += [f"  reason: {step.reason}"] if step.reason else []
        lines += [f"  preflight: {p}" for p in step.preflight]
        lines += [f"  {c['kind']}: {c['cause']} [{c['units']} unit(s); e.g. {c['example']}]" for c in step.causes]
    if found.exports:
        lines.append(f"trees kept (exported commits): {', '.join(found.exports)}")
    lines.append(f"step results cached in {found.results}")
    return lines


@llvm.command()
@cache_dir_option("Cache root.")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
def gc(cache_dir: str | None, dry_run: bool) -> None:
    """Remove cached LLVMs that no build dir's plan uses.

    An entry is removed under its lock (one a fetch or build holds is skipped), moved aside first so no run sees
    it half-removed; a linked entry is never followed. While a build dir is in use and its plan is not written
    yet, nothing is removed.
    """
    from tritonbuild.cli.host import cache_root_to_read
    from tritonbuild.execute import llvmgc

    llvmgc.collect(cache_root_to_read(cache_dir, environment()), dry_run=dry_run, say=click.echo)
