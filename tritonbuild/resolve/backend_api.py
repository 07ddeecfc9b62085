"""Will this backend work with this Triton? The Python backend interface, checked from the sources (pure).

Triton discovers a backend by importing its ``compiler`` and ``driver`` modules and instantiating the one
concrete ``BaseBackend`` and ``DriverBase`` subclass. A backend written for another Triton fails there at import
time (``TypeError: Can't instantiate abstract class ...``) or later, when Triton calls a method with another
signature. This module reads the source's ``python/triton/backends/{compiler,driver}.py`` and the backend's own
``backend/{compiler,driver}.py`` with ``ast`` (nothing is imported) and reports, per backend:

- error: an abstract method or property of the source's base classes the backend does not define;
- warning: a method whose positional parameters cannot take the call the base class declares, or that is a
  plain method where the base has a static/class method (or the reverse);
- warning: a public method the backend defines that neither the source's base classes declare nor any code
  of the source or the backend calls (the interface it was written for moved on).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.plan import BackendPlan

BASES = ("BaseBackend", "DriverBase", "GPUDriver")
ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Method:
    name: str
    kind: str  # "method", "static", "class", "property"
    required: int  # positional parameters without defaults (self/cls left out)
    accepts: int | None  # positional parameters it can take (None: *args)
    abstract: bool
    line: int


@dataclass(frozen=True)
class ClassInfo:
    name: str
    bases: tuple[str, ...]
    methods: dict[str, Method] = field(default_factory=dict)
    file: str = ""
    syntax_error: str = ""  # for SYNTAX_ERROR: "line N: what Python says"


SYNTAX_ERROR = "<syntax error>"  # the one entry parse_classes gives for a module Python cannot parse


@dataclass(frozen=True)
class Finding:
    severity: str  # "error" or "warning"
    file: str
    message: str


def _decorators(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    out = set()
    for d in fn.decorator_list:
        node = d.func if isinstance(d, ast.Call) else d
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
    return out


def _method(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Method:
    decos = _decorators(fn)
    kind = ("static" if decos & {"staticmethod", "abstractstaticmethod"}
            else "class" if decos & {"classmethod", "abstractclassmethod"}
            else "property" if decos & {"property", "abstractproperty"} else "method")
    positional = [*fn.args.posonlyargs, *fn.args.args]
    if kind != "static" and positional:
        positional = positional[1:]  # self / cls
    required = len(positional) - len(fn.args.defaults)
    accepts = None if fn.args.vararg else len(positional)
    abstract = bool(decos & {"abstractmethod", "abstractproperty", "abstractclassmethod", "abstractstaticmethod"})
    return Method(fn.name, kind, max(required, 0), accepts, abstract, fn.lineno)


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def parse_classes(text: str, file: str = "") -> dict[str, ClassInfo]:
    """The top-level classes of a module with their methods; a module Python cannot parse gives one ``SYNTAX_ERROR``
    entry, which ``check_module`` reports (importing the backend would fail)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return {SYNTAX_ERROR: ClassInfo(SYNTAX_ERROR, (), {}, file, f"line {exc.lineno}: {exc.msg}")}
    except (ValueError, RecursionError, MemoryError) as exc:  # a NUL byte, nesting the parser cannot hold
        return {SYNTAX_ERROR: ClassInfo(SYNTAX_ERROR, (), {}, file, f"line 1: {type(exc).__name__}: {exc}")}
    out: dict[str, ClassInfo] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods = {m.name: _method(m) for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}
            out[node.name] = ClassInfo(node.name, tuple(_base_name(b) for b in node.bases), methods, file)
    return out


@dataclass
class Usage:
    """What a body of code reads: every attribute name and identifier-like string constant (``x.hash()``,
    ``getattr(b, "get_module_map")``), and the positional argument counts of ``obj.name(...)`` calls."""

    names: set[str] = field(default_factory=set)
    calls: dict[str, set[int]] = field(default_factory=dict)

    def __or__(self, other: Usage) -> Usage:
        calls = {k: set(v) for k, v in self.calls.items()}
        for k, v in other.calls.items():
            calls.setdefault(k, set()).update(v)
        return Usage(self.names | other.names, calls)


def usage(texts: Iterable[str]) -> Usage:
    out = Usage()
    for text in texts:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):  # reported by check_module when it matters
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                out.names.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                out.names.add(node.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not any(
                    isinstance(a, ast.Starred) for a in node.args):
                out.calls.setdefault(node.func.attr, set()).add(len(node.args))
    return out


def _chain(cls: ClassInfo, local: Mapping[str, ClassInfo], source: Mapping[str, ClassInfo]) -> list[ClassInfo]:
    """``cls`` and the classes it derives from that we can see (the backend's file, then the source's)."""
    out, todo, seen = [], [cls], set()
    while todo:
        c = todo.pop(0)
        if c.name in seen:
            continue
        seen.add(c.name)
        out.append(c)
        for b in c.bases:
            if b in local and b != c.name:
                todo.append(local[b])
            elif b in source:
                todo.append(source[b])
    return out


def _fits(base: Method, sub: Method, called_with: set[int] | None = None) -> str | None:
    """Why ``sub`` cannot stand in for ``base`` (as declared, or as the source's code calls it), or None."""
    # A static/class method serves where a plain one is declared (instances call it too); a plain method cannot
    # serve where Triton calls the class itself (``driver.is_active()``, ``backend.supports_target(target)``).
    if base.kind in ("static", "class") and sub.kind == "method":
        return "is a plain method but the source's base declares a static/class method (Triton calls it on the class)"
    if base.kind == "property" or sub.kind == "property":
        return None if base.kind == sub.kind else f"is a {sub.kind} but the source's base declares a {base.kind}"
    # The source's own calls are what counts (its base class declaration can lag behind them: upstream's
    # BaseBackend.add_stages declares 2 arguments while its compiler passes 3). A call site found by name may be
    # another object's method, so the backend must fit at least one of them, not all.
    counts = sorted(called_with) if called_with else [base.accepts if base.accepts is not None else base.required]
    if any(sub.required <= n and (sub.accepts is None or sub.accepts >= n) for n in counts):
        return None
    have = (f"{sub.required}" if sub.accepts == sub.required else
            f"{sub.required} to {'any' if sub.accepts is None else sub.accepts}")
    how = "the source calls it" if called_with else "the source's base declares it"
    return f"takes {have} positional arguments but {how} with {' or '.join(map(str, counts))}"


def check_module(backend_classes: Mapping[str, ClassInfo], source: Mapping[str, ClassInfo],
                 used: Usage, source_calls: Mapping[str, set[int]] | None = None) -> list[Finding]:
    """Findings for the concrete subclasses of the source's base classes in one backend module (a module Python
    cannot parse: an error, Triton's import of the backend fails)."""
    broken = backend_classes.get(SYNTAX_ERROR)
    if broken is not None:
        where, _, what = broken.syntax_error.partition(": ")
        return [Finding(ERROR, broken.file, f"{broken.file} ({where}) is not valid Python: {what}; importing the "
                                            "backend fails with SyntaxError")]
    findings: list[Finding] = []
    for cls in backend_classes.values():
        chain = _chain(cls, backend_classes, source)
        roots = [c for c in chain if c.name in BASES and c.name in source]
        if not roots or cls.name in BASES:
            continue
        mine = {name: m for c in chain if c.name not in BASES for name, m in c.methods.items()}
        declared = {name: m for c in roots for name, m in c.methods.items()}
        interface = {name for c in source.values() for name in c.methods}  # every base class's methods
        concrete_in_bases = {name for c in roots for name, m in c.methods.items() if not m.abstract}
        missing = sorted(n for n, m in declared.items() if m.abstract and n not in mine and n not in concrete_in_bases)
        if missing:
            findings.append(Finding(ERROR, cls.file, (
                f"{cls.name} does not define {', '.join(missing)}, which the source's {roots[0].name} declares "
                f"abstract: importing the backend fails with \"Can't instantiate abstract class {cls.name}\"")))
        for name, m in sorted(mine.items()):
            base = declared.get(name)
            if base is not None and not name.startswith("__"):
                why = _fits(base, m, (source_calls or {}).get(name))
                if why:
                    findings.append(Finding(WARNING, cls.file, f"{cls.name}.{name} (line {m.line}) {why}"))
            elif not name.startswith("_") and name not in used.names and name not in interface:
                findings.append(Finding(WARNING, cls.file, (
                    f"{cls.name}.{name} (line {m.line}) is not declared by the source's {roots[0].name} and "
                    "nothing in the source or the backend calls it (written for another Triton?)")))
    return findings


@dataclass(frozen=True)
class BackendApi:
    name: str
    findings: tuple[Finding, ...]
    verdict: str
    drift: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "findings": [asdict(f) for f in self.findings], "drift": self.drift}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BackendApi:
        """The value ``to_dict`` (with ``name``) wrote."""
        return cls(data["name"], tuple(Finding(**f) for f in data["findings"]), data["verdict"], data["drift"])



def verdict(findings: Iterable[Finding], drift_commits: int = 0) -> str:
    fs = list(findings)
    if any(f.severity == ERROR for f in fs):
        return "will fail"
    return "risky" if fs or drift_commits else "compatible"


def attach(api_check: bool, results: Mapping[str, BackendApi], backends: tuple[BackendPlan, ...],
           warnings: list[str]) -> tuple[BackendPlan, ...]:
    """Attach each backend's compatibility check; a backend that will fail to import is an error unless
    --no-api-check, which makes it a warning like the rest."""
    out, fatal = [], []
    for b in backends:
        api = results.get(b.path)
        if api is None:
            out.append(b)
            continue
        out.append(replace(b, api=api.to_dict()))
        if api.verdict == "compatible":
            continue
        lines = "; ".join(f.message for f in api.findings)
        if api.verdict == "will fail" and api_check:
            fatal.append(f"{b.name}: {lines}")
        else:
            warnings.append(f"backend {b.name!r} ({api.verdict} with this Triton): {lines}")
    if fatal:
        raise UserError(f"A backend does not fit this Triton's backend interface: {' | '.join(fatal)}. Update the "
                        "backend to the source's python/triton/backends/compiler.py and driver.py, build the Triton it "
                        "was written for, or pass --no-api-check to build anyway (`tritonbuild backends --check` "
                        "shows the full report).")
    return tuple(out)
