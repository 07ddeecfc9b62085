"""The environment is read once, by the command line (#37): ``tritonbuild.cli.options.environment`` snapshots it
into the ``Request`` and every plan, lookup and provider below sees that copy. An AST scan holds every module of
the package to it: a read of ``os.environ`` (``os.getenv``, ``from os import environ``) outside the allow-list
fails, and so does an allow-listed module that no longer reads it (the list says what is true)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "tritonbuild"
# Templates written into the example tree: they run in the built wheel's or the build's own processes.
SKIP = ("example/tree", "example/backend_template", "example/plugin_template")

# Modules that read the process environment, and why that is not the request's environment.
ALLOWED = {
    "cli/options.py": "the command line's one snapshot (environment()) that every Request is made with",
    "system/proc.py": "the one subprocess runner: a child inherits the process's environment when its "
                      "caller passes none",
    "system/safegit.py": "git's child environment: the process's, less what redirects git, when its caller passes none",
    "report/render.py": "NO_COLOR: how the console draws, not what a command asked for",
    "execute/source_tests.py": "the test runner's child environment (lit, ctest, pytest), the process's",
    "gather/patches.py": "git apply's child environment, with GIT_CEILING_DIRECTORIES added",
    "llvm/source_build.py": "cmake's and ninja's child environment when LLVM is built from source",
    "wheel/checks/importing.py": "the fresh venv's import: a child environment without PYTHON* variables",
    "wheel/compilecheck_run.py": "the compile check's child environment when its caller passes none",
    "wheel/corpus_kernels.py": "runs inside the wheel's interpreter (a child script), not in tritonbuild's process",
    "gather/pythons.py": "the interpreter probe's memo key: the PYTHON* variables its child inherits from the process",
    "example/__init__.py": "git's child environment while the example's dependency repository is committed",
}


def environ_reads(source: str) -> list[int]:
    """The lines of ``source`` that read the process environment: ``os.environ`` / ``os.environb`` /
    ``os.getenv`` / ``os.putenv`` (also under another name for ``os``), or ``from os import environ``."""
    tree = ast.parse(source)
    names = {"os"} | {a.asname for n in ast.walk(tree) if isinstance(n, ast.Import)
                      for a in n.names if a.name == "os" and a.asname}
    wanted = {"environ", "environb", "getenv", "getenvb", "putenv"}
    lines = []
    for node in ast.walk(tree):
        attribute = (isinstance(node, ast.Attribute) and node.attr in wanted and isinstance(node.value, ast.Name)
                     and node.value.id in names)
        imported = isinstance(node, ast.ImportFrom) and node.module == "os" and any(a.name in wanted
                                                                                   for a in node.names)
        if attribute or imported:
            lines.append(node.lineno)
    return sorted(lines)


def readers(pkg: Path = PKG) -> dict[str, list[int]]:
    """Each module of the package (templates left out) that reads the environment, with the lines."""
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if not rel.startswith(SKIP) and (lines := environ_reads(path.read_text())):
            out[rel] = lines
    return out


def test_only_the_command_line_and_the_listed_edges_read_the_environment() -> None:
    found = readers()
    unlisted = [f"tritonbuild/{rel}:{','.join(map(str, lines))}" for rel, lines in found.items()
                if rel not in ALLOWED]
    assert not unlisted, ("these read os.environ below the command line; take the Request's env (or, at an edge "
                          "that starts a child, add the module to ALLOWED with the reason):\n" + "\n".join(unlisted))


def test_every_allowed_module_still_reads_the_environment() -> None:
    found = readers()
    stale = sorted(rel for rel in ALLOWED if rel not in found)
    assert not stale, f"ALLOWED names modules that no longer read os.environ: {stale} (remove them)"


def test_the_request_and_the_commands_below_the_entry_read_no_environment() -> None:
    found = readers()
    for rel in ("gather/request.py", "execute/runs.py", "execute/selftest.py", "execute/compat.py", "cli/build.py",
                "cli/host.py", "cli/llvm.py", "cli/backends.py", "cli/checkllvm.py", "cli/rebuild.py",
                "cli/wheels.py", "wheel/verify.py"):
        assert rel not in found, f"tritonbuild/{rel} reads os.environ at lines {found[rel]}"
    assert [rel for rel in found if rel.startswith("cli/")] == ["cli/options.py"]


def test_the_scan_sees_every_way_of_reading_it_and_not_a_word_in_a_string(tmp_path: Path) -> None:
    reads = {
        "a.py": "import os\nx = os.environ.get('A')\n",
        "b.py": "import os as o\n\n\ndef f() -> None:\n    return o.getenv('B')\n",
        "c.py": "from os import environ\n",
        "d.py": "import os\nenv = dict(os.environ)\n",
    }
    clean = {"e.py": "import os\ntext = 'os.environ.get(\"X\")'\n# os.environ\nenv = {'PATH': os.pathsep}\n",
             "example/tree/f.py": "import os\nx = os.environ['Y']\n"}
    for rel, text in {**reads, **clean}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert readers(tmp_path) == {"a.py": [2], "b.py": [5], "c.py": [1], "d.py": [2]}

