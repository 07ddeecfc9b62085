"""One voice, one exit: what library code has to say goes to the callback or reporter its caller hands it, never
to print, and the command line hands it the reporter's method (a warning from making a plan: stderr's ``warning:``
line); no code but ``cli/main.py`` ends the process: a command returns its exit code to ``main``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tritonbuild.cli.options import warn_on_stderr
from tritonbuild.gather import collect, git
from tritonbuild.gather.request import Request
from tritonbuild.reporter import silent
from tritonbuild.settings.model import resolve_settings

URL = "https://example.invalid/triton.git"
PKG = Path(__file__).resolve().parents[2] / "tritonbuild"
SKIP = ("example/tree/", "example/backend_template/", "example/plugin_template/")  # trees written out, not run here
# Programs of their own: each runs in a child process (``python -m`` or a wheel's interpreter), and its stdout,
# stderr and exit status are what the parent reads.
PROGRAMS = {"wheel/reaper.py": "the timeout reaper", "wheel/hide.py": "the mount namespace that hides paths",
            "wheel/bundle.py": "the install step that copies libraries", "wheel/corpus_kernels.py": "the compile check"}
VOICE = ("cli/", "report/", "__main__.py")  # the command line and its rendering: where output is made
CLICK_EXIT = ("cli/",)  # click's own ways out (Exit, Abort) belong to the commands
EXIT = ("cli/main.py",)  # the one place the process exits
# The names library code may not import, by module: each is a way around the reporter or around main's exit.
IMPORTS = {"sys": {"exit", "stdout", "stderr"}, "os": {"_exit", "abort"}, "builtins": {"print"},
           "click": {"echo", "secho", "Abort"}, "click.exceptions": {"Exit", "Abort"}, "click.utils": {"echo"}}
WHERE = {"voice": VOICE, "click exit": CLICK_EXIT, "exit": EXIT}  # where each kind of finding is allowed


def refused(pkg: Path = PKG) -> list[str]:
    """``file:line what`` for each way library code under ``pkg`` prints or exits outside the places allowed
    (``WHERE``), leaving out ``SKIP``, ``PROGRAMS`` and ``if __name__ == "__main__":`` blocks."""
    found = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if rel.startswith(SKIP) or rel in PROGRAMS:
            continue
        tree = ast.parse(path.read_text(), rel)
        skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_main_guard(block.test)
                   for n in ast.walk(block)}
        called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        for node in ast.walk(tree):
            if id(node) not in skipped and (kind_what := _what(node, id(node) in called)) \
                    and not rel.startswith(WHERE[kind_what[0]]):
                found.append(f"{rel}:{getattr(node, 'lineno', 0)} {kind_what[1]}")
    return found


def _is_main_guard(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else "?"


def _what(node: ast.AST, called: bool = False) -> tuple[str, str] | None:
    """(kind, what) when ``node`` prints or exits: ``voice`` (print, called or handed on as a value; writing to
    sys.stdout/stderr; click.echo), ``exit`` (sys.exit, os._exit, os.abort, exit, quit, SystemExit), ``click exit``
    (raising click's Exit or Abort); ``called``: ``node`` is the function of a call."""
    if isinstance(node, ast.Name) and node.id in ("print", "exit", "quit") and isinstance(node.ctx, ast.Load):
        return ("voice" if node.id == "print" else "exit", node.id if called else f"{node.id} as a value")
    if isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        if dotted in ("builtins.print", "click.echo", "click.secho", "click.utils.echo") \
                or dotted.startswith(("sys.stdout.write", "sys.stderr.write")):
            return "voice", dotted
        if dotted in ("sys.exit", "os._exit", "os.abort", "builtins.exit"):
            return "exit", dotted
    if isinstance(node, ast.ImportFrom) and (names := IMPORTS.get(node.module or "", set())
                                             & {a.name for a in node.names}):
        return ("voice" if names & {"print", "echo", "secho", "stdout", "stderr"} else "exit",
                f"from {node.module} import {', '.join(sorted(names))}")
    if isinstance(node, ast.Raise) and node.exc is not None:
        raised = _dotted(node.exc.func if isinstance(node.exc, ast.Call) else node.exc)
        if raised == "SystemExit":
            return "exit", raised
        if raised in ("click.Abort", "click.exceptions.Exit", "click.exceptions.Abort"):
            return "click exit", raised
    return None


def test_library_code_never_prints_and_only_main_exits() -> None:
    assert refused() == [], ("print outside the command line: hand the caller's reporter method instead; an exit "
                             "outside cli/main.py: return the exit code to main instead")
    assert all((PKG / rel).is_file() for rel in PROGRAMS) and all((PKG / rel).is_file() for rel in EXIT)


REFUSED = ["print(1)", "log = print", "def a(log=print): pass", "f(print)", "import builtins\nbuiltins.print(1)",
           "import sys\nsys.stdout.write('x')", "import sys\nsys.stderr.write('x')", "import sys\nw = sys.stderr.write",
           "import click\nclick.echo('x')", "import click\nclick.secho('x')", "from click import echo",
           "from sys import exit as leave\nleave(3)", "from sys import stderr", "import sys\nsys.exit(2)",
           "import os\nos.abort()", "import os\nos._exit(1)", "from os import _exit", "exit(1)", "quit()",
           "raise SystemExit(3)", "import click\nraise click.exceptions.Exit(2)", "import click\nraise click.Abort()",
           "from click.exceptions import Exit"]


@pytest.mark.parametrize("code", REFUSED)
def test_the_guard_refuses_each_way_library_code_prints_or_exits(tmp_path: Path, code: str) -> None:
    (tmp_path / "gather").mkdir()
    (tmp_path / "gather" / "frob.py").write_text(f"x = 1\n{code}\n")
    found = refused(tmp_path)
    assert len(found) == 1 and found[0].startswith("gather/frob.py:"), found


@pytest.mark.parametrize(("rel", "code"), [
    ("gather/frob.py", "import sys\nsys.stdout.flush()\nsys.stderr.flush()"),
    ("gather/frob.py", "console.print(5)\nreporter.note('x')\nlog.write('x')\nprint_stats = 1"),
    ("gather/frob.py", "if __name__ == '__main__':\n    print(4)\n    raise SystemExit(1)"),
    ("report/console.py", "import sys, click\nprint(1)\nsys.stdout.write('x')\nclick.echo(p=print)"),
    ("cli/llvm.py", "import click\nclick.echo('x')\nraise click.exceptions.Exit(2)"),
    ("cli/main.py", "import sys\nsys.exit(1)")])
def test_the_guard_lets_the_command_line_speak_and_main_exit(tmp_path: Path, rel: str, code: str) -> None:
    (tmp_path / rel).parent.mkdir()
    (tmp_path / rel).write_text(code)
    assert refused(tmp_path) == []


CALLBACKS = ("log", "say", "warn", "note", "on_start", "reporter")  # where a function's messages go


def defaulted_callbacks(code: str, rel: str) -> list[str]:
    """``rel:line name`` for each parameter named in ``CALLBACKS`` that takes a callable or a reporter (annotated
    so, or not annotated) and has a default: a caller that forgets it would lose what the function says."""
    found = []
    for f in ast.walk(ast.parse(code, rel)):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pos = [*f.args.posonlyargs, *f.args.args]
            given = [*pos[len(pos) - len(f.args.defaults):],
                     *(a for a, d in zip(f.args.kwonlyargs, f.args.kw_defaults, strict=True) if d is not None)]
            found += [f"{rel}:{f.lineno} {a.arg}" for a in given if a.arg in CALLBACKS and (
                a.annotation is None or any(t in ast.unparse(a.annotation) for t in ("Callable", "Reporter")))]
    return found


def test_no_callback_for_messages_has_a_default() -> None:
    found = [hit for path in sorted(PKG.rglob("*.py")) if not (rel := path.relative_to(PKG).as_posix()).startswith(SKIP)
             for hit in defaulted_callbacks(path.read_text(), rel)]
    assert found == [], "hand the caller's reporter method (or reporter.silent, said where it is chosen) instead"


@pytest.mark.parametrize("code", ["def f(log=print): pass", "def f(*, say: Callable[[str], None] = silent): pass",
                                  "def f(x, reporter: Reporter | None = None): pass", "g = lambda warn=None: 1",
                                  "def f(a, on_start=lambda m: None, *, note=None): pass"])
def test_the_callback_check_finds_a_default(code: str) -> None:
    assert len(defaulted_callbacks(code, "m.py")) == (2 if "note" in code else 1)


@pytest.mark.parametrize("code", ["def f(*, say: Callable[[str], None], reporter: Reporter): pass",
                                  "def f(log: str | None = None, note: str = ''): pass", "def f(progress=None): pass"])
def test_the_callback_check_leaves_required_callbacks_and_plain_values(code: str) -> None:
    assert defaulted_callbacks(code, "m.py") == []


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


def test_a_request_names_where_its_warnings_go_and_silence_is_named(capfd: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="warn"):
        Request({}, {}, tmp_path)  # type: ignore[call-arg]  # no default that drops the plan's warnings
    request = Request({}, {}, tmp_path, warn=silent)
    request.warn("not shown")
    assert capfd.readouterr() == ("", "")
    assert request == Request({}, {}, tmp_path, warn=print)  # the channel is not part of what was asked
