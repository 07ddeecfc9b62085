"""``tritonbuild compare A.whl B.whl``: how two wheels differ, for checking a custom build against the official
one (edge: reads the wheels through ``zipguard``, as hostile input; the diff itself is pure). Each wheel first
passes the structural checks ``verify`` runs (``verify.structure``: file name, RECORD, ``_build_info.json``,
entry points, at most ``checks.backends.MAX_ENTRY_POINTS`` of them); a wheel that fails one is reported as
malformed, naming it and its first problems (exit 1).

Differences (each a ``kind`` and a ``key``, so an allow-list can accept them with a reason):
``only-a``/``only-b`` (a file), ``metadata`` (Name, Version, Requires-Python, Requires-Dist), ``entry-point``
(``group:name``), ``backend`` (a ``triton/backends/<name>``), ``needed`` (``file:library``: an ELF file in
both wheels needs a library from outside the manylinux allow-list in one only), ``nvidia-tool`` (the tool's name:
``triton/backends/nvidia/bin/{ptxas,ptxas-blackwell,cuobjdump,nvdisasm}`` in one wheel only; not an ``only-a``/
``only-b`` file, so a file glob never accepts a missing tool: only a rule ``nvidia-tool <name>`` does, since
without it Triton's SASS disassembly or cubin compilation fails where the other wheel's works). Big files and
each ELF's needed libraries and undefined-symbol count are shown too, as information.

Allow-list file: one rule per line, ``<kind> <glob>``, then optionally ``# reason``; blank lines and lines
starting with ``#`` are ignored. Example: ``only-b triton/backends/nvidia/lib/cupti/*_static.a  # static libs``.
"""

from __future__ import annotations

import fnmatch
import tempfile
import zipfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from email.parser import Parser
from pathlib import Path, PurePosixPath
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.system import elf
from tritonbuild.wheel import verify, zipguard
from tritonbuild.wheel.checks.backends import read_entry_points
from tritonbuild.wheel.checks.base import dist_info

KINDS = ("only-a", "only-b", "metadata", "entry-point", "backend", "needed", "nvidia-tool")
NVIDIA_BIN = "triton/backends/nvidia/bin/"
NVIDIA_TOOLS = ("ptxas", "ptxas-blackwell", "cuobjdump", "nvdisasm")  # what setup.py puts into NVIDIA_BIN
BIG = 1 << 20


@dataclass(frozen=True)
class Diff:
    kind: str
    key: str
    a: str = ""
    b: str = ""
    allowed_by: str | None = None  # the allow-list rule (and its reason) that accepts it


@dataclass(frozen=True)
class ElfSummary:
    needed: tuple[str, ...]
    undefined: int


@dataclass
class WheelFacts:
    path: str
    files: dict[str, int] = field(default_factory=dict)  # name -> size
    metadata: dict[str, str] = field(default_factory=dict)
    entry_points: dict[str, str] = field(default_factory=dict)  # "group:name" -> value
    elves: dict[str, ElfSummary] = field(default_factory=dict)

    @property
    def backends(self) -> set[str]:
        return {n.split("/")[2] for n in self.files if n.startswith("triton/backends/") and n.count("/") >= 3
                and n.endswith("/compiler.py")}


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: str
    reason: str

    def matches(self, d: Diff) -> bool:
        return self.kind == d.kind and fnmatch.fnmatchcase(d.key, self.pattern)


def _metadata(zf: zipfile.ZipFile, name: str) -> dict[str, str]:
    msg = Parser().parsestr(zipguard.read_text(zf, name))
    out = {key: str(msg.get(key, "")) for key in ("Name", "Version", "Requires-Python")}
    out["Requires-Dist"] = "; ".join(sorted(
        str(r) for r in (msg.get_all("Requires-Dist") or []) if "extra ==" not in str(r)))
    return out


def _elves(zf: zipfile.ZipFile, tmp: Path) -> dict[str, ElfSummary]:
    """Each ELF member's needed libraries and undefined-symbol count, extracted one at a time into ``tmp``."""
    out = {}
    for info in zf.infolist():
        if info.is_dir() or info.file_size < 64 or zipguard.head(zf, info) != b"\x7fELF":
            continue
        target = zipguard.extract(zf, info, tmp)
        try:
            found = elf.read(target, symbols=True)
        except Exception:  # pyelftools on a hostile file: shown as an ELF file with nothing read
            found = None
        if found is not None:
            out[info.filename] = ElfSummary(found.needed, len(found.undefined))
        target.unlink()
    return out


def _facts(path: Path, zf: zipfile.ZipFile, tmp: Path) -> WheelFacts | list[str]:
    """What is compared of the open wheel, or what is malformed about it (``verify.structure``)."""
    problems = verify.structure(path, zf).problems
    if problems:
        return problems
    facts = WheelFacts(str(path), {i.filename: i.file_size for i in zf.infolist() if not i.is_dir()})
    meta = dist_info(zf, "METADATA")
    facts.metadata = _metadata(zf, meta) if meta else {}
    facts.entry_points = {f"{g}:{n}": v.strip() for g, group in read_entry_points(zf).items()
                          for n, v in group.items()}
    facts.elves = _elves(zf, tmp)
    return facts


def read_wheel(path: Path) -> WheelFacts:
    """What ``compare`` compares of one wheel, read through ``zipguard`` once it passed the structural checks
    ``verify`` runs: a missing file is a ``UserError`` (exit 2), a malformed or hostile wheel a ``BadWheel``
    naming the file and its first problems (exit 1)."""
    try:
        with zipguard.open_wheel(path) as zf, tempfile.TemporaryDirectory(prefix="tritonbuild-compare-") as tmp:
            found = _facts(path, zf, Path(tmp))
    except zipguard.BadWheel as exc:
        raise zipguard.BadWheel(f"{path} is not a readable wheel: {exc}. Nothing was compared; check where the "
                                "file came from.") from None
    if isinstance(found, list):
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        raise zipguard.BadWheel(f"{path} is a malformed wheel: {'; '.join(found[:3])}{more}. Nothing was compared; "
                                f"`tritonbuild verify --no-import {path}` shows every check.")
    return found


def _dist(name: str) -> str:
    """A path with the dist-info dir's version-specific name made comparable."""
    head, _, rest = name.partition("/")
    return f"<dist-info>/{rest}" if head.endswith(".dist-info") else name


def differences(a: WheelFacts, b: WheelFacts) -> list[Diff]:
    out: list[Diff] = []
    fa = {_dist(n) for n in a.files}
    fb = {_dist(n) for n in b.files}
    tools = {NVIDIA_BIN + t: t for t in NVIDIA_TOOLS}
    out += [Diff("only-a", n) for n in sorted(fa - fb) if n not in tools]
    out += [Diff("only-b", n) for n in sorted(fb - fa) if n not in tools]
    out += [Diff("nvidia-tool", tools[n], "yes" if n in fa else "", "yes" if n in fb else "")
            for n in sorted((fa ^ fb) & set(tools), key=lambda n: NVIDIA_TOOLS.index(tools[n]))]
    for key in sorted(set(a.metadata) | set(b.metadata)):
        if a.metadata.get(key, "") != b.metadata.get(key, ""):
            out.append(Diff("metadata", key, a.metadata.get(key, ""), b.metadata.get(key, "")))
    for key in sorted(set(a.entry_points) | set(b.entry_points)):
        if a.entry_points.get(key) != b.entry_points.get(key):
            out.append(Diff("entry-point", key, a.entry_points.get(key, ""), b.entry_points.get(key, "")))
    for name in sorted(a.backends ^ b.backends):
        out.append(Diff("backend", name, "yes" if name in a.backends else "", "yes" if name in b.backends else ""))
    for path in sorted(set(a.elves) & set(b.elves)):
        # allow-listed libraries (libdl, libpthread: part of libc since glibc 2.34) differ by toolchain only
        na = set(a.elves[path].needed) - elf.SYSTEM_LIBS
        nb = set(b.elves[path].needed) - elf.SYSTEM_LIBS
        out += [Diff("needed", f"{path}:{lib}", "yes" if lib in na else "", "yes" if lib in nb else "")
                for lib in sorted(na ^ nb)]
    return out


def _allow_text(path: Path) -> str:
    if not path.is_file():
        raise UserError(f"The allow-list {path} {'is not a regular file' if path.exists() else 'does not exist'}. "
                        "Give a text file of '<kind> <glob>  # reason' lines.")
    try:
        data = path.read_bytes() if path.stat().st_size <= zipguard.MAX_TEXT else None
    except OSError as exc:
        raise UserError(f"The allow-list {path} cannot be read ({exc.strerror}). Give a text file of "
                        "'<kind> <glob>  # reason' lines.") from None
    if data is None:
        raise UserError(f"The allow-list {path} is over {zipguard.mib(zipguard.MAX_TEXT)}: not an allow-list. "
                        "Give a text file of '<kind> <glob>  # reason' lines.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise UserError(f"{path}:{line}: the allow-list is not UTF-8 text ({exc.reason} at byte {exc.start}). "
                        "Save it as UTF-8: lines of '<kind> <glob>  # reason'.") from None


def read_allow(path: Path) -> list[Rule]:
    """The rules of an allow-list file; ``UserError`` naming the file and line of anything else."""
    rules = []
    for number, raw in enumerate(_allow_text(path).splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        body, _, reason = line.partition("#")
        parts = body.split()
        if len(parts) != 2 or parts[0] not in KINDS:
            raise UserError(f"{path}:{number}: {raw.strip()[:200]!r} is not an allow rule. Write '<kind> <glob>  "
                            f"# reason' with kind one of {', '.join(KINDS)}.")
        rules.append(Rule(parts[0], parts[1], reason.strip()))
    return rules


def apply(diffs: list[Diff], rules: list[Rule]) -> list[Diff]:
    out = []
    for d in diffs:
        rule = next((r for r in rules if r.matches(d)), None)
        out.append(Diff(d.kind, d.key, d.a, d.b, f"{rule.kind} {rule.pattern}" + (f" ({rule.reason})" if rule.reason
                                                                                    else "")) if rule else d)
    return out


def grouped(diffs: list[Diff], kind: str) -> dict[str, int]:
    """Files of one kind counted by directory."""
    return dict(sorted(Counter(str(PurePosixPath(d.key).parent) for d in diffs if d.kind == kind).items()))


def report(a: WheelFacts, b: WheelFacts, diffs: list[Diff]) -> dict[str, Any]:
    big = sorted({n for w in (a, b) for n, s in w.files.items() if s >= BIG})
    return {
        "a": a.path, "b": b.path,
        "differences": [asdict(d) for d in diffs],
        "unaccepted": sum(1 for d in diffs if d.allowed_by is None),
        "only_a_by_dir": grouped(diffs, "only-a"), "only_b_by_dir": grouped(diffs, "only-b"),
        "metadata": {"a": a.metadata, "b": b.metadata},
        "entry_points": {"a": a.entry_points, "b": b.entry_points},
        "backends": {"a": sorted(a.backends), "b": sorted(b.backends)},
        "big_files": [{"file": n, "a": a.files.get(n), "b": b.files.get(n)} for n in big],
        "elf": {n: {"a": asdict(a.elves[n]) if n in a.elves else None, "b": asdict(b.elves[n]) if n in b.elves
                    else None} for n in sorted(set(a.elves) | set(b.elves))},
        "sizes": {"a_files": len(a.files), "b_files": len(b.files), "a_bytes": sum(a.files.values()),
                  "b_bytes": sum(b.files.values())},
    }


def compare(a: Path, b: Path, *, rules: list[Rule] | None = None) -> dict[str, Any]:
    """The report of how ``a`` and ``b`` differ, each difference accepted or not by the ``rules`` of an allow-list
    (``read_allow``)."""
    wa, wb = read_wheel(a), read_wheel(b)
    diffs = apply(differences(wa, wb), rules or [])
    return report(wa, wb, diffs)
