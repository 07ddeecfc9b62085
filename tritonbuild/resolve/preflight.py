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
from dataclasses import dataclass, field, replace

from tritonbuild.printable import printable
from tritonbuild.resolve import knownissues

NAMESPACES = ("llvm", "llvm-c", "mlir", "mlir-c", "lld")


@dataclass(frozen=True)
class ApiUse:
    """Not a header: code the scan records as if it were an include (``key``), which an LLVM "lacks" when one of
    its headers shows the change (``llvm_marker`` in ``llvm_header``). Each was found on a real tree by the canary
    or the build, long after a plan that could have named every site (docs/real-trees.md, #47)."""

    key: str
    llvm_header: str  # relative to the LLVM's include/
    llvm_marker: str
    verb: str  # "<file:line> defines ..." / "derives ..."
    name: str
    text: str  # what the LLVM did, and the port
    what: str  # the problem's kind, for the one message
    fix: str


GEN_PASS_CLASSES = "#define GEN_PASS_CLASSES"
BACKWARD_ANALYSIS = "class : SparseBackwardDataFlowAnalysis without visitNonControlFlowArguments"
API_USES = {u.key: u for u in (
    # triton-shared 22a7b0e: 12 files, the canary's first error after 86 s
    ApiUse(GEN_PASS_CLASSES, "mlir/Transforms/Passes.h.inc", '#error "GEN_PASS_CLASSES is deprecated',
           "define", "GEN_PASS_CLASSES",
           "this LLVM's mlir-tblgen generates no pass base classes under it (its Passes.h.inc say #error "
           "\"GEN_PASS_CLASSES is deprecated; use per-pass macros\", LLVM 22): define GEN_PASS_DEF_<PASS> for each "
           "pass before the include and derive from impl::<Pass>Base",
           "passes generated with GEN_PASS_CLASSES, which this LLVM's mlir-tblgen no longer emits",
           "Each file that defines GEN_PASS_CLASSES stops at the #error of its generated Passes.h.inc: port its "
           "passes to the per-pass macros"),
    # d8da7c998's TaskIdBackwardPropagation (a known issue), then triton-shared's UseAnalysis after 60 min of build
    ApiUse(BACKWARD_ANALYSIS, "mlir/Analysis/DataFlow/SparseAnalysis.h", "ArrayRef<BlockArgument> arguments) = 0;",
           "derive", "a class from SparseBackwardDataFlowAnalysis without visitNonControlFlowArguments",
           "this LLVM made visitNonControlFlowArguments(RegionSuccessor &, ArrayRef<BlockArgument>) pure virtual "
           "(LLVM 22.1), so loading the analysis into a DataFlowSolver fails to compile: add `void "
           "visitNonControlFlowArguments(RegionSuccessor &, ArrayRef<BlockArgument>) override {}` (a backward "
           "analysis has nothing to propagate into non-forwarded arguments)",
           "backward dataflow analyses without the override this LLVM requires",
           "Each such analysis is an abstract class with this LLVM: add the empty override"),
)}
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
    api: tuple[str, ...] = ()  # the ApiUse keys among the errors (code this LLVM changed, not headers)
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
        if api := API_USES.get(header):
            moved, name, verb = api.text, api.name, api.verb
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
    issues = knownissues.matching(known_source, known_llvm)
    told = {i.source_file for i in issues}  # a known issue's own file keeps its measured message, not a second one
    facts = replace(facts, uses=tuple(u for u in facts.uses if u.header not in API_USES or u.file not in told))
    errors, warnings = header_lines(facts, prefix, built)
    have = facts.llvm(prefix)
    api = tuple(k for k in API_USES if have is not None and k in have.missing and any(
        u.header == k and not u.conditional and built.compiles(u) for u in facts.uses))
    headers = len(errors) - len(api)
    texts = [knownissues.message(i, label, compile_check) for i in issues]
    refused = [t for i, t in zip(issues, texts, strict=True) if compile_check or i.fails == "compile"]
    return Findings(errors=(*errors, *refused),
                    warnings=(*(f"with LLVM {label}, {w}" for w in warnings), *(t for t in texts if t not in refused)),
                    headers_missing=headers, api=api, known=tuple(i.id for i in issues))


def error_text(found: Findings, label: str, pinned: str | None) -> str | None:
    """The one message that refuses the plan, listing every problem; None when there is none. A single known
    issue keeps its own message."""
    if not found.errors:
        return None
    if not found.headers_missing and not found.api and len(found.errors) == 1:
        return found.errors[0]
    what = []
    if found.headers_missing:
        what.append(f"{found.headers_missing} included header{'s' if found.headers_missing > 1 else ''} this "
                    "LLVM lacks")
    what += [API_USES[k].what for k in found.api]
    if found.known:
        what.append(f"{len(found.known)} known issue{'s' if len(found.known) > 1 else ''}")
    pin = f"the source's pinned LLVM ({pinned[:12]})" if pinned else "the source's pinned LLVM"
    lines = "\n".join(f"  - {e}" for e in found.errors)
    fix = (" Each missing header fails the compile of the file that includes it: build against "
           f"{pin}, or an LLVM that has these headers, or patch the source." if found.headers_missing else "")
    fix += "".join(f" {API_USES[k].fix} (a patch: --patch, --patch PLUGIN=FILE), or build against {pin}."
                   for k in found.api)
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
