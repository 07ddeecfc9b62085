"""The include preflight: the LLVM, MLIR and LLD headers the built code includes, against the chosen LLVM (pure).

``gather.includes`` scans the source, its backends and the plugins for ``#include "llvm/..."`` (and ``mlir/``,
``lld/``, ``llvm-c/``, ``mlir-c/``; TableGen's ``include "mlir/..."``) and asks each LLVM which of those headers
it lacks, and where it keeps a header of the same name. Here those facts become findings: an include that the
build compiles of a header the LLVM lacks is an error naming file:line (and where the header moved); one behind an
``#if`` is a warning (the preprocessor may never reach it); one in a directory this build does not compile (an
unselected backend, ``bin/`` while only ``triton`` is built) is not reported. The known source/LLVM issues
(``knownissues``) are reported with them: every problem in one message, before the build.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tritonbuild.printable import printable
from tritonbuild.resolve import knownissues

NAMESPACES = ("llvm", "llvm-c", "mlir", "mlir-c", "lld")
# Not a header: a ``#define GEN_PASS_CLASSES`` before including a tree's generated Passes.h.inc, recorded by the
# scan as if it were an include; an LLVM "lacks" it when its mlir-tblgen no longer emits the classes (LLVM 22).
# Found on triton-shared 22a7b0e (12 files) by the canary after 86 s (docs/real-trees.md); now named by the plan.
GEN_PASS_CLASSES = "#define GEN_PASS_CLASSES"
_NO_PASS_CLASSES = ("this LLVM's mlir-tblgen generates no pass base classes under it (its Passes.h.inc say #error "
                    "\"GEN_PASS_CLASSES is deprecated; use per-pass macros\", LLVM 22): define GEN_PASS_DEF_<PASS> "
                    "for each pass before the include and derive from impl::<Pass>Base")
MAX_PLACES = 4  # include sites listed per header; the rest are counted


@dataclass(frozen=True)
class Include:
    header: str  # as written: llvm/Passes/PassPlugin.h
    file: str  # relative to the source root; absolute for a plugin's file
    line: int
    scope: str  # "core", "bin", "third_party/<dir>" or "plugin:<absolute plugin dir>"
    conditional: bool = False  # inside an #if/#ifdef (other than an include guard)

    @property
    def where(self) -> str:
        """``file:line`` for a message: the file's name comes from the tree, its control characters escaped."""
        return f"{printable(self.file)}:{self.line}"


@dataclass(frozen=True)
class LLVMHeaders:
    """What one LLVM prefix has of the headers the scan found."""

    prefix: str
    checked: bool  # False: the prefix has no include/llvm (no headers installed): nothing could be checked
    missing: tuple[str, ...] = ()  # included headers neither include/ nor the tree has
    elsewhere: tuple[tuple[str, tuple[str, ...]], ...] = ()  # missing header -> headers of its name the LLVM has


@dataclass(frozen=True)
class IncludeFacts:
    files: int = 0  # C/C++/TableGen files scanned
    headers: int = 0  # distinct LLVM/MLIR/LLD headers they include
    uses: tuple[Include, ...] = ()  # the includes of headers some LLVM lacks (only those: the rest exist)
    llvms: tuple[LLVMHeaders, ...] = ()

    def llvm(self, prefix: str | None) -> LLVMHeaders | None:
        return next((h for h in self.llvms if h.prefix == prefix), None)


@dataclass(frozen=True)
class Built:
    """What this build compiles: the selected in-tree backends (the source's others are not built), proton's
    C++ (its Dialect/ always is), the plugins by path, and bin/ only when more than ``triton`` is built."""

    backends: tuple[str, ...]
    in_tree: tuple[str, ...]
    proton: bool
    plugins: tuple[str, ...] = ()
    bin: bool = False

    def compiles(self, inc: Include) -> bool:
        if inc.scope.startswith("plugin:"):
            return inc.scope[len("plugin:"):] in self.plugins
        if inc.scope == "bin":
            return self.bin
        if not inc.scope.startswith("third_party/"):
            return True
        name = inc.scope[len("third_party/"):]
        if name == "proton":
            return self.proton or inc.file.startswith("third_party/proton/Dialect/")
        return name in self.backends or name not in self.in_tree  # f2reduce and the like: always built


@dataclass(frozen=True)
class Findings:
    errors: tuple[str, ...] = ()  # one line per missing header (all its include sites), then each known issue
    warnings: tuple[str, ...] = ()
    headers_missing: int = 0
    macros: int = 0  # of the errors: uses of generated code the LLVM's mlir-tblgen no longer emits
    known: tuple[str, ...] = field(default=())  # ids of the known issues found


def moved_to(header: str, candidates: Sequence[str]) -> tuple[str, ...]:
    """The LLVM's headers of ``header``'s name, most likely first: the same top directory (llvm/, mlir/), then the
    most path components shared; at most three."""
    top, parts = header.split("/", 1)[0], header.split("/")
    def rank(c: str) -> tuple[int, int, str]:
        return (c.split("/", 1)[0] != top, -len(set(c.split("/")[:-1]) & set(parts[:-1])), c)
    return tuple(sorted(candidates, key=rank)[:3])


def _moved_text(header: str, elsewhere: Mapping[str, tuple[str, ...]]) -> str:
    found = tuple(printable(f) for f in moved_to(header, elsewhere.get(header, ())))  # names of the LLVM's files
    if not found:
        return "this LLVM has no header of that name (one added after this LLVM, or removed before it)"
    same = [f for f in found if f.split("/", 1)[0] == header.split("/", 1)[0]]
    if len(same) == 1:
        return f"moved to {same[0]} in this LLVM"
    return f"this LLVM has {' and '.join(found)}"


def _places(uses: Sequence[Include]) -> str:
    shown = ", ".join(u.where for u in uses[:MAX_PLACES])
    return shown + (f" and {len(uses) - MAX_PLACES} more" if len(uses) > MAX_PLACES else "")


def header_lines(facts: IncludeFacts, prefix: str | None, built: Built) -> tuple[list[str], list[str]]:
    """(errors, warnings): one line per header the LLVM at ``prefix`` lacks, naming every compiled include of it
    (file:line) and where the LLVM has a header of that name."""
    have = facts.llvm(prefix)
    if have is None or not have.checked or not have.missing:
        return [], []
    missing, elsewhere = set(have.missing), dict(have.elsewhere)
    by_header: dict[str, dict[bool, list[Include]]] = {}
    for inc in facts.uses:
        if inc.header in missing and built.compiles(inc):
            by_header.setdefault(inc.header, {}).setdefault(inc.conditional, []).append(inc)
    errors, warnings = [], []
    for header in sorted(by_header):
        moved, name = _moved_text(header, elsewhere), printable(header)  # the header as the tree wrote it
        verb = "include"
        if header == GEN_PASS_CLASSES:
            moved, name, verb = _NO_PASS_CLASSES, "GEN_PASS_CLASSES", "define"
        always, behind_if = by_header[header].get(False, []), by_header[header].get(True, [])
        if always:
            errors.append(f"{_places(always)} {verb}{'s' if len(always) == 1 else ''} {name}: {moved}")
        if behind_if:
            warnings.append(f"{_places(behind_if)} {verb}{'s' if len(behind_if) == 1 else ''} {name} inside an "
                            f"#if: {moved}; the compile fails if the preprocessor reaches it")
    return errors, warnings


def check(facts: IncludeFacts, known_source: tuple[str, ...], known_llvm: tuple[str, ...], prefix: str | None,
          label: str, compile_check: bool, built: Built) -> Findings:
    """Every problem of this source with the LLVM at ``prefix`` (``label``: "22.1.8 at /usr/lib/llvm-22"): the
    missing headers (errors; those behind an #if warnings) and the known issues (errors while the compile check
    is on, which would fail after the whole build; warnings otherwise)."""
    errors, warnings = header_lines(facts, prefix, built)
    have = facts.llvm(prefix)
    macros = int(have is not None and GEN_PASS_CLASSES in have.missing and any(
        u.header == GEN_PASS_CLASSES and not u.conditional and built.compiles(u) for u in facts.uses))
    headers = len(errors) - macros
    issues = knownissues.matching(known_source, known_llvm)
    texts = [knownissues.message(i, label, compile_check) for i in issues]
    refused = [t for i, t in zip(issues, texts, strict=True) if compile_check or i.fails == "compile"]
    return Findings(errors=(*errors, *refused),
                    warnings=(*(f"with LLVM {label}, {w}" for w in warnings), *(t for t in texts if t not in refused)),
                    headers_missing=headers, macros=macros, known=tuple(i.id for i in issues))


def error_text(found: Findings, label: str, pinned: str | None) -> str | None:
    """The one message that refuses the plan, listing every problem; None when there is none. A single known
    issue keeps its own message."""
    if not found.errors:
        return None
    if not found.headers_missing and not found.macros and len(found.errors) == 1:
        return found.errors[0]
    what = []
    if found.headers_missing:
        what.append(f"{found.headers_missing} included header{'s' if found.headers_missing > 1 else ''} this "
                    "LLVM lacks")
    if found.macros:
        what.append("passes generated with GEN_PASS_CLASSES, which this LLVM's mlir-tblgen no longer emits")
    if found.known:
        what.append(f"{len(found.known)} known issue{'s' if len(found.known) > 1 else ''}")
    pin = f"the source's pinned LLVM ({pinned[:12]})" if pinned else "the source's pinned LLVM"
    lines = "\n".join(f"  - {e}" for e in found.errors)
    fix = (" Each missing header fails the compile of the file that includes it: build against "
           f"{pin}, or an LLVM that has these headers, or patch the source." if found.headers_missing else "")
    if found.macros:
        fix += (" Each file that defines GEN_PASS_CLASSES stops at the #error of its generated Passes.h.inc: port "
                f"its passes to the per-pass macros (a patch: --patch, --patch PLUGIN=FILE), or build against {pin}.")
    return (f"This source will not build with LLVM {label}: {_listed(what)}, found before building "
            f"(all of them, not only the first).{fix}\n{lines}")


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def header_path_ok(header: str) -> bool:
    """A header name worth asking an LLVM about: under one of its top directories, relative, no '..'."""
    parts = header.split("/")
    return (len(parts) > 1 and parts[0] in NAMESPACES and "" not in parts and ".." not in parts
            and "." not in parts and "\\" not in header and posixpath.normpath(header) == header
            and not header.endswith(".inc"))
