from __future__ import annotations

from pathlib import Path

from tests.helpers import plan_for
from tritonbuild.execute import unity
from tritonbuild.resolve.toolchain import ninja_args

# What ninja printed for real d8da7c998 unity units (1.11 without, 1.12+ with the exit code)
FAILED = [
    "FAILED: lib/Dialect/TritonGPU/IR/CMakeFiles/TritonGPUIR.dir/Unity/unity_0_cxx.cxx.o ",
    "FAILED: [code=1] third_party/proton/csrc/CMakeFiles/ProtonProfiler.dir/Unity/unity_1_cxx.cxx.o ",
    "FAILED: lib/Dialect/TritonGPU/IR/CMakeFiles/TritonGPUIR.dir/Unity/unity_2_cxx.cxx.o ",
    "FAILED: lib/Analysis/CMakeFiles/TritonAnalysis.dir/Allocation.cpp.o ",  # not joined: a real error
    "lib/X/CMakeFiles/Quoted.dir/Unity/unity_0_cxx.cxx.o: error: mentioned, not FAILED",
]


def test_failed_unity_units_name_their_targets_once() -> None:
    assert unity.failed_targets(FAILED) == ("ProtonProfiler", "TritonGPUIR")
    assert unity.failed_targets(FAILED[3:]) == ()


def test_a_failed_round_is_learned_once_and_seeds_another_build_dir_of_the_tree(tree) -> None:
    root = tree()
    plan = plan_for(root, {"unity_build": 4, "unity_exclude": ("TritonGPUIR",)})
    here = Path(plan.cmake.build_dir) / unity.LEARNED
    assert unity.seed(plan) == () and here.read_text().startswith("#")  # exists: CMake depends on it
    assert unity.learn(plan, FAILED) == ("ProtonProfiler",)  # TritonGPUIR was excluded by hand already
    assert unity.learn(plan, FAILED) == ()  # nothing new: the failure is the user's
    assert unity.parse(here.read_text()) == ("ProtonProfiler",)
    other = plan_for(root, {"unity_build": 8, "cmake_args": ("-DX=1",)})  # another build dir, the same tree
    assert other.cmake.build_dir != plan.cmake.build_dir
    assert unity.seed(other) == ("ProtonProfiler",)
    assert unity.parse((Path(other.cmake.build_dir) / unity.LEARNED).read_text()) == ("ProtonProfiler",)


def test_without_unity_nothing_is_learned_and_ninja_stops_at_the_first_failure(tree) -> None:
    root = tree()
    off = plan_for(root, {"jobs": 3})
    assert unity.seed(off) == () and unity.learn(off, FAILED) == ()
    assert not (Path(off.cmake.build_dir) / unity.LEARNED).exists()
    assert ninja_args(off.toolchain) == ("-j3",)
    on = plan_for(root, {"jobs": 3, "unity_build": 8})
    assert ninja_args(on.toolchain) == ("-j3", "-k", "0")
    assert any(c.endswith("-- -j3 -k 0") for c in on.commands)  # what plan prints is what build runs
