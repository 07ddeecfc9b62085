"""The comparison of two wheels (``tritonbuild.wheel.compare``) as tables for people."""

from __future__ import annotations

from typing import Any


def print_compare(r: dict[str, Any]) -> None:
    from rich.table import Table

    from tritonbuild.report import render

    out = render.console()
    s = r["sizes"]
    out.print(f"A {r['a']}: {s['a_files']} files, {s['a_bytes'] / 2**20:.1f} MiB")
    out.print(f"B {r['b']}: {s['b_files']} files, {s['b_bytes'] / 2**20:.1f} MiB")
    for side in ("a", "b"):
        groups = r[f"only_{side}_by_dir"]
        if groups:
            out.print(f"only in {side.upper()}: " + ", ".join(f"{d}/ ({n})" for d, n in groups.items()))
    t = Table(title="differences", title_justify="left")
    for col in ("kind", "key", "A", "B", "accepted by"):
        t.add_column(col, overflow="fold")
    for d in r["differences"]:
        t.add_row(d["kind"], d["key"], d["a"], d["b"], d["allowed_by"] or "[red]not accepted[/red]")
    out.print(t)
    e = Table(title="ELF files (needed libraries, undefined symbols)", title_justify="left")
    for col in ("file", "A", "B"):
        e.add_column(col, overflow="fold")
    for name, sides in r["elf"].items():
        cells = [f"{', '.join(x['needed'])} ({x['undefined']} undefined)" if x else "-" for x in (sides["a"],
                                                                                             sides["b"])]
        e.add_row(name, *cells)
    out.print(e)
    big = Table(title="big files (MiB)", title_justify="left")
    for col in ("file", "A", "B"):
        big.add_column(col, overflow="fold")
    for f in r["big_files"]:
        big.add_row(f["file"], *(f"{f[x] / 2**20:.1f}" if f[x] is not None else "-" for x in ("a", "b")))
    out.print(big)
    verdict = "[green]no unaccepted differences[/green]" if not r["unaccepted"] else \
        f"[red]{r['unaccepted']} differences not accepted[/red]"
    out.print(verdict)
