"""The LLVM/MLIR/LLD headers a source and its plugins include, and which of them each LLVM lacks (edge: reads the
tree and the LLVMs' include dirs).

The scan reads every C/C++ and TableGen file under the source's lib/, include/, python/src/, bin/, test/lib/ and
third_party/ (each file is tagged with its part, so that the plan counts only what the build compiles) and every
plugin dir; each file's includes are kept in the cache root's ``apicheck`` dir by path, size and mtime, so a plan
of an unchanged tree only stats its files. Each LLVM is then asked which of the included headers its include/ lacks
(and the tree does not hold itself), and where it has a header of the same name (``resolve.preflight`` turns that
into "moved to ..."). Before a C/C++ file is scanned, its backslash-newline continuations are joined and its
comments blanked (``//``, ``/* */``, not inside string, character or raw string literals), as the preprocessor
does; lines keep their numbers. Includes under ``#if 0`` or an ``#if __has_include(...)`` are skipped; those under
another ``#if``/``#ifdef`` (not an include guard) are marked conditional.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from tritonbuild.resolve.preflight import (
    API_USES,
    BACKWARD_ANALYSIS,
    GEN_PASS_CLASSES,
    NAMESPACES,
    Include,
    IncludeFacts,
    LLVMHeaders,
    header_path_ok,
)
from tritonbuild.system import probememo
from tritonbuild.system.fileutil import walk

SOURCE_DIRS = ("lib", "include", "python/src", "bin", "test/lib", "third_party")
SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".inc", ".def", ".td"}
MAX_BYTES = 4 << 20  # of one file: includes sit at the top; a hostile giant file costs no more than this
MAX_ENTRIES = 200_000  # files and dirs walked per scanned root (a real tree's are ~10,000)
MAX_LLVM_FILES = 200_000  # walked in an LLVM's include dir looking for where a header went
_PARALLEL_FROM = 2000  # files to read before forking pays (a 617-file tree: 0.10 s on one core, 0.16 s forked)

_NS = b"|".join(re.escape(n.encode()) for n in NAMESPACES)
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]((?:' + _NS + rb')/[^">\r\n]*)[">]', re.M)
_TD_INCLUDE = re.compile(rb'^[ \t]*include[ \t]+"((?:' + _NS + rb')/[^"\r\n]*)"', re.M)
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define|include)\b([^\r\n]*)", re.M)
# a class or struct whose base clause names MLIR's SparseBackwardDataFlowAnalysis (the clause may span lines)
_BACKWARD = re.compile(rb"\b(?:class|struct)[ \t\n]+\w+[ \t\n]*(?:final[ \t\n]*)?:[^;{()]*?"
                       rb"\bSparseBackwardDataFlowAnalysis[ \t\n]*<")
_ZERO = re.compile(rb"[ \t(]*0[ \t)]*")
# a line that ends in a backslash, and the lines it continues into
_CONTINUED = re.compile(rb"^[^\n]*\\\r?\n(?:[^\n]*\\\r?\n)*[^\n]*", re.M)
_SPLICE = re.compile(rb"\\\r?\n")
# what can hide an #include from the preprocessor or pass for a comment: comments, and the literals that can hold
# a comment's opening (a raw string R"x(...)x" may span lines; other literals end at their line's end)
_TOKEN = re.compile(rb"//[^\n]*|/\*.*?(?:\*/|\Z)"
                    rb"|(?<![A-Za-z0-9_])(?:u8|[uUL])?R\"([^()\\ \t\n]{0,16})\(.*?(?:\)\1\"|\Z)"
                    rb"|\"(?:[^\"\\\n]|\\.)*\"?|(?<![0-9])'(?:[^'\\\n]|\\.)*'?", re.S)
# the same for TableGen: comments, strings, and [{ code }] blocks (which hold C++, not includes)
_TD_TOKEN = re.compile(rb"//[^\n]*|/\*.*?(?:\*/|\Z)|\[\{.*?(?:\}\]|\Z)|\"(?:[^\"\\\n]|\\.)*\"?", re.S)
SCANNER = 4  # bumped when scan() changes what it finds: kept scans of an older scanner are not reused

Use = tuple[str, int, bool]  # header, line, conditional


def scan(data: bytes, tablegen: bool = False) -> list[Use]:
    """The LLVM/MLIR/LLD includes of one file's bytes: (header, line, inside an #if). Under ``#if 0`` or an
    ``#if`` that tests ``__has_include``, none is taken; an include guard (a first ``#ifndef X`` then
    ``#define X``) does not count as an #if. Continued lines are joined and comments blanked first (an include
    inside ``/* */`` is none; ``#include \\`` then a header on the next line is one, on the ``#include`` line)."""
    macro = not tablegen and b"GEN_PASS_CLASSES" in data
    backward = (not tablegen and b"SparseBackwardDataFlowAnalysis" in data
                and b"visitNonControlFlowArguments" not in data)
    if not macro and not backward and not any(n.encode() + b"/" in data for n in NAMESPACES):
        return []
    data = data if tablegen else _joined(data)
    data = data if macro or backward else _head(data)
    data = _uncommented(data, _TD_TOKEN) if tablegen else _uncommented(data, _TOKEN)
    if tablegen:
        return [(m.group(1).decode("utf-8", "replace"), data.count(b"\n", 0, m.start()) + 1, False)
                for m in _TD_INCLUDE.finditer(data)]
    out: list[Use] = [(BACKWARD_ANALYSIS, data.count(b"\n", 0, m.start()) + 1, False)
                      for m in _BACKWARD.finditer(data)] if backward else []
    stack: list[str] = []  # per open #if: "zero", "has", "cond" or "guard"
    directives = list(_DIRECTIVE.finditer(data))
    line, pos = 1, 0
    for i, m in enumerate(directives):
        word, rest = m.group(1), m.group(2).strip()
        if word in (b"if", b"ifdef", b"ifndef"):
            stack.append(_kind(word, rest, i, directives))
        elif word in (b"elif", b"else") and stack:
            top = stack[-1]
            stack[-1] = "has" if top == "has" else ("cond" if word == b"elif" or top != "zero" else "live")
        elif word == b"endif" and stack:
            stack.pop()
        elif word in (b"include", b"define") and not {"zero", "has"} & set(stack):
            inc = _INCLUDE.match(data, m.start()) if word == b"include" else None
            name = inc.group(1).decode("utf-8", "replace") if inc else (
                GEN_PASS_CLASSES if word == b"define" and rest.split()[:1] == [b"GEN_PASS_CLASSES"] else None)
            if name:
                line += data.count(b"\n", pos, m.start())
                pos = m.start()
                out.append((name, line, "cond" in stack))
    return sorted(out, key=lambda u: u[1])


def _joined(data: bytes) -> bytes:
    """``data`` with each backslash-newline removed and the newlines it took put after the line it joined, so that
    every line that starts a logical line keeps its number."""
    if b"\\\n" not in data and b"\\\r\n" not in data:
        return data

    def join(m: re.Match[bytes]) -> bytes:
        text, n = _SPLICE.subn(b"", m.group(0))
        return text + b"\n" * n

    return _CONTINUED.sub(join, data)


def _head(data: bytes) -> bytes:
    """``data`` up to the end of the last line that names a namespace: nothing after it can be an include of
    one (most files' includes are at the top: the rest is not tokenized)."""
    last = max(data.rfind(n.encode() + b"/") for n in NAMESPACES)
    end = data.find(b"\n", last)
    return data if end < 0 else data[:end + 1]


def _blank(m: re.Match[bytes]) -> bytes:
    """A comment, raw string or TableGen code block as one space and the newlines it spans (then ``$`` when code
    came before it on its line: what follows is still that line, not the start of a directive); a string or
    character literal as it is."""
    token = m.group(0)
    if token[:1] in b"\"'":
        return token
    lines = token.count(b"\n")
    if not lines:
        return b" "
    start = m.string.rfind(b"\n", 0, m.start()) + 1
    return b" " + b"\n" * lines + (b"$" if m.string[start:m.start()].strip() else b"")


def _uncommented(data: bytes, tokens: re.Pattern[bytes]) -> bytes:
    """``data`` with its comments (and raw strings or code blocks, which may hold lines that look like
    directives) blanked, each line keeping its number."""
    if b"/" not in data and b"R\"" not in data and b"[{" not in data:
        return data
    return tokens.sub(_blank, data)


def _kind(word: bytes, rest: bytes, i: int, directives: Sequence[re.Match[bytes]]) -> str:
    if word == b"if" and _ZERO.fullmatch(rest):
        return "zero"
    if b"__has_include" in rest:
        return "has"
    if word == b"ifndef" and i == 0 and len(directives) > 1 and directives[1].group(1) == b"define" \
            and directives[1].group(2).split()[:1] == rest.split()[:1]:
        return "guard"
    return "cond"


def _read(path: str) -> bytes:
    """At most MAX_BYTES of a regular file ("" for anything else: a fifo would block, a device never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as f:
        try:
            return f.read(MAX_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        except OSError:
            return b""


def scan_file(path: str) -> list[Use]:
    """The LLVM, MLIR and LLD includes of the file at ``path`` (at most MAX_BYTES of a regular file)."""
    return scan(_read(path), path.endswith(".td"))



def _walk(base: Path) -> Iterator[str]:
    """The C/C++/TableGen files under ``base``: links to dirs not followed, hidden dirs, __pycache__ and CMake
    build dirs (a CMakeCache.txt) skipped; the walk stops after MAX_ENTRIES names."""
    if not base.is_dir() or base.is_symlink():
        return
    seen = 0
    for top, dirs, files in walk(base, "The tree"):  # bounded, on one file system, never into /proc
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            return
        if "CMakeCache.txt" in files:
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            if name[name.rfind("."):] in SUFFIXES:
                yield os.path.join(top, name)


def _scope(rel: str) -> str:
    parts = rel.split("/")
    if parts[0] == "third_party" and len(parts) > 2:
        return f"third_party/{parts[1]}"
    return "bin" if parts[0] == "bin" else "core"


def _files(source: Path, plugins: Sequence[Path]) -> list[tuple[str, str, str]]:
    """(path, as shown, scope) of every file to scan."""
    out, cut = [], len(str(source).rstrip("/")) + 1
    for sub in SOURCE_DIRS:
        for path in _walk(source / sub):
            out.append((path, path[cut:], _scope(path[cut:])))
    for plugin in plugins:
        out += [(path, path, f"plugin:{plugin}") for path in _walk(plugin)]
    return out


def _uses(entry: object) -> list[Use] | None:
    """A cache entry's includes, None when it is not the list of [header, line, conditional] written here."""
    if not isinstance(entry, list) or not all(isinstance(u, list) and len(u) == 3 for u in entry):
        return None
    out = [(h, n, c) for h, n, c in entry]
    ok = all(isinstance(h, str) and isinstance(n, int) and isinstance(c, bool) for h, n, c in out)
    return out if ok else None


def _own(header: str, file: str, roots: Sequence[Path]) -> bool:
    """Whether the tree holds ``header`` itself (next to the including file, or under one of its include roots)."""
    return any((root / header).is_file() for root in (Path(file).parent, *roots))


def _roots(source: Path, plugins: Sequence[Path]) -> list[Path]:
    out = [source, source / "include", *sorted(source.glob("third_party/*/include")), *sorted(source.glob(
        "third_party/*"))]
    for plugin in plugins:
        out += [plugin, plugin / "include", *sorted(plugin.glob("*/include"))]
    return out


def llvm_headers(prefix: str, headers: Iterable[str]) -> LLVMHeaders:
    """Which of ``headers`` the LLVM at ``prefix`` lacks under include/, and where it has headers of their names."""
    inc = Path(prefix) / "include"
    if not (inc / "llvm").is_dir():
        return LLVMHeaders(prefix, checked=False)
    missing = tuple(sorted(h for h in headers if not (inc / h).is_file() if h not in API_USES))
    gone = tuple(k for k, u in API_USES.items() if k in headers and u.llvm_marker.encode() in _read(str(inc /
                 u.llvm_header)))
    return LLVMHeaders(prefix, True, missing + gone, elsewhere(inc, missing) if missing else ())


def elsewhere(inc: Path, missing: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """For each missing header, the headers of its file name under the LLVM's include dirs (llvm/, mlir/, ...;
    links followed once, at most MAX_LLVM_FILES looked at)."""
    names = {h.rsplit("/", 1)[-1]: h for h in missing}
    found: dict[str, list[str]] = {}
    seen: set[tuple[int, int]] = set()
    n, cut = 0, len(str(inc).rstrip("/")) + 1
    for ns in NAMESPACES:
        for top, dirs, files in os.walk(inc / ns, followlinks=True):
            try:
                st = Path(top).stat()
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen or n > MAX_LLVM_FILES:
                dirs[:] = []
                continue
            seen.add((st.st_dev, st.st_ino))
            n += len(files)
            for name in files:
                if name in names:
                    found.setdefault(name, []).append(os.path.join(top, name)[cut:])
    return tuple((h, tuple(sorted(found.get(h.rsplit("/", 1)[-1], ())))) for h in missing)


def gather(source: Path, plugins: Sequence[Path], prefixes: Sequence[str], cache: Path | None) -> IncludeFacts:
    """The includes of the source and ``plugins`` (absolute dirs) and what each LLVM prefix lacks of them."""
    plugins = [p for p in plugins if (p / "CMakeLists.txt").is_file()]  # Triton adds a plugin dir's CMakeLists
    files = _files(source, plugins)
    store = cache / ("includes-" + hashlib.sha256(str(source).encode()).hexdigest()[:16] + ".json") if cache else None
    # a scan kept by another SCANNER is not reused: that scanner may have read comments as includes
    scanned = probememo.per_file([f for f, _, _ in files], store, SCANNER, scan_file, _uses, _PARALLEL_FROM)
    uses = [Include(h, shown, line, scope, cond) for path, shown, scope in files
            for h, line, cond in scanned.get(path, ()) if header_path_ok(h) or h in API_USES]
    headers = sorted({u.header for u in uses})
    llvms = [llvm_headers(p, headers) for p in dict.fromkeys(prefixes)]
    missing = {h for llvm in llvms for h in llvm.missing}
    roots = _roots(source, plugins)
    own = {h for h in missing - set(API_USES)
           if any(_own(h, str(source / u.file), roots) for u in uses if u.header == h)}
    llvms = [LLVMHeaders(x.prefix, x.checked, tuple(h for h in x.missing if h not in own),
                         tuple(e for e in x.elsewhere if e[0] not in own)) for x in llvms]
    return IncludeFacts(files=len(files), headers=len(headers),
                        uses=tuple(u for u in uses if u.header in missing - own), llvms=tuple(llvms))


_ANY_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^">\r\n]+)[">]', re.M)


def file_includes(path: str) -> list[tuple[str, bool]]:
    """Every ``#include`` of one C/C++ file (comments blanked, lines joined first), as (name, quoted); includes
    under ``#if 0`` are kept (a canary that compiles a little more costs little)."""
    data = _uncommented(_joined(_read(path)), _TOKEN)
    return [(m.group(2).decode("utf-8", "replace"), m.group(1) == b'"') for m in _ANY_INCLUDE.finditer(data)]


def include_graph(units: Sequence[str], dirs: Sequence[str], inside: Sequence[str],
                  limit: int = 20_000) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """From the files ``units``: per file reached, the files it includes that lie under ``inside`` (the tree and
    its build dir; a quoted include is looked up next to the file first, then in ``dirs``) and the LLVM/MLIR/LLD
    headers it names. At most ``limit`` files are read."""
    roots = tuple(os.path.join(os.path.realpath(r), "") for r in inside)
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    todo = list(units)
    found: dict[tuple[str, str], str | None] = {}
    while todo and len(out) < limit:
        f = todo.pop()
        if f in out:
            continue
        local, llvm = [], []
        for name, quoted in file_includes(f):
            if name.startswith(NAMESPACES_SLASH):
                llvm.append(name)
                continue
            where = (os.path.dirname(f),) if quoted else ()
            for d in (*where, *dirs):
                key = (d, name)
                if key not in found:
                    cand = os.path.realpath(os.path.join(d, name))
                    found[key] = cand if cand.startswith(roots) and Path(cand).is_file() else None
                if found[key]:
                    local.append(str(found[key]))
                    break
        out[f] = (tuple(dict.fromkeys(local)), tuple(dict.fromkeys(llvm)))
        todo.extend(x for x in local if x not in out)
    return out


NAMESPACES_SLASH = tuple(n + "/" for n in NAMESPACES)
