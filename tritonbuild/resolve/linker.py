"""The linker lever (pure): which linker links libtriton, its tools and the backends' libraries.

Measured on upstream d8da7c998's libtriton link (bench/bench_levers.py; static LLVM 22.1, -O2 -g objects): GNU ld
(bfd, gcc's default) 26.6 s, gold 12.4 s, lld 3.0 s. The default follows: lld when it is installed, then gold;
``--linker default`` leaves the compiler's choice. clang builds (``--clang``) always link with lld.
"""

from __future__ import annotations

from tritonbuild.errors import UserError
from tritonbuild.resolve.facts import HostFacts
from tritonbuild.settings.model import Linker


def choose(value: Linker, origin: str, clang: bool, host: HostFacts) -> tuple[str, str | None]:
    """The linker (``lld``, ``gold``, ``bfd`` or ``default``) and the directory to hand gcc with ``-B`` so that
    ``-fuse-ld=lld`` finds an unversioned ``ld.lld``; the words are the setting's (``settings.model.Linker``),
    checked where the setting is resolved."""
    if clang:
        return "lld", None  # clang finds the ld.lld next to it
    chosen = value
    if chosen == "auto":
        chosen = "lld" if host.lld_dir else "gold" if host.tool("ld.gold") else "default"
    if chosen == "lld" and not host.lld_dir:
        raise UserError(f"--linker lld ({origin}) but no ld.lld is installed (looked on PATH and in "
                        "/usr/lib/llvm-*/bin). Install it (Debian: lld-22) or pick --linker gold/bfd/default.")
    if chosen == "gold" and not host.tool("ld.gold"):
        raise UserError(f"--linker gold ({origin}) but ld.gold is not installed (Debian: binutils).")
    return chosen, host.lld_dir if chosen == "lld" else None


def flags(linker: str, lld_dir: str | None) -> str | None:
    """CMAKE_<KIND>_LINKER_FLAGS for the choice, or None for the compiler's default."""
    if linker == "default":
        return None
    return f"-fuse-ld={linker}" + (f" -B{lld_dir}" if lld_dir else "")
