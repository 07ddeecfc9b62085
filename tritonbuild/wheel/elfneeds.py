"""What each ELF file of a wheel needs (versioned symbols, libraries from the system; ELF files read with
pyelftools) and the lowest (oldest) manylinux or musllinux policy a set of them meets, by ``auditwheel show``'s
decision over the policies of ``tritonbuild.manylinux``. Nothing here looks for libraries on this machine (a hostile
run path would make it open any file, a FIFO included): a library is either in the wheel, reached through the
file's own ``$ORIGIN`` run path, or needed from the system.

The decision is ``auditwheel show``'s: symbol versions through ``WheelPolicies.versioned_symbols_policy``, every
library needed from outside the wheel on the policy's allow-list, none of its block-listed symbols used (the
instruction-set extension check aside)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonbuild.manylinux import policies
from tritonbuild.system import elf

MAX_VERNEED = 1024  # version-need entries of one file (libtriton: 6), each with its auxiliary entries (a few dozen)
MAX_VERNAUX = 16384  # auxiliary entries of one file, all together: pyelftools follows their offsets, which may loop
LOADERS = re.compile(r"^(ld-linux.*|ld64\.so\.[12]|ld-musl-.*)$")  # the dynamic loader: never on an allow-list


class ElfProblem(ValueError):
    """An ELF file this module will not read further (too many version entries, a structure pyelftools refuses)."""


@dataclass(frozen=True)
class ElfNeeds:
    """What one ELF file of a wheel needs: ``file`` as the wheel names it."""

    file: str
    needed: tuple[str, ...]  # DT_NEEDED
    external: tuple[str, ...]  # needed, and not in the wheel through the file's own $ORIGIN run path
    versions: frozenset[str]  # the versions it needs (GLIBC_2.34, GLIBCXX_3.4.30), as auditwheel reads them
    symbols: tuple[tuple[str, str], ...]  # (symbol, version) of each undefined versioned symbol
    undefined: frozenset[str]  # undefined symbols that are not weak (what a block-list is held to)

    @property
    def musl(self) -> bool:
        return any(n.startswith(("libc.musl-", "ld-musl-")) for n in self.needed)


def _version_names(elffile: Any) -> tuple[frozenset[str], dict[int, str]]:
    """The versions a file needs (auditwheel's ``elf_find_versioned_symbols``) and each version index's name;
    the version-need entries are counted first, and their auxiliary entries read at most ``MAX_VERNAUX``."""
    import itertools

    from auditwheel.elfutils import elf_find_versioned_symbols

    section = elffile.get_section_by_name(".gnu.version_r")
    if section is None:
        return frozenset(), {}
    if section.num_versions() > MAX_VERNEED:
        raise ElfProblem(f"{section.num_versions()} version-need entries (at most {MAX_VERNEED} are read)")
    versions = list(itertools.islice(elf_find_versioned_symbols(elffile), MAX_VERNAUX + 1))
    if len(versions) > MAX_VERNAUX:
        raise ElfProblem(f"over {MAX_VERNAUX} needed versions")
    index: dict[int, str] = {}
    for aux in itertools.islice((a for _, auxes in section.iter_versions() for a in auxes), MAX_VERNAUX):
        index[int(aux["vna_other"]) & 0x7FFF] = aux.name
    return frozenset(v for _, v in versions), index


def _symbols(elffile: Any, index: dict[int, str]) -> tuple[tuple[tuple[str, str], ...], frozenset[str]]:
    """Each undefined dynamic symbol with the version it needs, and the undefined ones that are not weak."""
    table, versym = elffile.get_section_by_name(".dynsym"), elffile.get_section_by_name(".gnu.version")
    if table is None:
        return (), frozenset()
    versioned: list[tuple[str, str]] = []
    strong: set[str] = set()
    ndxs = versym.iter_symbols() if versym is not None else iter(())
    for sym in table.iter_symbols():
        ver = next(ndxs, None)
        if not sym.name or sym["st_shndx"] != "SHN_UNDEF":
            continue
        if sym["st_info"]["bind"] != "STB_WEAK":
            strong.add(sym.name)
        ndx = ver["ndx"] if ver is not None else None
        if isinstance(ndx, int) and (ndx & 0x7FFF) in index:
            versioned.append((sym.name, index[ndx & 0x7FFF]))
    return tuple(sorted(set(versioned))), frozenset(strong)


def read(path: Path, root: Path) -> ElfNeeds | None:
    """What the ELF file ``path`` (extracted under ``root``, the wheel's files) needs; None when it is not a
    dynamically linked ELF file. ``ElfProblem`` (or pyelftools' own error) for a file that cannot be read."""
    facts = elf.read(path)
    if facts is None:
        return None
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        elffile = ELFFile(f)
        versions, index = _version_names(elffile)
        symbols, undefined = _symbols(elffile, index)
    return ElfNeeds(path.relative_to(root).as_posix(), facts.needed, outside(facts, root), versions, symbols,
                    undefined)


def outside(facts: elf.ElfFile, root: Path) -> tuple[str, ...]:
    """The libraries the ELF file ``facts`` needs that its own ``$ORIGIN`` run path does not find under ``root``
    (the wheel's files); nothing else is looked in, and ``$ORIGIN/../../..`` reaching the host is not the wheel."""
    own = elf.ElfFile(facts.path, facts.soname, facts.needed,
                      tuple(e for e in facts.runpath if e.startswith(("$ORIGIN", "${ORIGIN}"))))
    real = root.resolve()
    found = [(n, elf.locate(n, own, (), ())) for n in facts.needed]
    return tuple(n for n, f in found if f is None or not f.resolve().is_relative_to(real))


def blockers(elves: Sequence[ElfNeeds], policy: Any) -> list[str]:
    """What keeps the files from ``policy``: each symbol of a version it lacks (``pthread_create@GLIBC_2.34``),
    each library from outside the wheel not on its allow-list, each block-listed symbol used."""
    out: list[str] = []
    allowed = policy.symbol_versions
    for e in elves:
        bad = {v for v in e.versions if v.partition("_")[0] in allowed
               and v.partition("_")[2] not in allowed[v.partition("_")[0]]}
        named = [f"{s}@{v}" for s, v in e.symbols if v in bad]
        out += [f"{n} ({e.file})" for n in named]
        out += [f"{v} ({e.file})" for v in sorted(bad - {v for _, v in e.symbols})]
        out += [f"{lib} ({e.file}; not on {policy.name}'s allow-list)" for lib in e.external
                if not LOADERS.match(lib) and lib not in policy.whitelist]
        for lib, listed in sorted(policy.blacklist.items()):
            hit = sorted(listed & e.undefined) if lib in e.needed else []
            out += [f"{s} of {lib} ({e.file}; on {policy.name}'s block-list)" for s in hit[:3]]
    return out


@dataclass(frozen=True)
class Level:
    """The lowest policy a wheel's ELF files meet (``linux_<arch>`` when none), and what keeps them from the next
    older one (empty when it is the oldest auditwheel knows)."""

    policy: str
    priority: int
    why: tuple[str, ...]


def level(elves: Sequence[ElfNeeds], arch: str) -> Level:
    """The lowest (oldest) policy of ``arch`` that every file in ``elves`` meets: auditwheel's symbol-version
    decision, then the allow- and block-lists."""
    libc = "musl" if any(e.musl for e in elves) else "glibc"
    known = policies(libc, arch)
    required: dict[str, set[str]] = {e.file: set(e.versions) for e in elves}
    met = [p for p, table in known if p.priority <= table.versioned_symbols_policy(required).priority
           and not blockers(elves, p)]
    best = max(met, default=None)
    if best is None:
        return Level(f"linux_{arch}", 0, tuple(blockers(elves, known[-1][0])) if known else ())
    older = [p for p, _ in known if p.priority > best.priority]
    return Level(best.name, best.priority, tuple(blockers(elves, min(older))) if older else ())
