"""A passing canary is not run again while nothing it judged changed (#45): the same build dir, the same LLVM, and
every unit it compiled and header it covered as they were (size and mtime); a failing one leaves no record."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from tests.helpers import plan_for
from tritonbuild.execute import canary
from tritonbuild.plan import Plan


def _result(build: Path, judged: tuple[str, ...], failed: tuple[str, ...] = ()) -> canary.CanaryResult:
    return canary.CanaryResult(str(build), 3, judged[:1], 1, (), failed, (), 1.0, 0.5, str(build / "canary.log"),
                               judged=judged)


def _setup(tree, tmp_path: Path) -> tuple[Plan, tuple[str, ...]]:  # type: ignore[no-untyped-def]
    plan = plan_for(tree())
    build = tmp_path / "build" / plan.key
    build.mkdir(parents=True)
    plan = replace(plan, cmake=replace(plan.cmake, build_dir=str(build)))
    unit, header = tmp_path / "src" / "a.cpp", tmp_path / "src" / "a.h"
    unit.parent.mkdir()
    unit.write_text("#include \"a.h\"\n")
    header.write_text("int a;\n")
    return plan, (str(unit), str(header))


def test_a_passing_canary_is_skipped_until_a_file_it_judged_changes(tree, tmp_path: Path) -> None:
    plan, judged = _setup(tree, tmp_path)
    assert canary.passed_before(plan) is None  # never ran here
    canary.remember(plan, _result(Path(plan.cmake.build_dir), judged))
    said = canary.passed_before(plan)
    assert said and said.startswith("canary compile skipped:") and "2 files" in said and "\n" not in said
    header = Path(judged[1])
    st = header.stat()
    header.write_text("int b;\n")  # the same size: the mtime tells
    os.utime(header, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert canary.passed_before(plan) is None
    canary.remember(plan, _result(Path(plan.cmake.build_dir), judged))
    assert canary.passed_before(plan)
    Path(judged[0]).unlink()  # a unit gone: run it
    assert canary.passed_before(plan) is None


def test_another_llvm_or_build_dir_or_a_failure_runs_it_again(tree, tmp_path: Path) -> None:
    plan, judged = _setup(tree, tmp_path)
    canary.remember(plan, _result(Path(plan.cmake.build_dir), judged))
    assert canary.passed_before(plan)
    assert canary.passed_before(replace(plan, llvm=replace(plan.llvm, version="23.0.0"))) is None
    assert canary.passed_before(replace(plan, key="0" * 16)) is None
    canary.remember(plan, _result(Path(plan.cmake.build_dir), judged, failed=(judged[0],)))
    assert canary.passed_before(plan) is None and not (Path(plan.cmake.build_dir) / canary.PASSED).exists()
    (Path(plan.cmake.build_dir) / canary.PASSED).write_text("{not json")  # a damaged record: run it
    assert canary.passed_before(plan) is None
