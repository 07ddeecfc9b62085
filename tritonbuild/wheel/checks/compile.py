"""The compile check: the kernel corpus (``tritonbuild.resolve.compilecheck``) compiled through the wheel's own
``triton.compile`` (``wheel.compilecheck_run``). At build time the plan's corpus, with the unpacked wheel on the
path; its report goes into the manifest. In ``verify --compile`` the corpus of the wheel's backends, in the venv the
import check made."""

from __future__ import annotations

import time
from typing import Any

from tritonbuild.plan import Plan
from tritonbuild.reporter import silent
from tritonbuild.resolve import compilecheck
from tritonbuild.wheel import compilecheck_run
from tritonbuild.wheel.checks.base import BuildSide, Context, Finding, status
from tritonbuild.wheel.checks.importing import venv_of


def report(plan: Plan, results: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """The manifest's record of the check: counts, each case, and the LLVM the wheel was built with."""
    return {"enabled": True, "seconds": round(seconds, 2), "counts": compilecheck.summarize(results),
            "llvm": {"version": plan.llvm.version, "pinned_hash": plan.llvm.pinned_hash,
                     "is_pinned": plan.llvm.is_pinned},
            "cases": [{k: v for k, v in r.items() if k != "traceback"} for r in results]}


def _at_build(build: BuildSide) -> Finding:
    plan, check = build.plan, build.plan.compile_check
    if check is None or not check.enabled:
        why = check.why_off if check else "not planned"
        return Finding("compile", "skip", f"off: {why}", report={"enabled": False, "why": why})
    now = compilecheck_run.judged(plan, build.root, build.extra_paths)
    kept = compilecheck_run.passed_before(plan, now)
    if kept is not None:  # nothing it judges changed since it passed in this build dir
        build.log.write(kept[1] + "\n")
        build.reporter.note(kept[1], topic="compile check")
        return Finding("compile", "ok", "skipped: passed before, unchanged", report={**kept[0], "skipped": kept[1]})
    build.reporter.note(check.describe(), topic="compile check")
    start = time.monotonic()
    build.log.write(f"$ compile check: {plan.python} {compilecheck_run.SCRIPT} ({len(check.cases)} cases)\n")
    memo = compilecheck_run.ptxas_memo_dir(plan)
    try:
        results = compilecheck_run.run_check(plan.python, build.root, check, extra_paths=build.extra_paths,
                                             ptxas_memo=memo, log=lambda line: build.log.write(f"{line}\n"))
    except RuntimeError as exc:
        return Finding("compile", "fail", f"could not run: {exc}", message=f"The compile check could not run: "
                       f"{exc}. The wheel was not written to the output dir (--no-compile-check skips the check).")
    counts = compilecheck.counts_line(compilecheck.summarize(results))
    bad = compilecheck.failures(results)
    if bad:
        compilecheck_run.remember(plan, now, None)
        note = compilecheck.llvm_note(plan.llvm.pinned_hash, plan.llvm.is_pinned, plan.llvm.version)
        return Finding("compile", "fail", counts, message=compilecheck.failure_message(results, llvm_note=note),
                       tail="\n".join(compilecheck.describe_failures(bad)))
    done = report(plan, results, time.monotonic() - start)
    compilecheck_run.remember(plan, now, done)
    return Finding("compile", "ok", counts, report=done)


def _in_venv(ctx: Context, timeout: int) -> Finding:
    venv, backends = venv_of(ctx), ctx.expected_backends
    site = next(iter(sorted(venv.glob("lib/python*/site-packages"))), venv)
    version = ctx.wheel.name.split("-")[1] if ctx.wheel.name.count("-") >= 4 else None
    plan = compilecheck.plan_check(True, timeout, backends, triton_version=version)
    try:
        results = compilecheck_run.run_check(str(venv / "bin" / "python"), site, plan, on_path=False, log=silent)
    except RuntimeError as exc:
        return Finding("compile", "fail", str(exc))
    bad = compilecheck.failures(results)
    detail = f"{compilecheck.counts_line(compilecheck.summarize(results))} ({', '.join(backends)})"
    if bad:
        detail += ": " + "; ".join(compilecheck.describe_failures(bad)[:6])
    return Finding("compile", status(not bad), detail)


class Corpus:
    name = "compile"
    runs_wheel_code = True  # not run after an integrity check failed (registry.run)

    def applies(self, ctx: Context) -> bool:
        """At build time always (a check the plan turned off says why in the manifest); in ``verify`` with
        ``--compile``."""
        return ctx.build is not None or ctx.compile_timeout is not None

    def run(self, ctx: Context) -> list[Finding]:
        """At build time the plan's corpus; in ``verify`` the corpus in the venv the import check made (nothing
        when it made none: its failure says why)."""
        if ctx.build is not None:
            return [_at_build(ctx.build)]
        if not (venv_of(ctx) / "bin" / "python").exists():
            return []
        return [_in_venv(ctx, ctx.compile_timeout or 120)]
