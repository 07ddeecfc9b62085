"""The backends check: the ``triton.backends`` entry points match the backend dirs, and the provenance's backends
when the wheel has one.

The wheel is anyone's: entry_points.txt is counted before it is parsed (``MAX_ENTRY_POINTS``: more is a malformed
wheel, not minutes of parsing and diffing), and a row names at most ``SHOWN`` items of any list (``listed``)."""

from __future__ import annotations

import zipfile
from collections.abc import Sequence

from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks.base import Context, Finding, dist_info, entry_points, status

MAX_ENTRY_POINTS = 1000  # the official 3.6.0 wheel has 3 (nvidia, amd, proton-viewer)
SHOWN = 10  # items of a list a finding's row names before "and N more"


def listed(items: Sequence[str], limit: int = SHOWN) -> str:
    """``items`` comma-separated, at most ``limit`` of them (each at most 100 characters) then "and N more": a
    hostile wheel's lists are as long as it likes, a row is one line."""
    shown = [x if len(x) <= 100 else x[:97] + "..." for x in items[:limit]]
    more = f", and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(shown) + more


def _bracketed(items: Sequence[str]) -> str:
    return f"[{listed([repr(x) for x in items])}]"


def count_entry_points(text: str) -> int:
    """How many ``name = value`` lines an entry_points.txt holds (an upper bound of its entries: every line that
    is not blank, a comment, a section header or a continuation)."""
    return sum(1 for line in text.splitlines() if line.strip() and not line[0].isspace()
               and line[0] not in "#;[")


def read_entry_points(zf: zipfile.ZipFile) -> dict[str, dict[str, str]]:
    """The groups of the wheel's entry_points.txt, as ``base.entry_points`` reads them once the file is known to
    hold at most ``MAX_ENTRY_POINTS`` entries; ``BadWheel`` when it holds more, is not UTF-8 or not an INI file."""
    name = dist_info(zf, "entry_points.txt")
    if name:
        found = count_entry_points(zipguard.read_text(zf, name))
        if found > MAX_ENTRY_POINTS:
            raise zipguard.BadWheel(f"{name} declares {found} entry points (at most {MAX_ENTRY_POINTS} are read; "
                                    "Triton's wheels have a handful)")
    return entry_points(zf)


def entry_point_backends(zf: zipfile.ZipFile) -> list[str] | str:
    """The ``triton.backends`` entry points' names, or what is wrong with entry_points.txt."""
    try:
        return sorted(read_entry_points(zf).get("triton.backends", {}))
    except zipguard.BadWheel as exc:
        return str(exc)


class Backends:
    name = "backends"

    def applies(self, ctx: Context) -> bool:
        return True

    def run(self, ctx: Context) -> list[Finding]:
        if isinstance(ctx.eps, str):
            return [Finding(self.name, "fail", ctx.eps)]
        eps = ctx.eps
        dirs = sorted({n.split("/")[2] for n in ctx.zf.namelist() if n.startswith("triton/backends/")
                       and n.count("/") >= 3 and n.endswith("/compiler.py")})
        if ctx.info is None:
            ok = eps == dirs
            return [Finding(self.name, status(ok), listed(eps) if ok else f"entry points {_bracketed(eps)}, "
                            f"backend dirs {_bracketed(dirs)} differ")]
        recorded = list(ctx.info.backends)
        ok = recorded == eps == dirs
        return [Finding(self.name, status(ok), listed(recorded) if ok else f"provenance {_bracketed(recorded)}, "
                        f"entry points {_bracketed(eps)}, backend dirs {_bracketed(dirs)} differ")]
