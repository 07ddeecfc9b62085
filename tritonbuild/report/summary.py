"""The build summary: one table of what ``build`` made, for people (rich)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.table import Table

from tritonbuild.plan import Plan
from tritonbuild.resolve import compilecheck
from tritonbuild.resolve.nvidia import missing_tools
from tritonbuild.result import BuildResult

if TYPE_CHECKING:
    from rich.console import Console

    from tritonbuild.report.console import SafeConsole


def bundle_line(plan: Plan, bundled: Mapping[str, Any]) -> str:
    """One line on how the wheel was made self-contained (for the summary)."""
    if not plan.wheel.bundle_libs:
        return "off (--no-bundle-libs): the wheel needs what this machine's libraries need"
    libs = bundled.get("bundled", [])
    size = sum(int(b.get("size", 0)) for b in libs) / 2**20
    copied = (f"{len(libs)} copied into triton/_C ({size:.1f} MiB): {', '.join(b['name'] for b in libs)}"
              if libs else "nothing to copy")
    dropped = len(bundled.get("dropped", []))
    return f"LLVM linked {plan.llvm.link}; {copied}" + (f"; {dropped} unused needed entries dropped" if dropped else "")


def check_line(plan: Plan, report: Mapping[str, Any]) -> str:
    """One line on the compile check (for the summary), with the LLVM when it is not the source's pin."""
    if not report.get("enabled"):
        return f"off ({report.get('why', 'not run')})"
    line = compilecheck.counts_line(report["counts"], report["seconds"])
    if report.get("skipped"):  # nothing it judges changed since it passed in this build dir: that run's counts
        line += " (the last run's: skipped, unchanged since)"
    if plan.llvm.is_pinned is not True:
        line += (f"; LLVM {plan.llvm.version} is not the source's pin {plan.llvm.pinned_hash[:12]}: these kernels "
                 "compile with it, others may not")
    return line


def print_summary(plan: Plan, result: BuildResult, console: Console) -> None:
    t = Table(title="built", show_header=False, title_justify="left")
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")  # paths are copied from CI logs: never cut them
    t.add_row("wheel", str(result.wheel))
    t.add_row("size", f"{result.size / 2**20:.1f} MiB")
    t.add_row("sha256", result.sha256)
    t.add_row("backends", ", ".join(plan.backend_names) + (" (+proton)" if plan.toolchain.proton else ""))
    t.add_row("time", f"{result.seconds:.1f} s  (" + ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
              + ")")
    if result.ccache:
        remote = f", {result.ccache['remote_hits']} from remote storage" if result.ccache.get("remote_hits") else ""
        t.add_row("ccache", f"{result.ccache['hits']} hits, {result.ccache['misses']} misses{remote}")
    if result.sccache:
        sc = result.sccache
        t.add_row("sccache", f"{sc['hits']} hits, {sc['misses']} misses ({sc['location']})")
    if result.distcc:
        t.add_row("distcc", f"{result.distcc['remote']} objects compiled on {plan.toolchain.distcc_hosts}, "
                            f"{result.distcc['local']} locally")
    if result.republished:
        t.add_row("ninja", "no work to do; nothing the wheel holds changed: the last wheel was published again")
    elif result.ninja_no_work:
        t.add_row("ninja", "no work to do")
    if result.unity_learned:
        t.add_row("unity", f"learned: {', '.join(result.unity_learned)} clash when joined; built file by file, "
                           "and so from now on for this commit")
    if result.time_report:
        t.add_row("critical path", critical_line(result.time_report))
    t.add_row("libraries", bundle_line(plan, result.bundled))
    t.add_row("compile check", check_line(plan, result.compile_check))
    if lacking := missing_tools(plan):
        t.add_row("nvidia tools", f"missing: {', '.join(lacking)} (not in backends/nvidia/bin; see the plan's warning)")
    if result.repaired:
        r = result.repaired
        t.add_row("repair", f"{r['size_before'] / 2**20:.1f} MiB -> {r['size_after'] / 2**20:.1f} MiB "
                            f"({r['platform']}; not grafted: {', '.join(r['excluded']) or 'none'})")
    for name, path in result.targets.items():
        t.add_row(f"target {name}", path or "built (no file of that name in the build dir)")
    t.add_row("log", str(result.log))
    console.print(t)


@dataclass(frozen=True)
class BuildTables:
    """How ``build`` and ``selftest`` show a run (``execute.runs.Shows``) on the console: each plan before its build
    (at ``-q`` only its warnings), the summary of what it made, and with several wheels the table of them."""

    console: SafeConsole

    def plan(self, plan: Plan) -> None:
        from tritonbuild.redact import redact_text
        from tritonbuild.report import render

        if self.console.verbosity >= 0:
            render.print_plan(plan, self.console)
        else:  # -q: of the plan, only its warnings
            for warning in plan.warnings:
                self.console.warn(redact_text(warning))

    def built(self, plan: Plan, result: BuildResult) -> None:
        print_summary(plan, result, self.console)

    def wheels(self, built: Sequence[tuple[Plan, BuildResult]]) -> None:
        """The matrix: each interpreter's wheel, time and compiler-cache figures (the later ones hit the first's)."""
        t = Table(title="wheels", title_justify="left")
        for col in ("python", "wheel", "time", "compiler cache"):
            t.add_column(col, overflow="fold")
        for plan, result in built:
            cache = result.ccache or result.sccache
            figures = f"{cache.get('hits', 0)} hits, {cache.get('misses', 0)} misses" if cache else "-"
            t.add_row(plan.python, result.wheel.name, f"{result.seconds:.1f} s", figures)
        self.console.print(t)


def critical_line(report: Mapping[str, Any]) -> str:
    """Why the build took what it took: the chain it waited on and the slowest edges (from Ninja's log)."""
    path = report["critical_path"]
    slow = ", ".join(f"{_short(e['output'])} {e['seconds']:.1f} s" for e in report["slowest"][:3])
    line = (f"{report['critical_path_seconds']:.1f} s of {report['wall_seconds']:.1f} s wall over {len(path)} of "
            f"{report['edges']} edges, ending {_short(path[-1]['output'])}; slowest: {slow}")
    if runs := report.get("runs"):
        walls = " + ".join(f"{r['wall_seconds']:.1f} s" for r in runs)
        line += f" (the last of {len(runs)} Ninja runs: {walls})"
    return line


def _short(output: str) -> str:
    return output.rsplit("/", 1)[-1]

