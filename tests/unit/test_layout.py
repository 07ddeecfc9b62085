"""The layout README.md promises: stages as packages, pure stages that import nothing of the edge, no import
circles (function-level imports included), every module listed in README's layout, no function over 60 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "tritonbuild"
SKIP = ("example/tree", "example/backend_template", "example/plugin_template")

# Pure: resolve a request into a plan and describe it, without reading the disk or running a program.
PURE = ("resolve", "settings/model.py", "plan.py", "result.py", "nvidia/parts.py", "nvidia/choose.py")
# The edge: what reads the disk, runs programs or talks to the network.
EDGE = ("tritonbuild.proc", "tritonbuild.http", "tritonbuild.fileutil", "tritonbuild.gather", "tritonbuild.execute",
        "tritonbuild.wheel", "tritonbuild.cli", "tritonbuild.report", "tritonbuild.llvm.probe",
        "tritonbuild.llvm.cache", "tritonbuild.llvm.download", "tritonbuild.llvm.provision",
        "tritonbuild.llvm.source_build", "tritonbuild.nvidia.discover", "tritonbuild.nvidia.pypi",
        "tritonbuild.nvidia.stage")
IO_CALLS = re.compile(r"\.(read_text|read_bytes|write_text|is_dir|is_file|exists|iterdir|r?glob)\(|"
                      r"\bopen\(|\bsubprocess\b|\bos\.environ\b|\bshutil\.")


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(SKIP):
            continue
        name = "tritonbuild." + rel.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        out[name] = path
    return out


def imports(path: Path, known: set[str]) -> set[str]:
    """Every tritonbuild module ``path`` imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for n in names:
            while n and n not in known:
                n = n.rpartition(".")[0]
            if n.startswith("tritonbuild."):
                found.add(n)
    return found


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports(path, set(mods)) - {name} for name, path in mods.items()}


def is_pure(name: str) -> bool:
    rel = name.removeprefix("tritonbuild.").replace(".", "/")
    return any(rel == p.removesuffix(".py") or rel.startswith(p + "/") or rel == p for p in PURE)


def test_pure_stages_import_nothing_of_the_edge_and_touch_no_file() -> None:
    bad = []
    for name, deps in graph().items():
        if not is_pure(name):
            continue
        bad += [f"{name} imports {d}" for d in deps if d.startswith(EDGE)]
        source = modules()[name].read_text()
        bad += [f"{name}: {m.group(0)}" for m in IO_CALLS.finditer(re.sub(r'"""[\s\S]*?"""|#[^\n]*', "", source))]
    assert not bad, "\n".join(bad)


def test_no_import_circles_counting_function_level_imports() -> None:
    g = graph()
    circles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for dep in sorted(g.get(node, ())):
            if dep.endswith("__init__") or dep not in g:
                continue
            if state.get(dep) == 1:
                circles.append(" -> ".join([*stack[stack.index(dep):], dep]))
            elif dep not in state:
                visit(dep, [*stack, dep])
        state[node] = 2

    for name in sorted(g):
        if name not in state:
            visit(name, [name])
    # a package's __init__ that only re-exports is not a circle of code; none of ours re-exports
    assert not circles, "\n".join(circles)


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
    wanted.add("tritonbuild/example/")
    wanted = {w for w in wanted if not (w.startswith("tritonbuild/example/") and w != "tritonbuild/example/")}
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


def test_the_stage_packages_import_each_other_one_way() -> None:
    """No two packages (cli, execute, wheel, report, gather, resolve, llvm, nvidia, settings) import each other."""
    def package(module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 2 else module

    both = set()
    edges = {(package(a), package(d)) for a, deps in graph().items() for d in deps if package(a) != package(d)}
    for a, b in edges:
        if (b, a) in edges:
            both.add(tuple(sorted((a, b))))
    assert not both, f"packages that import each other: {sorted(both)}"
