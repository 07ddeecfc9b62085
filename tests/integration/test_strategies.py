"""Which strategy a build takes, and its reason code, from a real build dir's state (a kept wheel, a configured
CMake cache, Ninja's dry run): republish, quick or full, each with why."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import plan_for
from tritonbuild import example
from tritonbuild.execute import republish
from tritonbuild.execute.staging import cmake_build_dir
from tritonbuild.execute.strategies import REASONS, Full, Quick, Reason, Republish, choose, why
from tritonbuild.resolve.source import GitState

NINJA = shutil.which("ninja")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return example.write_tree(tmp_path / "src" / "triton")


def _kept_wheel(plan) -> Path:  # type: ignore[no-untyped-def]
    """A wheel a previous build of ``plan`` made, remembered as the build dir's last one."""
    out = Path(plan.cmake.build_dir) / "out"
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / "triton-3.6.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"not read by the choice")
    republish.remember(plan, wheel, {"sha256": "ab" * 32})
    return wheel


def _configure(plan, ninja: str = "/usr/bin/ninja") -> None:  # type: ignore[no-untyped-def]
    """What CMake's configure leaves for a quick rebuild: the ninja and cmake it used, in CMakeCache.txt."""
    build = cmake_build_dir(plan)
    build.mkdir(parents=True, exist_ok=True)
    (build / "CMakeCache.txt").write_text(f"CMAKE_MAKE_PROGRAM:FILEPATH={ninja}\n"
                                          "CMAKE_COMMAND:INTERNAL=/usr/bin/cmake\n")


def test_a_first_build_is_full_because_no_wheel_of_this_plan_was_built(tree: Path) -> None:
    plan = plan_for(tree)
    chosen = choose(plan, {})
    assert isinstance(chosen, Full) and (chosen.name, chosen.reason) == ("full", Reason.NO_LAST_WHEEL)


def test_a_repaired_or_reproducible_wheel_is_always_full_even_with_a_last_wheel(tree: Path) -> None:
    for cli, env in (({"repair": True}, {}), ({"reproducible": True}, {"SOURCE_DATE_EPOCH": "1700000000"})):
        plan = plan_for(tree, cli, env)
        _kept_wheel(plan)
        _configure(plan)
        chosen = choose(plan, {})
        assert (chosen.name, chosen.reason) == ("full", Reason.FULL_PACKAGING), cli


def test_a_last_wheel_in_a_build_dir_never_configured_is_full(tree: Path) -> None:
    plan = plan_for(tree)
    _kept_wheel(plan)
    chosen = choose(plan, {})
    assert (chosen.name, chosen.reason) == ("full", Reason.NOT_CONFIGURED)


def test_the_same_plan_in_a_configured_build_dir_is_quick_with_ninja_then_the_install(tree: Path) -> None:
    plan = plan_for(tree)
    kept = _kept_wheel(plan)
    _configure(plan)
    chosen = choose(plan, {})
    assert isinstance(chosen, Quick) and (chosen.name, chosen.reason) == ("quick", Reason.SAME_PLAN)
    assert chosen.base.read_bytes() == kept.read_bytes()  # the kept copy is the base it reuses members from
    assert [s[0] for s in chosen.steps] == ["/usr/bin/ninja", "/usr/bin/cmake"]
    assert chosen.steps[1][1:3] == ("--install", str(cmake_build_dir(plan)))


def test_another_output_dir_is_the_same_plan_for_the_kept_wheel(tree: Path, tmp_path: Path) -> None:
    # #45: a build to another --out took the full path (configure, scikit-build-core's packaging) for a wheel that
    # differs in no byte; it is quick (republished when nothing changed) into the new dir
    plan = plan_for(tree)
    _kept_wheel(plan)
    _configure(plan)
    elsewhere = replace(plan, wheel=replace(plan.wheel, out_dir=str(tmp_path / "elsewhere")))
    assert elsewhere.wheel.out_dir != plan.wheel.out_dir and elsewhere.cmake.build_dir == plan.cmake.build_dir
    assert choose(elsewhere, {}).reason == Reason.SAME_PLAN
    assert republish.digest(elsewhere) == republish.digest(plan)


def test_another_plan_does_not_reuse_the_last_wheel(tree: Path) -> None:
    plan = plan_for(tree)
    _kept_wheel(plan)
    _configure(plan)
    other = plan_for(tree, {"zip_level": 1})  # another plan, same build dir (the zip level is no key part)
    assert other.cmake.build_dir == plan.cmake.build_dir and other.to_json() != plan.to_json()
    assert (choose(other, {}).reason) == Reason.NO_LAST_WHEEL


@pytest.mark.skipif(NINJA is None, reason="needs ninja")
def test_nothing_changed_and_ninja_idle_republishes(tree: Path) -> None:
    plan = plan_for(tree)
    assert NINJA is not None
    _configure(plan, NINJA)
    build = cmake_build_dir(plan)
    (build / "build.ninja").write_text("".join(f"build {t}: phony\n" for t in plan.cmake.build_targets))
    kept = _kept_wheel(plan)
    chosen = choose(plan, {"PATH": "/usr/bin:/bin"})
    assert isinstance(chosen, Republish) and (chosen.name, chosen.reason) == ("republish", Reason.NOTHING_CHANGED)
    assert chosen.record == {"sha256": "ab" * 32} and chosen.kept.read_bytes() == kept.read_bytes()
    (build / "build.ninja").write_text("rule cc\n  command = true\n" + "".join(
        f"build {t}: cc {build / 'missing.c'}\n" for t in plan.cmake.build_targets))
    assert choose(plan, {"PATH": "/usr/bin:/bin"}).reason == Reason.SAME_PLAN  # ninja has work: not republished


def test_every_reason_has_its_words_and_a_strategy_says_them() -> None:
    assert set(REASONS) == set(Reason)
    assert why(Full(Reason.NOT_CONFIGURED)) == "strategy full: the build dir was never configured"


def test_the_first_edit_after_a_commit_is_quick_not_a_new_plan(tree: Path) -> None:
    # the review of issue 45: the checkout's dirty flag is in the plan, so the first edit after each commit made a
    # plan the last wheel was not built from, and took the full path (configure, re-zip of every member)
    commit = "0123456789abcdef0123456789abcdef01234567"
    clean = plan_for(tree, git=GitState(commit, False, "main", 1769723034))
    _kept_wheel(clean)
    _configure(clean)
    dirty = plan_for(tree, git=GitState(commit, True, "main", 1769723034))
    assert (clean.source.dirty, dirty.source.dirty) == (False, True)
    assert dirty.cmake.build_dir == clean.cmake.build_dir
    chosen = choose(dirty, {})
    assert isinstance(chosen, Quick) and chosen.reason == Reason.SAME_PLAN
    assert republish.digest(dirty) != republish.digest(clean)  # its wheel says dirty: never the old one again
    other = plan_for(tree, git=GitState("1" * 40, True, "main", 1769723034))  # another commit is another plan
    assert choose(other, {}).reason == Reason.NO_LAST_WHEEL
