"""The layout README.md promises: stages as packages, pure stages that import nothing of the edge, no import
loops between modules or between packages across any number of them (function-level imports included), a base
layer of top-level modules that imports no stage package, every module listed in README's layout, no function over
60 lines."""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "tritonbuild"
SKIP = ("example/tree", "example/backend_template", "example/plugin_template")

# Pure: resolve a request into a plan and describe it, without reading the disk or running a program. A pure
# module imports only pure modules and the base layer. Everything else that is not the base layer is the edge
# (what reads the disk, runs programs or talks to the network): system/, gather/, execute/, wheel/, cli/, report/,
# llvm/, nvidia/, and in settings/ every module but the model: recipes.py, cacheroot.py and docs.py open files.
PURE = ("resolve", "settings/model.py", "plan.py", "result.py", "redact.py")
# The package below every stage: the system helpers, which import only the base layer.
SYSTEM = "system"
IO_CALLS = re.compile(r"\.(read_text|read_bytes|write_text|is_dir|is_file|exists|iterdir|r?glob)\(|"
                      r"\bopen\(|\bsubprocess\b|\bos\.environ\b|\bshutil\.")
# The top level: the package's face (``__init__``), its entry point (``__main__``, which runs the CLI and so stands
# above everything), and the base layer: every other top-level module, plain values (errors, plan, result, printable,
# redact, urls, ...) that import nothing of the edge (the system helpers included) and not the entry point, so every
# stage and the system helpers may import them without a loop. A base value may hold a pure stage's value (the plan
# holds the typed ``Settings`` of the pure settings model); the loop tests keep that from closing a loop.
ENTRY = "__main__"
# An import: the file (relative to the package's parent), its line, and the statement as written.
Where = tuple[str, int, str]


def modules(pkg: Path = PKG) -> dict[str, Path]:
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if rel.startswith(SKIP):
            continue
        name = "tritonbuild." + rel.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        out[name] = path
    return out


def import_lines(path: Path, known: set[str], root: Path = ROOT) -> dict[str, Where]:
    """Every tritonbuild module ``path`` imports, at module level or inside functions, with where it first does."""
    source = path.read_text()
    rel = path.relative_to(root).as_posix()
    found: dict[str, Where] = {}
    nodes = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.Import, ast.ImportFrom))
             or _dynamic_import(n) is not None]
    for node in sorted(nodes, key=lambda n: n.lineno):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Call):
            names = [str(_dynamic_import(node))]
        for n in names:
            while n and n not in known:
                n = n.rpartition(".")[0]
            if n.startswith("tritonbuild.") and n not in found:
                found[n] = (rel, node.lineno, " ".join((ast.get_source_segment(source, node) or "").split()))
    return found


def _dynamic_import(node: ast.AST) -> str | None:
    """The module named by ``importlib.import_module("...")`` or ``__import__("...")`` with a string constant,
    given by position or as ``name=`` (a relative one resolved against its ``package=``): an import all the same."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    given = {k.arg: k.value for k in node.keywords if k.arg}
    first = node.args[0] if node.args else given.get("name")
    package = node.args[1] if len(node.args) > 1 else given.get("package")
    if called not in ("import_module", "__import__") or not isinstance(first, ast.Constant):
        return None
    name = first.value
    if isinstance(name, str) and name.startswith(".") and isinstance(package, ast.Constant):
        return importlib.util.resolve_name(name, str(package.value))
    return name if isinstance(name, str) else None


def imports(path: Path, known: set[str], root: Path = ROOT) -> set[str]:
    """Every tritonbuild module ``path`` imports, at module level or inside functions."""
    return set(import_lines(path, known, root))


def graph(pkg: Path = PKG) -> dict[str, set[str]]:
    mods = modules(pkg)
    return {name: imports(path, set(mods), pkg.parent) - {name} for name, path in mods.items()}


def package_of(module: str) -> str:
    """``tritonbuild.execute.build`` and ``tritonbuild.execute`` are in ``execute``; a top-level module is its own."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_graph(pkg: Path = PKG) -> dict[str, dict[str, Where]]:
    """Which package imports which, each edge with the first import that makes it (by file, then line)."""
    mods = modules(pkg)
    edges: dict[str, dict[str, Where]] = {}
    for name, path in mods.items():
        for dep, where in import_lines(path, set(mods), pkg.parent).items():
            a, b = package_of(name), package_of(dep)
            if a != b and (b not in edges.setdefault(a, {}) or where < edges[a][b]):
                edges[a][b] = where
    return edges


def find_cycles(g: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The loops ``[a, b, ..., a]`` of ``g``: in each strongly connected part of two nodes or more (Tarjan's SCC),
    the shortest loop through each of its nodes, each loop once, written from its smallest node. A node's edge to
    itself is no loop here."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[set[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = {stack.pop()}
            while v not in part:
                part.add(stack.pop())
            parts.append(part)

    for v in sorted(g):
        if v not in index:
            connect(v)
    loops = {_from_smallest(_shortest_loop(g, v, p)) for p in parts if len(p) > 1 for v in p}
    return sorted(list(loop) for loop in loops)


def _from_smallest(loop: list[str]) -> tuple[str, ...]:
    """The same loop, written from its smallest node: ``[b, c, a, b]`` -> ``(a, b, c, a)``."""
    i = loop.index(min(loop))
    return (*loop[i:-1], *loop[:i], loop[i])


def _shortest_loop(g: Mapping[str, Iterable[str]], start: str, within: set[str]) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``within`` (breadth first)."""
    came: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(set(g.get(v, ())) & within - {v}):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came[path[-1]])
                    return [*reversed(path), start]
                if w not in came:
                    came[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{start} is in no loop within {sorted(within)}")


def describe_loops(g: Mapping[str, Mapping[str, Where]]) -> list[str]:
    """Each loop of ``g`` as ``a -> b -> c -> a`` and, under it, the import that makes each of its edges."""
    out = []
    for loop in find_cycles(g):
        out.append(" -> ".join(loop))
        out += [f"    {a} -> {b}: {g[a][b][0]}:{g[a][b][1]}: {g[a][b][2]}" for a, b in itertools.pairwise(loop)]
    return out


def is_base(name: str, mods: Mapping[str, Path]) -> bool:
    """A base-layer module: a top-level module (not a package) but the entry point."""
    return name.count(".") == 1 and mods[name].name != "__init__.py" and package_of(name) != ENTRY


def base_layer_faults(pkg: Path = PKG) -> list[str]:
    """Imports by a base-layer module of an edge module or of the entry point."""
    mods = modules(pkg)
    faults: set[Where] = set()
    for name, path in mods.items():
        if is_base(name, mods):
            faults |= {where for dep, where in import_lines(path, set(mods), pkg.parent).items()
                       if is_edge(dep, mods) or package_of(dep) == ENTRY}
    return [f"{file}:{line}: {text} (the base layer imports no edge module)" for file, line, text in sorted(faults)]


def system_faults(pkg: Path = PKG) -> list[str]:
    """Imports by a module of the system helpers of a stage package or of the entry point (anything but the base
    layer)."""
    mods = modules(pkg)
    stages = {package_of(m) for m, path in mods.items() if path.name == "__init__.py" and m != "tritonbuild"}
    faults: set[Where] = set()
    for name, path in mods.items():
        if package_of(name) == SYSTEM and name.count(".") > 1:
            faults |= {where for dep, where in import_lines(path, set(mods), pkg.parent).items()
                       if package_of(dep) in (stages - {SYSTEM}) | {ENTRY}}
    return [f"{file}:{line}: {text} (the system helpers import only the base layer)" for file, line, text in
            sorted(faults)]


def is_pure(name: str) -> bool:
    rel = name.removeprefix("tritonbuild.").replace(".", "/")
    return any(rel == p.removesuffix(".py") or rel.startswith(p + "/") or rel == p for p in PURE)


def is_edge(name: str, mods: Mapping[str, Path]) -> bool:
    """Neither pure nor the base layer (the package's face and the top-level modules but the entry point), nor a
    package's ``__init__`` that holds no import (a name, no code)."""
    base = name == "tritonbuild" or is_base(name, mods)
    path = mods[name]
    bare = path.name == "__init__.py" and not imports(path, set(mods), path.parents[name.count(".") + 1])
    return not (is_pure(name) or base or bare)


def pure_faults(pkg: Path = PKG) -> list[str]:
    """Each edge module a pure module imports, and each file or process call in one."""
    mods, bad = modules(pkg), []
    for name, deps in graph(pkg).items():
        if not is_pure(name):
            continue
        bad += [f"{name} imports {d} (edge)" for d in sorted(deps) if is_edge(d, mods)]
        source = mods[name].read_text()
        bad += [f"{name}: {m.group(0)}" for m in IO_CALLS.finditer(re.sub(r'"""[\s\S]*?"""|#[^\n]*', "", source))]
    return bad


def test_pure_stages_import_nothing_of_the_edge_and_touch_no_file() -> None:
    bad = pure_faults()
    assert not bad, "\n".join(bad)
    mods = modules()
    edge = {"settings.recipes", "settings.cacheroot", "settings.docs", "system.proc", "gather.collect", "cli.main"}
    assert {m for m in edge if is_edge(f"tritonbuild.{m}", mods)} == edge
    assert not any(is_edge(f"tritonbuild.{m}", mods) for m in ("settings.model", "settings", "plan", "errors"))


def test_a_pure_module_importing_an_edge_module_of_settings_fails(tmp_path: Path) -> None:
    """The rule is the complement of pure and base, not a list of edge packages: ``settings/`` holds the pure
    model beside modules that open files, and a pure module may import only the first."""
    files = {"__init__.py": "", "errors.py": "", "settings/__init__.py": "", "settings/model.py": "X = 1\n",
             "settings/recipes.py": "from tritonbuild.settings.model import X\n",
             "resolve/__init__.py": "",
             "resolve/ok.py": "from tritonbuild.settings import model\nimport tritonbuild.errors\n",
             "resolve/bad.py": "from tritonbuild.settings import recipes\n"}
    for rel, text in files.items():
        (tmp_path / "tritonbuild" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tritonbuild" / rel).write_text(text)
    assert pure_faults(tmp_path / "tritonbuild") == [
        "tritonbuild.resolve.bad imports tritonbuild.settings.recipes (edge)"]


def test_no_import_circles_counting_function_level_imports() -> None:
    # a package's __init__ that only re-exports is not a circle of code; none of ours re-exports
    circles = [" -> ".join(loop) for loop in find_cycles(graph())]
    assert not circles, "\n".join(circles)


def test_no_loop_between_packages_of_any_length() -> None:
    """No packages (cli, execute, wheel, report, gather, resolve, llvm, nvidia, settings, and the top-level modules)
    import each other in a loop, through however many others: a -> b -> c -> a fails as a -> b -> a does."""
    loops = describe_loops(package_graph())
    assert not loops, "packages that import each other in a loop:\n" + "\n".join(loops)


def test_the_base_layer_imports_no_stage_package() -> None:
    faults = base_layer_faults()
    assert not faults, "\n".join(faults)
    mods = modules()
    base = {package_of(m) for m in mods if is_base(m, mods)}
    assert {"errors", "result", "printable", "redact", "urls", "plan", "reporter"} <= base, sorted(base)


def test_the_system_helpers_import_only_the_base_layer() -> None:
    faults = system_faults()
    assert not faults, "\n".join(faults)
    system = {m.removeprefix(f"tritonbuild.{SYSTEM}.") for m in modules() if package_of(m) == SYSTEM}
    assert {"proc", "safegit", "fileutil", "http", "archive", "elf"} <= system, sorted(system)


def test_the_loop_finder_finds_three_packages_in_a_loop_and_no_loop_where_there_is_none() -> None:
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"c": {"a"}, "b": {"c"}, "a": {"b"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_cycles({"a": {"b", "c"}, "b": {"c"}, "c": {"c"}}) == []  # a diamond, and an edge to itself
    # two loops sharing a node: both are named
    assert find_cycles({"a": {"b"}, "b": {"a", "c"}, "c": {"b"}}) == [["a", "b", "a"], ["b", "c", "b"]]


def made_up_package(root: Path, *, loop: bool) -> Path:
    """A package ``tritonbuild`` under ``root``: a -> b (module level), b -> c (inside a function), c -> a when
    ``loop``; a top-level ``base`` module that imports a stage package; a system helper that imports one; the
    settings model (pure), imported by ``plan`` as it may be, importing an edge module of its package."""
    files = {
        "__init__.py": "",
        "base.py": "import os\n\nfrom tritonbuild.errors import Oops\nfrom tritonbuild.b import y\n"
                   "import importlib\nimportlib.import_module('tritonbuild.c.z')\n"
                   "importlib.import_module(name='tritonbuild.a.x')\n"
                   "importlib.import_module('.recipes', package='tritonbuild.settings')\n",
        "errors.py": "class Oops(Exception):\n    pass\n",
        "a/__init__.py": "",
        "a/x.py": '"""a."""\n\nfrom tritonbuild.b.y import f\n',
        "b/__init__.py": "",
        "b/y.py": "def f() -> None:\n    from tritonbuild.c import (\n        z,\n    )\n",
        "c/__init__.py": "",
        "c/z.py": "import tritonbuild.a.x\n" if loop else "import json\n",
        "system/__init__.py": "",
        "system/run.py": "from tritonbuild.errors import Oops\nfrom tritonbuild.a import x\n",
        "plan.py": "from tritonbuild.settings.model import S\n",  # the base may import the settings model
        "settings/__init__.py": "",
        "settings/model.py": "from tritonbuild.errors import Oops\nfrom tritonbuild.settings.recipes import R\n",
        "settings/recipes.py": "R = 1\n",
    }
    for rel, text in files.items():
        (root / "tritonbuild" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "tritonbuild" / rel).write_text(text)
    return root / "tritonbuild"


def test_the_layout_checks_name_the_loop_and_each_import_that_makes_it(tmp_path: Path) -> None:
    pkg = made_up_package(tmp_path / "loop", loop=True)
    assert describe_loops(package_graph(pkg)) == [
        "a -> b -> c -> a",
        "    a -> b: tritonbuild/a/x.py:3: from tritonbuild.b.y import f",
        "    b -> c: tritonbuild/b/y.py:2: from tritonbuild.c import ( z, )",
        "    c -> a: tritonbuild/c/z.py:1: import tritonbuild.a.x",
    ]
    assert describe_loops(package_graph(made_up_package(tmp_path / "none", loop=False))) == []
    assert base_layer_faults(pkg) == [
        "tritonbuild/base.py:4: from tritonbuild.b import y (the base layer imports no edge module)",
        "tritonbuild/base.py:6: importlib.import_module('tritonbuild.c.z') (the base layer imports no edge module)",
        "tritonbuild/base.py:7: importlib.import_module(name='tritonbuild.a.x') (the base layer imports no edge "
        "module)",
        "tritonbuild/base.py:8: importlib.import_module('.recipes', package='tritonbuild.settings') (the base layer "
        "imports no edge module)"]
    assert [f for f in pure_faults(pkg) if "recipes" in f] == [  # what the plan holds is pure: it imports no edge
        "tritonbuild.settings.model imports tritonbuild.settings.recipes (edge)"]
    assert system_faults(pkg) == [
        "tritonbuild/system/run.py:2: from tritonbuild.a import x (the system helpers import only the base layer)"]


def test_test_modules_take_shared_helpers_from_helpers_or_a_conftest_not_from_each_other() -> None:
    tests = ROOT / "tests"
    bad = []
    for path in sorted(tests.rglob("*.py")):
        nodes = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]
        for node in nodes:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:  # from tests.unit.test_x import f, from tests.unit import test_x, from . import test_x
                mod = "." * node.level + (node.module or "")
                names = [mod, *(f"{mod}.{a.name}".replace("..", ".") if node.module else mod + a.name
                                for a in node.names)]
            bad += [f"{path.relative_to(ROOT)}:{node.lineno}: imports {n}" for n in names
                    if n.startswith(("tests.", ".")) and re.search(r"(^|\.)test_\w+$", n)]
    assert not bad, "move the shared helper into tests/helpers.py (or a conftest.py):\n" + "\n".join(bad)


def test_readme_layout_lists_every_package_and_module() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("<!-- layout:begin -->"):readme.index("<!-- layout:end -->")]
    listed = set(re.findall(r"`(tritonbuild/[\w/]+(?:\.py)?/?)`", section))
    wanted = set()
    for path in modules().values():
        rel = "tritonbuild/" + path.relative_to(PKG).as_posix()
        if rel.endswith("/__init__.py"):
            rel = rel.removesuffix("__init__.py")
            if rel == "tritonbuild/":
                continue
        wanted.add(rel)
    assert wanted - listed == set(), f"README's layout section lacks {sorted(wanted - listed)}"
    assert listed - wanted == set(), f"README's layout section names what is gone: {sorted(listed - wanted)}"


@pytest.mark.parametrize("limit", [60])
def test_no_function_over_sixty_lines(limit: int) -> None:
    long = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    long.append(f"{name}.{node.name}: {length} lines")
    assert not long, "\n".join(long)
