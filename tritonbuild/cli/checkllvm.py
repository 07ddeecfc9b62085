"""``check-llvm``: does this tree compile against this LLVM? The plan (with its include preflight), the LLVM made
available, the dev dir configured, then the canary compile (``tritonbuild.execute.canary``)."""

from __future__ import annotations

from typing import Any

import click

from tritonbuild.cli.options import plan_command, plan_options, request_of


@plan_command("check-llvm")
@plan_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout (progress goes to stderr).")
def check_llvm(as_json: bool, **kw: Any) -> int:
    """Compile, with -fsyntax-only on all cores, a few translation units that together include every header of the
    tree, against the plan's LLVM; print the errors grouped by cause (units hit, one example each).

    Takes the options `build` takes (--canary too, but check-llvm always runs the canary: with it off a note
    says so). It compiles the whole cover unless --canary-budget (or its env or recipe key) gives a time
    budget (build's default is 120 s). The include preflight's problems (headers this LLVM lacks, known issues)
    are reported with the canary's causes, not instead of them. Exit code 0: everything compiles and the preflight
    found nothing; 1: problems or errors (the build would fail); 2: bad input.
    """
    from tritonbuild import jsonout
    from tritonbuild.errors import BuildFailed, UserError
    from tritonbuild.execute import canary
    from tritonbuild.gather.request import provisioned_plan
    from tritonbuild.report import render

    console = render.console(stderr=as_json)
    req = request_of(kw, keep_preflight=True)
    p = provisioned_plan(req, console)
    if p.llvm.problem:
        raise UserError(p.llvm.problem)
    pin = "the source's pin" if p.llvm.is_pinned else (
        f"{'does not record being' if p.llvm.is_pinned is None else 'not'} the pin {p.llvm.pinned_hash[:12]}")
    where = (f"{p.source.checkout} with {len(p.source.patches)} patch(es) (copy: {p.source.root})"
             if p.source.checkout else p.source.root)
    console.plain(f"check-llvm: {where} against LLVM {p.llvm.version or '?'} at {p.llvm.prefix} ({pin})")
    for problem in p.preflight:
        console.plain(f"preflight: {problem}")
    if p.settings.canary == "off":
        console.plain(f"note: the canary is off ({p.settings.origin('canary')}), but check-llvm always runs it: the "
                      "canary compile is what check-llvm checks; the setting applies to build and develop.")
    result = canary.check(p, console, req.env)
    if as_json:
        failing = 1 if not result.ok or p.preflight else 0
        click.echo(jsonout.dumps("check-llvm", {**result.to_json(), "preflight": list(p.preflight),
                                                "ok": not failing}, failing))
        return failing
    for line in canary.summary(result):
        console.plain(line)
    if not result.ok or p.preflight:
        raise BuildFailed(f"{p.source.checkout or p.source.root} will not build against LLVM "
                          f"{p.llvm.version or '?'} at {p.llvm.prefix}: {len(p.preflight)} problem(s) found "
                          f"before compiling, {len(result.causes)} cause(s) in {len(result.failed)} of "
                          f"{len(result.compiled)} units compiled (above); a build would fail.", log_path=result.log)
    return 0
