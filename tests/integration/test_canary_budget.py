"""The canary's time budget (#36), with real compilers: ``compile_units`` on tiny files (no unit starts once the
budget has passed, the first ``jobs`` always do, a budget not reached changes nothing, each unit's end is timed),
then through the CLI on the example tree (the ``old_override`` generation: one unit, lib/Core.cpp, does not compile
against LLVM 22): check-llvm's whole cover by default, a tiny budget's one unit, the first error's time, the plan's
budget, and a build that goes on when the budget stopped a canary that found nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import one_of
from tritonbuild import example
from tritonbuild.execute import canary as ex
from tritonbuild.resolve.canary import Unit

from .conftest import LLVM, flat, run_cli

ARGS = ("--llvm", str(LLVM), "--backends", "nvidia", "--no-proton", "--offline")
CAUSE = "triton::FoldCorePattern::match() const' marked 'override', but does not override"
TINY = "0.000001"  # the smallest budget worth writing: 0 is no budget
PATH = {"PATH": "/usr/bin:/bin"}
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def _units(tmp_path: Path, texts: dict[str, str]) -> list[Unit]:
    out = []
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
        out.append(Unit(str(tmp_path / name), str(tmp_path), ("g++", "-c", str(tmp_path / name), "-o", "x.o"), None))
    return out


SLOW = "#include <map>\n#include <regex>\nstd::map<int, std::regex> m;\n"  # a few tenths of a second to parse
BAD = "int f() { return undeclared_name; }\n"


@needs_gxx
def test_a_tiny_budget_compiles_only_the_units_started_at_once(tmp_path: Path) -> None:
    units = _units(tmp_path, {"a.cpp": SLOW, "b.cpp": SLOW, "c.cpp": BAD, "d.cpp": SLOW})
    one = ex.compile_units(units, PATH, 1, 60, budget=1e-9)
    assert one[0] is not None and one[0].returncode == 0 and one[1:] == [None, None, None]
    two = ex.compile_units(units, PATH, 2, 60, budget=1e-9)
    assert [o is not None for o in two] == [True, True, False, False]
    assert not list(tmp_path.glob("*.o"))  # syntax only


@needs_gxx
def test_time_spent_before_the_compiles_counts_against_the_budget(tmp_path: Path) -> None:
    """Generating the headers comes first in a new build dir (minutes on a real tree): the budget runs from the
    canary's start, so a budget already spent starts only the first units, and their ends count what was spent."""
    units = _units(tmp_path, {"a.cpp": SLOW, "b.cpp": SLOW, "c.cpp": BAD})
    spent = ex.compile_units(units, PATH, 1, 60, budget=100.0, spent=100.0)
    assert spent[0] is not None and spent[1:] == [None, None] and spent[0].ended >= 100.0
    left = ex.compile_units(units, PATH, 1, 60, budget=3600.0, spent=100.0)
    assert all(o is not None for o in left) and all(o.ended >= 100.0 for o in left if o)


@needs_gxx
def test_a_budget_not_reached_changes_nothing_and_each_end_is_timed(tmp_path: Path) -> None:
    units = _units(tmp_path, {"a.cpp": SLOW, "c.cpp": BAD, "d.cpp": "int g();\n"})
    for budget in (None, 3600.0):
        outs = [o for o in ex.compile_units(units, PATH, 1, 60, budget=budget) if o is not None]
        assert len(outs) == 3
        assert [o.returncode == 0 for o in outs] == [True, False, True]
        assert 0 < outs[0].ended <= outs[1].ended <= outs[2].ended  # one job: in order, each after the one before
        assert "undeclared_name" in outs[1].output


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("budget")
    return {"base": base, "broken": example.write_tree(base / "broken" / "triton", old_override=True),
            "plain": example.write_tree(base / "plain" / "triton")}


def _cli(trees: dict[str, Path], command: str, tree: str, *extra: str, cache: str = "cache",
         env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = trees["base"]
    proc = run_cli(command, "--source", str(trees[tree]), *ARGS, "--cache-dir", str(base / cache), *extra,
                   cwd=base, env=env, check=False)
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout, flat(proc.stdout + proc.stderr)


def _json(trees: dict[str, Path], tree: str, *extra: str, env: dict[str, str] | None = None) -> tuple[int, Any]:
    rc, stdout, out = _cli(trees, "check-llvm", tree, "--json", "-j", "1", *extra, env=env)
    assert rc in (0, 1), out
    return rc, json.loads(stdout)


def test_check_llvm_compiles_the_whole_cover_without_a_budget_flag(trees: dict[str, Path]) -> None:
    rc, r = _json(trees, "broken")
    assert rc == 1 and r["budget_seconds"] is None and r["skipped"] == []
    assert r["compiled"] == r["chosen"] and len(r["chosen"]) >= 2
    assert r["headers_covered"] == r["headers_chosen"] > 0
    # the first error's time: from the canary's start (after configure) to the end of the failing unit, after the
    # generated headers and the choice, within the canary's time
    assert r["failed"] == [str(trees["broken"] / example.OLD_OVERRIDE_USER)]
    assert isinstance(r["first_error_seconds"], float)
    assert 0 <= r["prepare_seconds"] < r["first_error_seconds"] <= r["seconds"]
    rc, _, out = _cli(trees, "check-llvm", "broken")
    assert rc == 1 and "no budget, covering" in out and "first error after " in out
    assert "not compiled within the budget" not in out


def test_a_tiny_check_llvm_budget_compiles_only_the_units_started_at_once(trees: dict[str, Path]) -> None:
    """Two jobs: two units start at once, the bindings' LLVM glue (always first) and the unit of the widest
    headers; the rest are skipped."""
    _, whole = _json(trees, "broken")
    assert whole["chosen"][0].endswith("python/src/llvm.cc")
    rc, r = _json(trees, "broken", "-j", "2", "--canary-budget", TINY)
    assert r["budget_seconds"] == float(TINY) and r["chosen"] == whole["chosen"]
    assert r["compiled"] == whole["chosen"][:2] and r["skipped"] == whole["chosen"][2:]
    assert r["headers_covered"] < r["headers_chosen"] == whole["headers_chosen"]
    # the greedy order puts the widest headers first after the glue: here that unit holds the cause, found
    assert rc == 1 and [c["cause"] for c in r["causes"]] == [c["cause"] for c in whole["causes"]]
    assert r["first_error_seconds"] is not None
    rc, _, out = _cli(trees, "check-llvm", "broken", "-j", "2", "--canary-budget", TINY)
    skipped = len(whole["chosen"]) - 2
    assert rc == 1 and f"canary compile: 2 of {len(whole['chosen'])} chosen units" in out
    assert f"budget {float(TINY):g} s" in out and out.count(CAUSE) == 1
    assert f"{skipped} unit(s) not compiled within the budget (the full build compiles them)" in out
    assert "in 1 of 2 units compiled" in out
    # one job: only the glue, which compiles here: no error found, and the summary says what was left out
    rc, one = _json(trees, "broken", "--canary-budget", TINY)
    assert rc == 0 and one["compiled"] == whole["chosen"][:1] and one["skipped"] == whole["chosen"][1:]
    # the environment gives it too (check-llvm's default is none, not the user's)
    rc, by_env = _json(trees, "broken", "-j", "2", env={"TRITONBUILD_CANARY_BUDGET": TINY})
    assert by_env["compiled"] == r["compiled"] and by_env["skipped"] == r["skipped"]


def test_a_budget_not_reached_changes_nothing(trees: dict[str, Path]) -> None:
    _, whole = _json(trees, "broken")
    rc, r = _json(trees, "broken", "--canary-budget", "3600")
    assert rc == 1 and r["budget_seconds"] == 3600.0 and r["skipped"] == []
    assert r["compiled"] == r["chosen"] == whole["chosen"] and r["failed"] == whole["failed"]
    assert r["causes"] == whole["causes"] and r["headers_covered"] == whole["headers_covered"]


def test_no_first_error_when_everything_compiles(trees: dict[str, Path]) -> None:
    rc, r = _json(trees, "plain")
    assert rc == 0 and r["ok"] is True and r["first_error_seconds"] is None and r["compiled"] == r["chosen"]


def test_the_plan_gives_build_a_budget_and_says_where_it_came_from(trees: dict[str, Path]) -> None:
    rc, stdout, _ = _cli(trees, "plan", "plain", "--json")
    canary = one_of(stdout, "plans")["canary"]
    assert rc == 0 and canary["budget"] == 120.0 and canary["budget_why"] == "canary_budget 120 (default)"
    rc, stdout, _ = _cli(trees, "plan", "plain", "--json", "--canary-budget", "0")
    assert rc == 0 and one_of(stdout, "plans")["canary"]["budget"] is None
    for bad in ("-1", "86401", "nan", "soon"):
        rc, _, out = _cli(trees, "plan", "plain", "--canary-budget", bad)
        assert rc == 2 and ("The setting canary_budget = " in out or "'--canary-budget'" in out), out


def test_a_build_goes_on_when_the_budget_stopped_a_canary_that_found_nothing(trees: dict[str, Path]) -> None:
    """The plain tree with one job and a tiny budget: one unit compiled, the rest skipped, no error: the full build
    runs and makes the wheel (it compiles what the canary skipped)."""
    dist = trees["base"] / "dist-plain"
    rc, _, out = _cli(trees, "build", "plain", "--no-smoke-test", "-j", "1", "--canary-budget", TINY, "--out",
                      str(dist), cache="cache-build")
    assert rc == 0, out
    assert f"budget {float(TINY):g} s" in out and "not compiled within the budget" in out
    assert "no errors in the units compiled" in out
    assert list(dist.glob("*.whl"))
