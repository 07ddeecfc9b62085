"""The canary compile's decisions (pure): whether it runs, which translation units it compiles, the syntax-only
command of each, and how its diagnostics group into causes.

An LLVM API break usually shows in the tree's own headers (an ``override`` that overrides nothing any more, a
moved header), so compiling each tree header once finds most causes. Each unit of ``compile_commands.json`` covers
the tree headers it includes transitively plus the LLVM/MLIR/LLD headers those headers include; a greedy set cover
picks few units that together cover everything any unit covers, cheap units (fewest headers reached) first on ties.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tritonbuild.plan import CanaryPlan
from tritonbuild.settings.model import Canary

MAX_UNITS = 64  # units compiled at most: d8da7c998 has 264 (unity sources split), and every header is covered by 54
UNIT_TIMEOUT = 300  # seconds one -fsyntax-only may take (a big Triton unit parses in ~20 s on one core)


def plan_canary(choice: Canary, origin: str, is_pinned: bool | None, pinned: str, version: str | None, *,
                budget: float = 0.0, budget_origin: str = "default", whole_cover: bool = False) -> CanaryPlan:
    """auto: on when the plan's LLVM is not the source's pin or does not record its commit; on/off as given. The
    time budget as given (0: none), except that ``whole_cover`` (check-llvm, llvm compat: the whole picture is their
    job) has none unless one was given."""
    seconds, budget_why = plan_budget(budget, budget_origin, whole_cover)
    if choice == "off":
        return CanaryPlan(False, f"off ({origin})", MAX_UNITS, UNIT_TIMEOUT, seconds, budget_why)
    if choice == "on":
        return CanaryPlan(True, f"on ({origin})", MAX_UNITS, UNIT_TIMEOUT, seconds, budget_why)
    if is_pinned is True:
        return CanaryPlan(False, f"the LLVM is the source's pin {pinned[:12]}", MAX_UNITS, UNIT_TIMEOUT, seconds,
                          budget_why)
    what = "does not record its commit" if is_pinned is None else "is not"
    return CanaryPlan(True, f"LLVM {version or '?'} {what}{' the pin' if is_pinned is False else ''} "
                            f"({pinned[:12]} pinned)", MAX_UNITS, UNIT_TIMEOUT, seconds, budget_why)


def plan_budget(budget: float, origin: str, whole_cover: bool) -> tuple[float | None, str]:
    """The canary's time budget in seconds (None: no budget, the whole cover) and where that came from."""
    if whole_cover and origin == "default":
        return None, "check-llvm's default (--canary-budget sets one)"
    return (float(budget) if budget > 0 else None), f"canary_budget {budget:g} ({origin})"


@dataclass(frozen=True)
class Unit:
    file: str  # absolute path of the translation unit
    directory: str
    argv: tuple[str, ...]
    output: str | None  # the object CMake's Ninja builds from it ("output" of compile_commands.json)


def units_of(entries: object, limit: int = 100_000) -> list[Unit]:
    """The C/C++ units of a compile_commands.json (as loaded JSON); entries that are not well-formed are skipped."""
    out: list[Unit] = []
    for e in entries[:limit] if isinstance(entries, list) else ():
        if not isinstance(e, dict) or not isinstance(e.get("file"), str) or not isinstance(e.get("directory"), str):
            continue
        cmd = e.get("arguments")
        if not (isinstance(cmd, list) and all(isinstance(a, str) for a in cmd)):
            try:
                cmd = shlex.split(e["command"]) if isinstance(e.get("command"), str) else None
            except ValueError:
                cmd = None
        if not cmd or not e["file"].endswith((".cpp", ".cc", ".cxx", ".c")):
            continue
        file = e["file"] if e["file"].startswith("/") else f"{e['directory'].rstrip('/')}/{e['file']}"
        output = e.get("output") if isinstance(e.get("output"), str) else _output_of(cmd)
        out.append(Unit(file, e["directory"], tuple(cmd), output))
    return out


_UNITY = re.compile(r"/CMakeFiles/[^/]+\.dir/Unity/unity_\d+_(?:cxx|c)\.(?:cxx|c)$")
_UNITY_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"\n]+)"', re.MULTILINE)


def is_unity(unit: Unit) -> bool:
    """A source CMake's unity build writes (CMAKE_UNITY_BUILD): a list of includes of the target's own sources."""
    return bool(_UNITY.search(unit.file))


def unity_members(text: str) -> list[str]:
    """The sources a unity source includes, as written (relative to its include path)."""
    return _UNITY_INCLUDE.findall(text)


def member_unit(unit: Unit, member: str) -> Unit:
    """A unity source's member compiled on its own, with the unity source's command: the canary must not report
    what only fails joined (a unity build learns those targets and builds them apart, ``execute.unity``)."""
    argv = tuple(member if posixpath.normpath(posixpath.join(unit.directory, a)) == unit.file else a
                 for a in unit.argv)
    return Unit(member, unit.directory, argv, unit.output)


def _output_of(argv: Sequence[str]) -> str | None:
    for i, a in enumerate(argv[:-1]):
        if a == "-o":
            return argv[i + 1]
    return None


_LAUNCHERS = ("ccache", "sccache", "distcc")


def syntax_only(argv: Sequence[str]) -> list[str]:
    """The unit's command, compiling for errors only: a compiler cache launcher dropped (it would run the compiler
    anyway, and caches nothing for -fsyntax-only), ``-o X``, ``-c`` and dependency-file flags removed."""
    args = list(argv)
    while len(args) > 1 and args[0].rsplit("/", 1)[-1] in _LAUNCHERS:
        args = args[1:]
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD"):
            continue
        out.append(a)
    return [*out[:1], "-fsyntax-only", *out[1:]]


def include_dirs(argv: Sequence[str], directory: str) -> list[str]:
    """The -I/-isystem/-iquote dirs of a command, made absolute against its directory."""
    out: list[str] = []
    for i, a in enumerate(argv):
        for flag in ("-isystem", "-iquote", "-I"):
            if a == flag and i + 1 < len(argv):
                out.append(argv[i + 1])
                break
            if a.startswith(flag) and len(a) > len(flag):
                out.append(a[len(flag):])
                break
    return [d if d.startswith("/") else f"{directory.rstrip('/')}/{d}" for d in out]


# one file's includes: the tree files it includes (resolved paths) and the LLVM/MLIR/LLD headers it names
Graph = Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]


def coverage(units: Sequence[Unit], graph: Graph) -> dict[str, frozenset[str]]:
    """For each unit (by file): the tree headers it reaches through tree includes, plus the LLVM headers those
    headers include (the unit's own LLVM includes are not counted: only a header is shared by many units)."""
    out: dict[str, frozenset[str]] = {}
    for unit in units:
        seen: set[str] = set()
        todo = list(graph.get(unit.file, ((), ()))[0])
        while todo:
            f = todo.pop()
            if f in seen or f == unit.file:
                continue
            seen.add(f)
            todo.extend(graph.get(f, ((), ()))[0])
        llvm = {f"<{h}>" for f in seen for h in graph.get(f, ((), ()))[1]}
        out[unit.file] = frozenset(seen | llvm)
    return out


# Units compiled first whatever they cover: the bindings' LLVM glue, whose own body calls LLVM's API most directly
# (LLVM API changes in function bodies, which a header cover cannot see, broke it on real trees: the moved
# PassPlugin.h on d8da7c998, getHostCPUFeatures on triton-cpu 637ed8b0d with LLVM 19.1).
GLUE = ("/python/src/llvm.cc",)


def choose(covers: Mapping[str, frozenset[str]], cap: int = MAX_UNITS) -> list[str]:
    """The glue units first (``GLUE``), then a greedy set cover: the unit adding the most uncovered headers, the one
    reaching fewer headers on a tie (cheaper to compile), then by name; stops when all is covered or at ``cap``
    units."""
    left = set().union(*covers.values()) if covers else set()
    chosen: list[str] = sorted(u for u in covers if u.endswith(GLUE))[:cap]
    for unit in chosen:
        left -= covers[unit]
    while left and len(chosen) < cap:
        best = min(covers, key=lambda u: (-len(covers[u] & left), len(covers[u]), u))
        if not covers[best] & left:
            break
        chosen.append(best)
        left -= covers[best]
    return chosen


# gcc/clang: "file:line:col: error: message" (clang and gcc both; "fatal error" for a missing header)
_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?:fatal )?error: (?P<msg>.*)$")
_QUOTED = re.compile("['\u2018`]([^'\u2019`]*)['\u2019`]")


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    message: str
    unit: str


def diagnostics(unit: str, output: str) -> list[Diagnostic]:
    """The error lines of one unit's compiler output."""
    out = []
    for line in output.splitlines():
        m = _DIAG.match(line.strip())
        if m:
            out.append(Diagnostic(m.group("file"), int(m.group("line")), m.group("msg").strip(), unit))
    return out


def normalised(message: str) -> str:
    """A message with what varies per site dropped: template arguments, and the quoted names' parameter lists
    (``'void X::f(int)' marked 'override'`` and the same for ``Y::f`` are one cause only when the names match)."""
    text = re.sub(r"<[^<>]*>", "<>", message)
    text = re.sub(r"\([^()]*\)", "()", text)
    return _QUOTED.sub(lambda m: "'" + m.group(1).strip() + "'", text).strip()


@dataclass(frozen=True)
class Cause:
    message: str  # the normalised message
    kind: str  # "moved header", "API change" or "error"
    units: tuple[str, ...]  # the units that hit it
    example: Diagnostic


def group(diags: Iterable[Diagnostic], kind_of: Mapping[str, str] | None = None) -> list[Cause]:
    """The errors grouped by cause (the same normalised message at the same header line, or the same message in
    different units' own files), most units first; ``kind_of`` maps a message to its kind (the diagnosis)."""
    by: dict[str, list[Diagnostic]] = {}
    for d in diags:
        by.setdefault(normalised(d.message), []).append(d)
    causes = []
    for key, ds in by.items():
        first = min(ds, key=lambda d: (d.file, d.line))
        units = tuple(sorted({d.unit for d in ds}))
        causes.append(Cause(key, (kind_of or {}).get(first.message, "error"), units, first))
    return sorted(causes, key=lambda c: (-len(c.units), c.message))
