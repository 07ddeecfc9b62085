"""ELF dynamic-linking facts (edge: reads files with pyelftools).

What an object needs (``DT_NEEDED``), where it tells the loader to look (``DT_RUNPATH``/``DT_RPATH``), its
``SONAME``, and its dynamic symbols; where the loader of this machine would find a library; and which libraries
a wheel may take from the user's system (the manylinux allow-list). ``bundle`` and ``verify`` build on this.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The manylinux allow-list (auditwheel's manylinux_2_28 policy: every manylinux_2_17+ policy allows these) plus
# the dynamic loaders. Anything else a wheel's libraries need must be inside the wheel.
SYSTEM_LIBS = frozenset({
    "libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "libutil.so.1", "libnsl.so.1",
    "libresolv.so.2", "libanl.so.1", "libgcc_s.so.1", "libstdc++.so.6", "libatomic.so.1", "libz.so.1",
    "libexpat.so.1", "libGL.so.1", "libICE.so.6", "libSM.so.6", "libX11.so.6", "libXext.so.6", "libXrender.so.1",
    "libglib-2.0.so.0", "libgobject-2.0.so.0", "libgthread-2.0.so.0",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld64.so.2", "ld-linux.so.2",
})

_DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")


@dataclass(frozen=True)
class ElfFile:
    path: str
    soname: str | None
    needed: tuple[str, ...]
    runpath: tuple[str, ...]  # DT_RUNPATH entries, else DT_RPATH's, as written ($ORIGIN unexpanded)
    undefined: frozenset[str] = field(default_factory=frozenset)  # undefined dynamic symbols (read on demand)
    defined: frozenset[str] = field(default_factory=frozenset)  # exported dynamic symbols (read on demand)


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def read(path: Path, *, symbols: bool = False) -> ElfFile | None:
    """The dynamic-linking facts of ``path``; None when it is not a dynamically linked ELF file."""
    if not is_elf(path):
        return None
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            dyn = next((s for s in elf.iter_sections() if isinstance(s, DynamicSection)), None)
            if dyn is None:
                return ElfFile(str(path), None, (), ())
            tags = list(dyn.iter_tags())
            needed = tuple(_tag(tags, "DT_NEEDED", "needed"))
            soname = next(iter(_tag(tags, "DT_SONAME", "soname")), None)
            runpath = next(iter(_tag(tags, "DT_RUNPATH", "runpath")), None)
            rpath = next(iter(_tag(tags, "DT_RPATH", "rpath")), None)
            undefined: frozenset[str] = frozenset()
            defined: frozenset[str] = frozenset()
            if symbols:
                undefined, defined = _dynamic_symbols(elf)
    except (ELFError, OSError, ValueError):
        return None
    entries = runpath if runpath is not None else rpath
    return ElfFile(str(path), soname, needed, tuple(p for p in (entries or "").split(":") if p),
                   undefined=undefined, defined=defined)


def _tag(tags: list[Any], kind: str, attr: str) -> list[str]:
    return [str(getattr(t, attr)) for t in tags if t.entry.d_tag == kind]


def _dynamic_symbols(elf: object) -> tuple[frozenset[str], frozenset[str]]:
    table = elf.get_section_by_name(".dynsym")  # type: ignore[attr-defined]
    if table is None:
        return frozenset(), frozenset()
    undefined: set[str] = set()
    defined: set[str] = set()
    for sym in table.iter_symbols():
        if not sym.name:
            continue
        if sym["st_shndx"] == "SHN_UNDEF":
            undefined.add(sym.name)
        elif sym["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK", "STB_GNU_UNIQUE"):
            defined.add(sym.name)
    return frozenset(undefined), frozenset(defined)


def expand(entry: str, origin: Path) -> str:
    """A run-path entry with ``$ORIGIN`` replaced by the directory of the object that carries it."""
    return entry.replace("${ORIGIN}", str(origin)).replace("$ORIGIN", str(origin))


def _conf_dirs(conf: Path, seen: set[Path]) -> list[str]:
    if conf in seen or not conf.is_file():
        return []
    seen.add(conf)
    out: list[str] = []
    for raw in conf.read_text(errors="replace").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("include "):
            pattern = line.split(None, 1)[1]
            if not pattern.startswith("/"):
                pattern = str(conf.parent / pattern)
            for inc in sorted(glob.glob(pattern)):
                out += _conf_dirs(Path(inc), seen)
        elif line:
            out.append(line)
    return out


def system_dirs() -> tuple[str, ...]:
    """The directories this machine's loader searches after run paths (ld.so.conf, then the defaults)."""
    dirs = [*_conf_dirs(Path("/etc/ld.so.conf"), set()), *_DEFAULT_DIRS]
    return tuple(dict.fromkeys(d for d in dirs if Path(d).is_dir()))


def locate(name: str, obj: ElfFile, extra: Sequence[str] = (), system: Sequence[str] | None = None) -> Path | None:
    """Where this machine's loader would find ``name`` for ``obj``: its run path, then ``extra`` dirs (e.g. an
    LLVM prefix's lib/), then the system dirs. Absolute run-path entries of a copied object still name the
    build machine's directories, which is what we want here."""
    origin = Path(obj.path).parent
    dirs = [expand(e, origin) for e in obj.runpath] + list(extra) + list(system_dirs() if system is None else system)
    for d in dirs:
        cand = Path(d) / name
        if cand.is_file():
            return cand
    return None


def elf_files(root: Path) -> Iterable[Path]:
    """Every regular ELF file under ``root`` (symlinks skipped), in a stable order."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_symlink() and is_elf(path):
                yield path
