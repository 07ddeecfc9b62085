"""``BuildRun``: one build's rounds (real commands through ``proc.run_logged``), what it learns between them, and
the one place a ``BuildResult`` is made, written next to the wheel and remembered (or not) for republishing."""

from __future__ import annotations

import ast
import io
import json
import re
import sys
import threading
from pathlib import Path

import pytest

from tests.helpers import PlainReporter, make_wheel, plan_for
from tritonbuild import example
from tritonbuild.errors import BuildFailed
from tritonbuild.execute import republish
from tritonbuild.execute.buildrun import BuildRun, Installed, WheelFacts
from tritonbuild.wheel.checks.base import Finding

PKG = Path(__file__).resolve().parents[2] / "tritonbuild"
NAME = "triton-3.6.0-cp311-cp311-linux_x86_64.whl"
UNITY_FAIL = "FAILED: [code=1] lib/A/CMakeFiles/TritonAlpha.dir/Unity/unity_0_cxx.cxx.o"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return example.write_tree(tmp_path / "src" / "triton")


def _run(plan, out: io.StringIO) -> BuildRun:  # type: ignore[no-untyped-def]
    run = BuildRun(plan, PlainReporter(out), {"PATH": "/usr/bin:/bin"})
    run.root.mkdir(parents=True, exist_ok=True)
    run.stage = run.root
    return run


def _py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_build_result_is_made_in_one_place() -> None:
    made = []
    for path in sorted(PKG.rglob("*.py")):
        if path.relative_to(PKG).as_posix().startswith("example/"):
            continue  # templates and the example tree: not tritonbuild's code
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "BuildResult":
                made.append(path.relative_to(PKG).as_posix())
    assert made == ["execute/buildrun.py"]


def test_the_result_is_the_runs_and_a_made_wheel_is_remembered_a_reused_one_not(tree: Path) -> None:
    plan = plan_for(tree)
    out = io.StringIO()
    run = _run(plan, out)
    run.timings, run.learned = {"compile": 1.5}, ["TritonAlpha"]
    wheel = Path(plan.wheel.out_dir) / "triton-3.6.0-cp311-cp311-linux_x86_64.whl"
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"wheel bytes")
    facts = WheelFacts("cd" * 32, targets={"triton": None}, compile_check={"enabled": False, "why": "x"})
    result = run.result(wheel, facts, strategy="quick", reason="same-plan", reused=False)
    assert (result.strategy, result.reason, result.republished, result.sha256) == ("quick", "same-plan", False,
                                                                                    "cd" * 32)
    assert result.timings == {"compile": 1.5} and result.unity_learned == ("TritonAlpha",)
    manifest = json.loads(wheel.with_name(wheel.name.removesuffix(".whl") + ".manifest.json").read_text())
    assert manifest["strategy"] == "quick" and manifest["sha256"] == "cd" * 32
    state = Path(plan.cmake.build_dir) / republish.STATE
    assert json.loads(state.read_text())["record"] == facts.record()
    before = state.read_text()
    again = _run(plan, io.StringIO()).result(wheel, facts, strategy="republish", reason="nothing-changed",
                                             reused=True, seconds=0.25)
    assert (again.republished, again.ninja_no_work, again.seconds, again.time_report) == (True, True, 0.25, {})
    assert state.read_text() == before  # published again: not remembered anew


def test_a_round_runs_each_step_into_the_log_and_times_its_phases(tree: Path) -> None:
    run = _run(plan_for(tree), io.StringIO())
    with run.opened_log():
        run.compile([_py("print('ninja: Entering directory `/b/cmake`')"), _py("print('[1/1] Linking x')")])
    log = run.log_path.read_text()
    assert log.startswith("tritonbuild ") and "[1/1] Linking x" in log
    assert run.compiled and len(run.marks) == 1 and run.learned == [] and "link" in run.timings


def test_a_failed_step_is_a_build_failure_naming_the_phase_and_the_log(tree: Path) -> None:
    run = _run(plan_for(tree), io.StringIO())
    with run.opened_log(), pytest.raises(BuildFailed) as failed:
        run.compile([_py("print('[1/2] Building CXX object a.o'); print('a.cpp:1:1: error: boom'); exit(3)"),
                     _py("print('never')")])
    assert str(failed.value).startswith("The build failed (exit code 3) in compile.")
    assert failed.value.log_path == str(run.log_path) and "never" not in run.log_path.read_text()


def test_a_unity_clash_is_learned_and_the_next_round_builds_it_file_by_file(tree: Path) -> None:
    plan = plan_for(tree, {"unity_build": 8})
    out = io.StringIO()
    run = _run(plan, out)
    flag = run.root / "failed-once"
    step = _py(f"import pathlib, sys\np = pathlib.Path({str(flag)!r})\n"
               f"if not p.exists():\n    p.touch(); print({UNITY_FAIL!r}); sys.exit(1)\nprint('[1/1] Linking x')")
    with run.opened_log():
        run.compile([step])
    assert run.learned == ["TritonAlpha"] and len(run.marks) == 2
    assert "unity builds: TritonAlpha failed to compile joined" in out.getvalue()
    assert "TritonAlpha" in (run.root / "unity-learned.txt").read_text()


def _quick_run(tree: Path, monkeypatch: pytest.MonkeyPatch, verdict: list[Finding]) -> tuple[BuildRun, list[str]]:
    """A run whose install ``settle``s, whose ``code_checks`` (stand-in: ``verdict``) and packaging say when they
    start and end; packaging waits for the code checks to have started (a second at most)."""
    from tritonbuild.wheel import acceptance

    run, events = _run(plan_for(tree), io.StringIO()), []
    started = threading.Event()

    def code_checks(*args: object) -> list[Finding]:
        events.append("code checks start")
        started.set()
        return verdict

    def package(log: object) -> dict[str, float]:
        events.append("package start" + ("" if started.wait(1.0) else ": no code check running"))
        make_wheel(run.tmp_wheels / NAME, {"triton/__init__.py": b""})
        events.append("package end")
        return {}

    monkeypatch.setattr(acceptance, "code_checks", code_checks)
    monkeypatch.setattr(run, "compile", lambda steps: events.append("compiled"))
    run.smoke, run.package = True, package  # type: ignore[attr-defined]
    return run, events


def test_a_quick_rebuilds_code_checks_run_from_the_settled_prefix_while_the_wheel_is_written(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The import and compile checks of a quick rebuild read the install prefix, not the wheel: they start once the
    prefix is settled (the stale files copied again), before packaging ends, and their findings join the wheel's
    checks in the registry's order."""
    run, events = _quick_run(tree, monkeypatch, [Finding("import", "ok", "imports"), Finding("compile", "ok", "ok")])
    installed = Installed(run.root / "prefix", run.root / "last.whl", lambda log: events.append("settled"))
    final, _ = run.make_wheel("why", lambda log: [], run.package, installed)  # type: ignore[attr-defined]
    assert events == ["compiled", "settled", "code checks start", "package start", "package end"], events
    checks = re.findall(r"^tritonbuild check (\S+): (\w+)", run.log_path.read_text(), re.MULTILINE)
    assert checks == [("RECORD", "ok"), ("libraries", "ok"), ("import", "ok"), ("compile", "ok")], checks
    assert final.is_file() and final.parent == Path(run.plan.wheel.out_dir)


def test_a_quick_rebuilds_failed_code_check_keeps_the_wheel_out(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, events = _quick_run(tree, monkeypatch, [Finding("import", "fail", "x", message="The import failed.")])
    installed = Installed(run.root / "prefix", run.root / "last.whl", lambda log: None)
    with pytest.raises(BuildFailed, match=r"^The import failed\.$"):
        run.make_wheel("why", lambda log: [], run.package, installed)  # type: ignore[attr-defined]
    assert events[-2:] == ["package start", "package end"], events  # the wheel was written, then refused
    out = Path(run.plan.wheel.out_dir)
    assert not out.exists() or not list(out.glob("*.whl"))
