"""Render plans, backend lists, build dirs, LLVM status and host reports for people (rich). JSON output lives
in the Plan itself."""

from __future__ import annotations

import os
import sys
from typing import IO, TYPE_CHECKING, Any, cast

from tritonbuild.printable import printable as shown  # every path printed: a newline in it cannot forge a line
from tritonbuild.redact import redact, redact_text

if TYPE_CHECKING:
    from rich.console import Console

    from tritonbuild.plan import LLVMPlan, Plan
    from tritonbuild.report.console import SafeConsole


PIPE_WIDTH = 4096  # piped (a CI log, a file): a line holds any path, hash or paragraph whole


class _Unpadded:
    """A text stream that drops the spaces rich pads lines with (a table title padded to the table's width), so
    what a pipe gets has no trailing spaces; complete lines are passed on as they come."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream, self.pending = stream, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        if lines:
            self.stream.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write(self.pending.rstrip(" "))
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.stream.fileno()


def console(stderr: bool = False, verbosity: int = 0) -> SafeConsole:
    """The one console of every message (``tritonbuild.report.console.SafeConsole``, also the stages'
    ``Reporter``): each piece of text it renders (a message, a table cell, a row) has its control characters
    escaped first, so a hostile name quoted anywhere cannot send the terminal escape sequences; rich's own colours
    come after, from markup. Piped, lines are as wide as their content (no path or sha256 is folded mid-word, no
    table stretched to a width) and carry no trailing spaces: a log reader copies them whole. ``verbosity`` (-v
    less -q, ``tritonbuild.reporter``) says which messages it shows; at -qq it prints nothing (errors are printed
    by ``cli.main`` on a console of their own)."""
    from tritonbuild.report.console import SafeConsole
    from tritonbuild.reporter import MIN_VERBOSITY, clamp

    made = SafeConsole(stderr=stderr, no_color=bool(os.environ.get("NO_COLOR")), highlight=False)
    if not made.is_terminal:
        stream = sys.stderr if stderr else sys.stdout
        made = SafeConsole(file=cast("IO[str]", _Unpadded(stream)), width=PIPE_WIDTH,
                           no_color=bool(os.environ.get("NO_COLOR")), highlight=False)
    made.verbosity = clamp(verbosity)
    made.quiet = made.verbosity <= MIN_VERBOSITY
    return made


def _yn(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "unknown"}[value]


def print_plan(plan: Plan, out: Console) -> None:
    from rich.table import Table

    src, llvm, tc = plan.source, plan.llvm, plan.toolchain
    head = Table(title=f"tritonbuild plan {plan.key}", show_header=False, title_justify="left")
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    commit = f"{src.commit[:12]}{' (dirty)' if src.dirty else ''}" if src.commit else "not a git checkout"
    head.add_row("source", f"{shown(src.checkout or src.root)}  [{src.generation}, Triton {src.version or '?'}, "
                           f"{commit}]")
    _copy_rows(head, plan)
    head.add_row("wheel", f"{plan.wheel.name}-{plan.wheel.version} ({plan.wheel.tag}) -> {shown(plan.wheel.out_dir)}")
    head.add_row("python", plan.python + (f" (the wheel also serves {', '.join(plan.serves)})" if plan.serves
                                          else ""))
    head.add_row("tuple", f"{', '.join(plan.backends_tuple)}  ({len(plan.backends_tuple)}/{src.tuple_limit})")
    pin = f"{llvm.pinned_hash[:12]} ({shown(os.path.basename(llvm.pin_file))}"
    pin += f", build {llvm.build_number})" if llvm.build_number is not None else ")"
    head.add_row("llvm pin", pin)
    head.add_row("llvm targets", " ".join(llvm.required_targets))
    if llvm.prefix:
        head.add_row("llvm", f"{shown(llvm.prefix)}  [{llvm.version}, {llvm.strategy} via {llvm.found_by}, "
                             f"pinned commit: {_yn(llvm.is_pinned)}]")
    else:
        head.add_row("llvm", "[red]none usable[/red]")
    compilers = f"{tc.cxx_compiler} (linker: {tc.linker})"
    head.add_row("toolchain", f"{compilers}, {_cache_words(tc)}, jobs {tc.jobs}, link jobs {tc.link_jobs}, "
                              f"{tc.build_type}{_debug_words(tc)}, proton {'on' if tc.proton else 'off'}")
    head.add_row("build dir", shown(plan.cmake.build_dir))
    if plan.compile_check is not None:
        head.add_row("compile check", plan.compile_check.describe())
    out.print(head)

    table = Table(title="backends", title_justify="left", expand=True)
    # the path gets the room; everything wraps instead of being cut
    for col, ratio in (("name", 2), ("origin", 2), ("path", 5), ("llvm targets", 2), ("commit", 2),
                       ("triton pin", 2)):
        table.add_column(col, overflow="fold", ratio=ratio)
    for b in plan.backends:
        pin = "-"
        if b.triton_pin:
            pin = f"{b.triton_pin[:10]} ({'matches' if b.pin_matches_source else 'differs'})" \
                if b.pin_matches_source is not None else f"{b.triton_pin[:10]} (source commit unknown)"
        commit = f"{b.commit[:10]}{'*' if b.dirty else ''}" if b.commit else "-"
        origin = b.origin if b.origin == "in-tree" else f"plugin ({b.given_as}; name from {b.name_from})"
        table.add_row(b.name, origin, shown(b.path), " ".join(b.llvm_targets) or "-", commit, pin)
    out.print(table)
    if plan.deps:
        out.print(_deps_table(plan.deps))
    for note in plan.notes:
        out.print(f"[cyan]note:[/cyan] {redact_text(note)}")
    for warning in plan.warnings:
        out.print(f"[yellow]warning:[/yellow] {redact_text(warning)}")


def _copy_rows(head: Any, plan: Plan) -> None:
    """The rows of what tritonbuild's copies of the source and the plugins carry: patches, supplied submodules."""
    from rich.markup import escape

    src = plan.source
    if src.patches:
        head.add_row("patches", _patch_words(src.patches, src.root))
    if src.submodules:
        head.add_row("submodules", escape("; ".join(f"{path} at {commit[:12]}" for path, commit in src.submodules)
                                          + f" (--submodule), exported into the copy {shown(src.root)}"))
    for b in plan.backends:
        if b.patches:  # --patch NAME=FILE: shown as the source's are, with the plugin dir the copy is made from
            made = escape(f" (made from the plugin dir {shown(b.checkout or '?')})")
            head.add_row(escape(f"patches (plugin {shown(b.name)})"), _patch_words(b.patches, b.path) + made)


def _patch_words(patches: Any, copy: str) -> str:
    """Each patch (as given, its sha256, the files it touches), and the copy they are applied to (markup escaped:
    a path may hold '[')."""
    from rich.markup import escape

    def files(p: Any) -> str:
        listed = ", ".join(shown(f) for f in p.files[:4]) + (f" and {len(p.files) - 4} more" if len(p.files) > 4
                                                             else "")
        return f"{shown(p.path)} (sha256 {p.sha256[:16]}; {listed})"

    return escape("; ".join(files(p) for p in patches) + f"; applied to the copy {shown(copy)}")  # no markup


def _deps_table(deps: Any) -> Any:
    """Configure-time downloads: where each is declared, its pin, and whether it is fetched or supplied."""
    from rich.table import Table

    table = Table(title="configure-time downloads (FetchContent)", title_justify="left", expand=True)
    for col, ratio in (("name", 2), ("declared in", 4), ("pinned", 2), ("this build", 5)):
        table.add_column(col, overflow="fold", ratio=ratio)
    for d in deps:
        if not d.needed:
            use = "not configured by this plan"
        elif d.supplied:
            at = {True: "at the pin", False: "NOT at the pin", None: "pin not checked"}[d.tag_matches]
            use = f"--dep {shown(d.supplied)} ({at})"
        else:
            use = f"downloads {redact_text(d.url or '?')}"
        table.add_row(d.name, shown(d.declared_in), (d.tag or "-")[:12], use)
    return table


def print_settings(plan: Plan, out: Console) -> None:
    from rich.table import Table

    table = Table(title="settings", title_justify="left")
    table.add_column("setting")
    table.add_column("value")
    table.add_column("from")
    for name, item in plan.settings.report().items():
        table.add_row(name, str(redact(item["value"])), item["origin"])  # a URL's password never shows
    out.print(table)


def print_doctor(rows: list[tuple[str, str, str]], out: Console) -> None:
    from rich.table import Table

    table = Table(title="tritonbuild doctor", title_justify="left")
    table.add_column("what")
    table.add_column("status")
    table.add_column("detail")
    colour = {"ok": "green", "missing": "red", "warn": "yellow", "info": "cyan"}
    for what, status, detail in rows:
        table.add_row(what, f"[{colour.get(status, 'white')}]{status}[/]", detail)
    out.print(table)


def backends_rows(info: Any, plugins: Any) -> list[tuple[str, str, str, str]]:
    rows = []
    for b in info.backends:
        flags = []
        if b.name in info.default_backends:
            flags.append("default")
        if b.name in info.required_backends:
            flags.append("required")
        rows.append((b.name, "in-tree", b.path, ", ".join(flags)))
    for p in plugins:
        rows.append((p.name, "plugin", p.path, f"name from {p.name_from}"))
    return rows


def print_api(results: dict[str, Any], names: dict[str, str], out: Console) -> None:
    """``backends --check``: each backend's verdict, findings and C++ drift."""
    colour = {"compatible": "green", "risky": "yellow", "will fail": "red"}
    for path, api in results.items():
        out.print(f"[bold]{shown(names.get(path, path))}[/bold] ({shown(path)}): "
                  f"[{colour[api.verdict]}]{api.verdict}[/]")
        for f in api.findings:
            out.print(f"  {f.severity}: {f.message}", soft_wrap=False)
        d = api.drift
        if d:
            out.print(f"  C++ drift: Triton pin {d['pin'][:12]} -> source {str(d['source'])[:12]}: {d['status']}; "
                      f"{d['commits']} commits, {d['touching_count']} touch the {d['headers_included']} headers the "
                      "plugin includes")
            for t in d["touching"]:
                out.print(f"    {t['commit']} {t['subject']} ({', '.join(t['files'])})")


def _debug_words(tc: Any) -> str:
    words = f" with debug info {tc.debug_info} ({tc.debug_flag})" if tc.debug_flag else ""
    if tc.unity_batch:
        words += f", unity builds of {tc.unity_batch}" + (f" (not {', '.join(tc.unity_exclude)})"
                                                          if tc.unity_exclude else "")
        words += " (targets that fail joined are learned: unity-learned.txt in the build dir)"
    return words


def _cache_words(tc: Any) -> str:
    """The compiler cache and distcc fleet in a few words ("ccache: /usr/bin/ccache", "sccache: ...", ...)."""
    words = f"{tc.compiler_cache}: {tc.launcher}" if tc.compiler_cache != "none" else "compiler cache: off"
    if tc.distcc_hosts:
        words += f", distcc: {redact_text(tc.distcc_hosts)}"
    return words


def print_build_dirs(rows: list[dict[str, Any]], console: Console) -> None:
    """``tritonbuild status``: one row per build dir; a develop dir says so, with its last develop request's options
    (``clean --develop`` removes them): "yes" for the one its checkout's develop uses now, "used before" for the
    others that checkout's develop made."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="build dirs", title_justify="left")
    for col in ("key", "source", "backends", "size", "last build", "wheels", "develop"):
        table.add_column(col)
    for r in rows:
        used = "yes" if r.get("develop_current") else "used before"  # only the checkout's newest develop is in use
        dev = (used + (f": {shown(r['develop_request'])}" if r.get("develop_request") else "")) \
            if r.get("develop") else "-"
        table.add_row(r["key"], shown(r["source"] or "?"), ", ".join(r["backends"]), f"{r['size'] / 2**20:.1f} MiB",
                      _local_minute(r["last_build"]), "\n".join(shown(w) for w in r["wheels"]) or "-", Text(dev))
    console.print(table)


def _local_minute(when: str | None) -> str:
    """A row's ISO 8601 time (UTC, as ``status --json`` gives it) as this host's local time to the minute."""
    import datetime

    return datetime.datetime.fromisoformat(when).astimezone().strftime("%Y-%m-%d %H:%M") if when else "-"


def print_cache_copies(rows: list[dict[str, Any]], console: Console) -> None:
    """``tritonbuild status``: one line per patched copy and llvm compat tree (``clean --all`` removes them), never
    wrapped: a reader copies the path whole, piped or at 80 columns."""
    from rich.markup import escape

    if not rows:
        return
    console.print("patched copies and llvm compat trees (clean --all removes them):")
    for r in rows:
        console.print(escape(f"  {r['kind']} of {shown(r['of'])}: {r['size'] / 2**20:.1f} MiB, {shown(r['path'])}"),
                      soft_wrap=True, highlight=False)


def print_llvm_status(llvm: LLVMPlan, entries: list[dict[str, Any]], ready: bool, out: Console) -> None:
    """``tritonbuild llvm status``: the pin, the LLVM ``build`` would use and why the others were not."""
    out.print(f"pin: {llvm.pinned_hash} ({shown(llvm.pin_file)})"
              + (f", build {llvm.build_number}" if llvm.build_number is not None else ""))
    out.print(f"prebuilt archive for this host: {llvm.archive or 'none'}"
              + (" (sha256 pinned)" if llvm.host_suffix in llvm.sha256 else " (no sha256 in the pin)"))
    out.print(f"targets needed: {' '.join(llvm.required_targets)}")
    if llvm.prefix:
        state = "" if ready else " (not in the cache yet: `build` will fetch/build it)"
        out.print(f"[green]build would use:[/green] {shown(llvm.prefix)} via {llvm.strategy}{state}; pinned commit: "
                  f"{ {True: 'yes', False: 'no', None: 'unknown'}[llvm.is_pinned] }")
    for cand, why in llvm.rejected:
        out.print(f"  not used: {shown(cand)}: {why}")
    for e in entries:
        out.print(f"  cached: {shown(e['prefix'])} ({e.get('provider')}, {e.get('llvm_hash', '?')[:12]})")
    if llvm.problem:
        out.print(f"[red]problem:[/red] {llvm.problem}")


def print_matrix(plans: list[Plan], out: Console) -> None:
    """The wheels a matrix build will make: one row per interpreter."""
    from rich.table import Table

    table = Table(title="wheels", title_justify="left")
    for col in ("python", "tag", "wheel", "build dir"):
        table.add_column(col, overflow="fold")
    for p in plans:
        table.add_row("\n".join((p.python, *p.serves)), p.wheel.tag, f"{p.wheel.name}-{p.wheel.version}",
                      shown(p.cmake.build_dir))
    out.print(table)

