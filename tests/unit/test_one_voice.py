"""One voice, one exit: what library code has to say goes to the callback or reporter its caller hands it, never
to print, and the command line hands it the reporter's method (a warning from making a plan: stderr's ``warning:``
line); no code but ``cli/main.py`` ends the process: a command returns its exit code to ``main``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tritonbuild.cli.options import warn_on_stderr
from tritonbuild.gather import collect, git
from tritonbuild.request import Request
from tritonbuild.settings.model import resolve_settings

URL = "https://example.invalid/triton.git"
PKG = Path(__file__).resolve().parents[2] / "tritonbuild"
SKIP = ("example/tree/", "example/backend_template/", "example/plugin_template/")  # trees written out, not run here
# Programs of their own: each runs in a child process (``python -m`` or a wheel's interpreter), and its stdout,
# stderr and exit status are what the parent reads.
PROGRAMS = {"wheel/reaper.py": "the timeout reaper", "wheel/hide.py": "the mount namespace that hides paths",
            "wheel/bundle.py": "the install step that copies libraries", "wheel/corpus_kernels.py": "the compile check"}
VOICE = ("cli/", "report/")  # the command line and its rendering: where output is made
EXIT = ("cli/main.py",)  # the one place the process exits


def _library_calls() -> list[tuple[str, int, str]]:
    """(file, line, what) for each print, ``sys.exit``, ``exit``/``quit`` and ``raise SystemExit`` of the package,
    outside ``SKIP``, ``PROGRAMS`` and ``if __name__ == "__main__":`` blocks."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(SKIP) or rel in PROGRAMS:
            continue
        tree = ast.parse(path.read_text(), rel)
        skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_main_guard(block.test)
                   for n in ast.walk(block)}
        for node in ast.walk(tree):
            if id(node) not in skipped and (what := _what(node)):
                found.append((rel, getattr(node, "lineno", 0), what))
    return found


def _is_main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def _what(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("print", "exit", "quit"):
            return func.id
        if isinstance(func, ast.Attribute) and func.attr in ("exit", "_exit") and isinstance(func.value, ast.Name) \
                and func.value.id in ("sys", "os"):
            return f"{func.value.id}.{func.attr}"
    if isinstance(node, ast.Raise) and node.exc is not None:
        raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(raised, ast.Name) and raised.id == "SystemExit":
            return "SystemExit"
    return None


def test_library_code_never_prints() -> None:
    printing = [f"{rel}:{line}" for rel, line, what in _library_calls()
                if what == "print" and not rel.startswith(VOICE)]
    assert printing == [], "print outside the command line: hand the caller's reporter method instead"


def test_only_main_exits() -> None:
    exiting = [f"{rel}:{line} {what}" for rel, line, what in _library_calls() if what != "print" and rel not in EXIT]
    assert exiting == [], "an exit outside cli/main.py: return the exit code to main instead"


def test_the_guard_finds_what_it_forbids(tmp_path: Path) -> None:
    code = ("import sys\nprint(1)\nsys.exit(2)\nraise SystemExit(3)\nif __name__ == '__main__':\n    print(4)\n"
            "console.print(5)\n")
    found = [_what(n) for n in ast.walk(ast.parse(code)) if _what(n)]
    assert sorted(found) == ["SystemExit", "print", "print", "sys.exit"]
    assert any(isinstance(b, ast.If) and _is_main_guard(b.test) for b in ast.walk(ast.parse(code)))
    assert all((PKG / rel).is_file() for rel in PROGRAMS) and all((PKG / rel).is_file() for rel in EXIT)


def _triton_shaped(root: Path) -> Path:
    (root / "python" / "triton").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("project(triton CXX C)\n")
    return root


def test_an_offline_recipe_source_falls_back_to_the_checkout_said_through_warn_not_printed(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cwd = _triton_shaped(tmp_path / "tree")
    o = resolve_settings({"offline": True}, {}, {"source": URL}, "recipe r")
    said: list[str] = []
    assert collect.source_root(o, cwd, tmp_path / "cache", said.append) == cwd
    assert said == [f"offline, and the recipe's source {URL} is not in the source cache: building the Triton "
                    f"checkout in the current directory {cwd} instead (pass --source to choose another)."]
    assert capfd.readouterr() == ("", "")


def test_a_source_given_on_the_command_line_offline_is_refused_with_nothing_said(tmp_path: Path) -> None:
    cwd = _triton_shaped(tmp_path / "tree")
    o = resolve_settings({"offline": True, "source": URL}, {})
    said: list[str] = []
    with pytest.raises(git.OfflineMissing):
        collect.source_root(o, cwd, tmp_path / "cache", said.append)
    assert said == []


def test_the_command_line_says_a_plan_warning_on_stderr_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    warn_on_stderr("offline, and so on")
    out, err = capsys.readouterr()
    assert (out, err) == ("", "warning: offline, and so on\n")


def test_a_request_made_without_a_reporter_says_nothing(capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    request = Request({}, {}, tmp_path)
    request.warn("not shown")
    assert capfd.readouterr() == ("", "")
    assert request == Request({}, {}, tmp_path, warn=print)  # the channel is not part of what was asked
