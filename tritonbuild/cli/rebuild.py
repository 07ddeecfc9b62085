"""``tritonbuild rebuild PROVENANCE``: build again what a provenance file (``<wheel>.provenance.json``) says was
built, through the same request path as ``build`` (``tritonbuild.gather.request`` with the provenance's data settings as
the flag values), and say whether the result is byte-identical to the provenance's subject (exit 0) or what differs
(exit 1). The provenance is hostile input: data, never a locator of code. What may be taken from it is
``tritonbuild.wheel.provenance_fields``; the rules that apply it (the file read, the refusal, the source and
interpreter chosen, the plans checked, what was taken from where and what differs) are
``tritonbuild.wheel.rebuild_rules``; this command says them. A malformed or untrusted one is exit 2 before any work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tritonbuild.cli.options import (
    NonEmpty,
    cache_dir_option,
    container_left_out,
    environment,
    request_of,
    verbosity_options,
)
from tritonbuild.errors import UserError

if TYPE_CHECKING:
    from tritonbuild.plan import Plan
    from tritonbuild.reporter import Reporter
    from tritonbuild.result import BuildResult
    from tritonbuild.wheel.attestation import Claim


@click.command()
@click.argument("provenance", type=click.Path())
@click.option("--out", "-o", default="rebuilt", show_default=True,
              type=NonEmpty("the current directory", "name the output directory, or leave --out out for ./rebuilt"),
              help="Output directory for the rebuilt wheel (never the one that holds the provenance).")
@cache_dir_option()
@click.option("--source", "-s", help="A checkout (or git URL) at the provenance's source commit; needed unless "
                                     "--trust-provenance (a provenance never says where the code is).")
@click.option("--plugin-dir", "plugin_dirs", multiple=True,
              help="A plugin dir (repeatable) instead of the provenance's (its commit is compared).")
@click.option("--llvm", help="The LLVM (auto, system, download, source or a prefix path) instead of the provenance's.")
@click.option("--python", help="Interpreter to build with (default: this machine's of the provenance's Python "
                               "version; the provenance's interpreter path is never run; its ABI must match).")
@click.option("--wheel", "subject", type=click.Path(),
              help="The subject wheel, for a member-by-member diff (default: the file of its name next to the "
                   "provenance).")
@click.option("--trust-provenance", is_flag=True,
              help="Take from the provenance the fields that locate code or reach a host (the source's path or "
                   "URL, cmake_args, patches, plugin dirs, deps, the LLVM and its mirror, ...; each is printed); "
                   "without it (or the flag that replaces each), a provenance that sets one is refused before any "
                   "work.")
@click.option("--no-smoke-test", is_flag=True, help="Skip the wheel's build-time checks before publishing it: the "
              "import, and with it the compile check (and the RECORD and library checks).")
@verbosity_options
def rebuild(provenance: str, out: str, cache_dir: str | None, source: str | None, plugin_dirs: tuple[str, ...],
            llvm: str | None, python: str | None, subject: str | None, trust_provenance: bool,
            no_smoke_test: bool, verbose: int, quiet: int) -> int:
    """Rebuild a wheel from its provenance (same source commit, plugins, LLVM and settings) and check that the
    result is byte-identical to it: exit 0 when it is, 1 when not (naming the sha256s, the settings and
    dependencies that differ and the wheel members that differ), 2 for a malformed or untrusted provenance. A
    provenance is data: the source is --source (or, with --trust-provenance, the provenance's)."""
    from tritonbuild.execute import build as build_mod
    from tritonbuild.execute.runs import UNCHECKED
    from tritonbuild.gather import request
    from tritonbuild.report import render
    from tritonbuild.wheel import attestation, rebuild_rules

    container_left_out(click.get_current_context())
    path = Path(provenance)
    read = rebuild_rules.read(path)
    claim = read.claim
    given = {k: v for k, v in (("plugin_dirs", plugin_dirs), ("llvm", llvm)) if v}
    typed = frozenset(f for f, v in (("--source", source), ("--plugin-dir", plugin_dirs), ("--llvm", llvm)) if v)
    rebuild_rules.refuse_untrusted(read, str(path), typed, trust_provenance)
    rebuild_rules.check_plugin_count(read.claim, plugin_dirs)
    console = render.console(verbosity=verbose - quiet)
    promise = rebuild_rules.not_promised(claim)
    if promise:
        console.warn(promise, topic="note")
    if trust_provenance and "plugin_dirs" not in given and claim.settings.get("plugin_dirs"):
        given["plugin_dirs"] = rebuild_rules.plugin_dirs(claim)
    interpreter = rebuild_rules.interpreter(claim, python, environment())
    flags = request.flag_settings()
    kw, notes = attestation.rebuild_request(claim, source=rebuild_rules.source(claim, source, trust_provenance),
                                            python=interpreter, cache_dir=cache_dir, out=out, flags=flags,
                                            trust=trust_provenance, given=given)
    for line in rebuild_rules.sources_said(claim, kw, source_given=bool(source), python_given=bool(python),
                                           interpreter=interpreter, trust=trust_provenance):
        console.plain(line)
    for note in notes:
        console.warn(note, topic="note")
    req = request_of(kw, smoke_test=not no_smoke_test)
    plans = request.provisioned_plans(req, console, check=_checker(claim, [path.parent, Path(subject or path).parent]))
    if len(plans) != 1:
        raise UserError(f"The provenance's settings make {len(plans)} plans; a rebuild makes one wheel.")
    plan = plans[0]
    if console.verbosity >= 0:
        render.print_plan(plan, console)
    for line in rebuild_rules.machine_said(claim, plan.settings, flags):
        console.plain(line)
    if not req.smoke_test:
        console.note(UNCHECKED)
    result = build_mod.build_wheel(plan, console, env=req.env, smoke=req.smoke_test)
    return _report(claim, plan, result, Path(subject) if subject else path.parent / claim.wheel, promise, console)


def _checker(claim: Claim, keep: list[Path]) -> Callable[[list[Plan]], None]:
    """The check ``provisioned_plans`` runs before any work: the output dir's, then ``rebuild_rules``'."""
    from tritonbuild.execute import outdir
    from tritonbuild.wheel import rebuild_rules

    def check(plans: list[Plan]) -> None:
        outdir.check(plans)
        rebuild_rules.check_plans(claim, keep, plans)

    return check


def _report(claim: Claim, plan: Plan, result: BuildResult, wheel: Path, promise: str | None,
            console: Reporter) -> int:
    """The subject's and the rebuild's sha256, and what differs when they do (``rebuild_rules.differences``): the
    command's exit code (0: the same wheel, 1: not)."""
    from tritonbuild.wheel import rebuild_rules

    console.result(f"subject: {claim.wheel} sha256 {claim.sha256}")
    console.result(f"rebuilt: {result.wheel} sha256 {result.sha256}")
    if result.sha256 == claim.sha256:
        console.result("identical: yes, the rebuild is byte for byte the provenance's wheel")
        return 0
    found = rebuild_rules.differences(claim, plan, result.wheel, wheel)
    why = " (built without --reproducible: byte identity was never promised, see the note above)" if promise else ""
    console.result(f"identical: no, sha256 {claim.sha256} in the provenance, {result.sha256} rebuilt{why}")
    if result.wheel.name != claim.wheel:
        console.result(f"  the wheel's name differs: {claim.wheel} in the provenance, {result.wheel.name} rebuilt")
    for what, lines in found.items():
        for line in lines:
            console.result(f"  {what}: {line}")
    return 1
