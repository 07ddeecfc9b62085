"""Calls a backend makes into libtriton's Python bindings, checked against the source's pybind11 code (pure).

A backend's stages drive libtriton through bindings such as ``ir.pass_manager(ctx).run(mod)``. Their signatures
move with Triton: d8da7c998's ``pass_manager.run`` takes ``(mod, repro_pipeline_tag)`` where May 2025 trees took
``(mod)``, and a backend written for the older one fails with ``TypeError: run(): incompatible function arguments``
when its first kernel compiles, after the build and the import went fine. This module reads the lambdas bound in
``python/src/*.cc`` (``py::class_<T>(m, "name")`` ... ``.def("method", [](T &self, A a, B b) {...})``) and the
calls a backend's Python makes on objects it made from those classes (``pm = ir.pass_manager(...)`` then
``pm.run(...)``), and reports a call whose positional argument count no overload takes. Methods bound through
member pointers, with ``py::arg`` defaults, or called with ``*args``/keywords are left alone: no guess.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

_CLASS = re.compile(r'(?:py|pybind11)::class_<[^;]*?>\s*\(\s*\w+\s*,\s*"(\w+)"')
_DEF = re.compile(r'\.def\(\s*"(\w+)"\s*,')
_LAMBDA = re.compile(r'\s*\[[^\]]*\]\s*\(')

Bindings = dict[str, dict[str, frozenset[int] | None]]  # class -> method -> argument counts (None: unknown)


def _params(text: str, start: int) -> list[str] | None:
    """The comma-separated parameters of the parenthesis opened just before ``start`` (templates kept whole)."""
    depth, angle = 1, 0
    cur: list[str] = []
    out: list[str] = []
    for ch in text[start:start + 2000]:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                last = "".join(cur).strip()
                return [*out, last] if last else out
        elif ch == "<":
            angle += 1
        elif ch == ">":
            angle = max(angle - 1, 0)
        elif ch == "," and depth == 1 and angle == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    return None


def _arity(segment: str, after_name: int) -> int | None:
    """Arguments a Python call passes to a ``.def`` whose name ends at ``after_name`` (self left out)."""
    m = _LAMBDA.match(segment, after_name)
    if not m:
        return None  # a member pointer or a function: not read
    params = _params(segment, m.end())
    if params is None or not params or "self" not in params[0] or "::arg(" in segment[m.end():]:
        return None
    return len(params) - 1


def parse_bindings(texts: Iterable[str]) -> Bindings:
    out: Bindings = {}
    for text in texts:
        starts = [(m.start(), m.group(1)) for m in _CLASS.finditer(text)]
        for i, (pos, cls) in enumerate(starts):
            chunk = text[pos:starts[i + 1][0] if i + 1 < len(starts) else len(text)]
            methods = out.setdefault(cls, {})
            defs = list(_DEF.finditer(chunk))
            for j, d in enumerate(defs):
                segment = chunk[d.start():defs[j + 1].start() if j + 1 < len(defs) else len(chunk)]
                n = _arity(segment, d.end() - d.start())
                known = methods.get(d.group(1), frozenset())
                methods[d.group(1)] = None if n is None or known is None else known | {n}
    return out


def _constructed(node: ast.AST, classes: Mapping[str, object]) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in classes:
        return node.func.attr
    return None


def bad_calls(py_text: str, bindings: Bindings) -> list[tuple[int, str, str, int, frozenset[int]]]:
    """``(line, class, method, arguments passed, arguments the source takes)`` of each call no overload takes."""
    try:
        tree = ast.parse(py_text)
    except SyntaxError:
        return []
    found = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        kinds: dict[str, str] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and (cls := _constructed(node.value, bindings)):
                kinds.update({t.id: cls for t in node.targets if isinstance(t, ast.Name)})
        for node in ast.walk(fn):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in kinds):
                continue
            cls, method = kinds[node.func.value.id], node.func.attr
            takes = bindings[cls].get(method)
            if takes is None or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                continue
            if len(node.args) not in takes:
                found.append((node.lineno, cls, method, len(node.args), takes))
    return sorted(set(found))
