"""No shell anywhere in tritonbuild (#35): programs run from argument lists through tritonbuild/system/proc.py, so no
path, environment variable or wheel content is ever read by a shell. The checker is tried on bad snippets too,
so it cannot pass by finding nothing."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "tritonbuild"
FIXTURES = ("example/tree/",)  # Triton-shaped fixture content, not tritonbuild's code
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "csh", "tcsh", "fish", "busybox"}
SHELL_CALLS = {("os", "system"), ("os", "popen"), ("subprocess", "getoutput"), ("subprocess", "getstatusoutput"),
               ("asyncio", "create_subprocess_shell")}


def _is_shell(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.rsplit("/", 1)[-1] in SHELLS


def _shell_dash_c(items: list[ast.expr]) -> bool:
    """A shell name followed (anywhere later) by ``-c`` in one argument sequence."""
    for i, item in enumerate(items):
        if _is_shell(item) and any(isinstance(x, ast.Constant) and x.value == "-c" for x in items[i + 1:]):
            return True
    return False


# for templates with @PLACEHOLDERS@ that do not parse as Python: the same things, as text
TEXT = re.compile(r"shell\s*=\s*True|\bos\.(system|popen)\b|[\"'](/bin/)?(" + "|".join(SHELLS) +
                  r")[\"']\s*,\s*([^\]\)]*,\s*)?[\"']-c[\"']")


def shell_uses(source: str) -> list[str]:
    """Every place ``source`` would run a shell: shell=True, a shell name then "-c", os.system, os.popen and
    their like."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [f"{source.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in TEXT.finditer(source)]
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    found.append(f"{line}: shell={ast.unparse(kw.value)}")
            if _shell_dash_c(node.args):
                found.append(f"{line}: a shell with -c in the arguments")
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    (func.value.id, func.attr) in SHELL_CALLS:
                found.append(f"{line}: {func.value.id}.{func.attr}")
        elif isinstance(node, ast.List | ast.Tuple) and _shell_dash_c(node.elts):
            found.append(f"{line}: a shell with -c in an argument list")
        elif isinstance(node, ast.ImportFrom) and any((node.module, a.name) in SHELL_CALLS for a in node.names):
            found.append(f"{line}: from {node.module} import a shell runner")
    return found


def package_hits(find: Callable[[str], list[str]], skip: Callable[[str], bool]) -> list[str]:
    """``find``'s hits in every module of the package but those ``skip`` (by path relative to the package)."""
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if not skip(rel):
            bad += [f"tritonbuild/{rel}:{hit}" for hit in find(path.read_text())]
    return bad


def test_no_module_of_tritonbuild_runs_a_shell() -> None:
    bad = package_hits(shell_uses, lambda rel: rel.startswith(FIXTURES))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("snippet", [
    "subprocess.run(cmd, shell=True)",
    "subprocess.run(cmd, shell=flag)",
    "run([unshare, '--mount', 'sh', '-c', script, 'sh', *argv])",
    "run(('/bin/bash', '-e', '-c', script))",
    "os.execl('/bin/sh', 'sh', '-c', script)",
    "os.system('touch x')",
    "os.popen('ls').read()",
    "subprocess.getoutput('ls')",
    "from os import system",
    "@PLACEHOLDER@\nsubprocess.run(cmd, shell=True)",
    "@PLACEHOLDER@\nrun(['sh', '-c', script])",
])
def test_the_checker_finds_each_way_of_running_a_shell(snippet: str) -> None:
    assert shell_uses(snippet), snippet


@pytest.mark.parametrize("snippet", [
    "run([python, '-c', code])",
    "subprocess.run(argv, shell=False)",
    "run(['unshare', '--mount', sys.executable, '-m', 'tritonbuild.wheel.hide', d, f, *hide, '--', *argv])",
    "x = 'sh -c is what we do not do'",
    "@PLACEHOLDER@\nrun([python, '-c', code])",
])
def test_the_checker_leaves_argument_lists_alone(snippet: str) -> None:
    assert not shell_uses(snippet), snippet


# Every child process is started by tritonbuild/system/proc.py (#48): a session of its own when it is long, the
# death signal, a watchdog, the lock dir's record, stopped with tritonbuild on every way out. Nothing else starts
# one; each module that must is named here with why.
STARTERS = {("subprocess", n) for n in ("Popen", "run", "call", "check_call", "check_output")} | {
    ("os", n) for n in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnv", "spawnve", "spawnvp", "spawnvpe",
                        "spawnl", "spawnle", "spawnlp", "spawnlpe", "execv", "execve", "execvp", "execvpe", "execl",
                        "execle", "execlp", "execlpe")} | {
    ("asyncio", "create_subprocess_exec"), ("multiprocessing", "Process"), ("multiprocessing", "Pool"),
    ("multiprocessing", "get_context"), ("concurrent.futures", "ProcessPoolExecutor")}
# the example's tree and templates are what a test wheel runs, not tritonbuild's code (templates hold @NAME@ holes)
NOT_OURS = ("example/tree/", "example/backend_template/", "example/plugin_template/")
STARTS_ALLOWED = {
    "system/proc.py": "the one way children start",
    "wheel/hide.py": "runs as a child proc started (inside unshare): os.execv becomes the program, starting none",
}


def process_starts(source: str) -> list[str]:
    """Where ``source`` starts a process: a call ``subprocess.Popen(...)``/``os.fork()``/... (an annotation such as
    ``subprocess.Popen[str]`` is no start), or an import of a starter by name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                (func.value.id, func.attr) in STARTERS:
            found.append(f"{node.lineno}: {func.value.id}.{func.attr}(...)")
        if isinstance(node, ast.ImportFrom) and any((node.module, a.name) in STARTERS for a in node.names):
            found.append(f"{node.lineno}: from {node.module} import a process starter")
    return found


def test_no_module_but_proc_starts_a_process() -> None:
    bad = package_hits(process_starts, lambda rel: rel.startswith(NOT_OURS) or rel in STARTS_ALLOWED)
    assert not bad, "start children through tritonbuild/system/proc.py (run, start, start_bytes):\n" + "\n".join(bad)
    for rel in STARTS_ALLOWED:  # each exception still needs it
        assert process_starts((PKG / rel).read_text()), f"{rel} starts nothing now: drop it from STARTS_ALLOWED"


@pytest.mark.parametrize("snippet", [
    "subprocess.Popen([python, '-u', script], start_new_session=True)", "subprocess.run(argv)",
    "x = subprocess.check_output(argv)", "from subprocess import Popen", "from subprocess import run as go",
    "os.fork()", "os.execv(a, b)", "from os import posix_spawn", "from concurrent.futures import ProcessPoolExecutor",
])
def test_the_start_checker_finds_each_way_of_starting_a_process(snippet: str) -> None:
    assert process_starts(snippet), snippet


def test_the_start_checker_leaves_types_and_proc_calls_alone() -> None:
    assert process_starts("def f(c: subprocess.Popen[str]) -> None:\n    proc.end(c)\nproc.start(argv)\n"
                          "e = subprocess.TimeoutExpired\nproc.run(argv, timeout=3)\n") == []
