"""Trees whose configure downloads NVIDIA's parts into the source tree (mid-2026 upstream's build_helpers.py
download_and_copy_dependencies) get what the plan provides, and TRITON_OFFLINE_BUILD for the rest."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tritonbuild.plan import NvidiaPart
from tritonbuild.resolve.nvidia import Resolution, configure_paths
from tritonbuild.resolve.source import parse_configure_nvidia_paths

# the shape of 23ca0e48a2's top-level CMakeLists.txt, in short
UPSTREAM = """project(triton CXX C)
option(TRITON_OFFLINE_BUILD "Build without downloading dependencies" OFF)
set(TRITON_CACHE_PATH "" CACHE PATH "Path to triton cache")
set(TRITON_PTXAS_PATH "" CACHE FILEPATH "Path override for ptxas")
set(TRITON_PTXAS_BLACKWELL_PATH "" CACHE FILEPATH "Path override for ptxas-blackwell")
set(TRITON_CUOBJDUMP_PATH "" CACHE FILEPATH "Path override for cuobjdump")
set(TRITON_NVDISASM_PATH "" CACHE FILEPATH "Path override for nvdisasm")
set(TRITON_CUDACRT_PATH "" CACHE PATH "Path to CUDA CRT headers.")
set(TRITON_CUDART_PATH "" CACHE PATH "Path to CUDA Runtime headers")
set(TRITON_CUPTI_INCLUDE_PATH "" CACHE PATH "Path to CUPTI headers")
set(TRITON_CUPTI_LIB_PATH "" CACHE PATH "Path to CUPTI libraries")
if(TRITON_BUILD_PYTHON_MODULE)
  execute_process(COMMAND ${Python3_EXECUTABLE} python/build_helpers.py download_and_copy_dependencies)
endif()
"""
VARS = parse_configure_nvidia_paths(UPSTREAM)
BASE = {"LLVM_SYSPATH": "/usr/lib/llvm-22", "JSON_SYSPATH": "/usr"}


def _part(name: str, dest: str) -> NvidiaPart:
    return NvidiaPart(name=name, dest=dest, dirs=("/usr/local/cuda/include",), found_by="CUDA toolkit", why="")


def test_the_variables_are_read_only_from_a_tree_that_downloads_at_configure() -> None:
    assert VARS == ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH",
                    "TRITON_NVDISASM_PATH", "TRITON_CUDACRT_PATH", "TRITON_CUDART_PATH", "TRITON_CUPTI_INCLUDE_PATH",
                    "TRITON_CUPTI_LIB_PATH")
    assert parse_configure_nvidia_paths(UPSTREAM.replace("download_and_copy_dependencies", "other")) == ()
    commented = UPSTREAM.replace("  execute_process(COMMAND", "  # execute_process(COMMAND")
    assert parse_configure_nvidia_paths(commented) == ()
    assert configure_paths((), Resolution(parts=(_part("cuda-headers", "include"),)), BASE) == ({}, [], [])


def test_staged_parts_and_bundled_tools_are_given_and_the_rest_is_not_downloaded() -> None:
    parts = (_part("cuda-headers", "include"), _part("cupti-headers", "include"), _part("cupti-libs", "lib/cupti"))
    defines = {**BASE, "TRITON_PTXAS_PATH": "/cuda/bin/ptxas"}
    tools = (("ptxas", "/cuda/bin/ptxas", "CUDA toolkit"), ("cuobjdump", "/c/cuobjdump", "PyPI x"),
             ("nvdisasm", "/c/nvdisasm", "PyPI y"))
    d, notes, warnings = configure_paths(VARS, Resolution(parts=parts, tools=tools), defines)
    assert d["TRITONBUILD_NVIDIA_PATHS"].split(";") == [
        "TRITON_CUDACRT_PATH=include", "TRITON_CUDART_PATH=include", "TRITON_CUPTI_INCLUDE_PATH=include",
        "TRITON_CUPTI_LIB_PATH=lib/cupti"]
    assert (d["TRITON_CUOBJDUMP_PATH"], d["TRITON_NVDISASM_PATH"]) == ("/c/cuobjdump", "/c/nvdisasm")
    assert d["TRITON_OFFLINE_BUILD"] == "ON" and warnings == []
    [note] = notes
    assert "download_and_copy_dependencies" in note and "downloads nothing" in note
    assert note.endswith("none is provided for TRITON_PTXAS_BLACKWELL_PATH, which the wheel goes without")


def test_without_json_the_step_cannot_be_made_offline_and_the_plan_says_what_it_downloads() -> None:
    d, notes, [warning] = configure_paths(VARS, Resolution(), {"LLVM_SYSPATH": "/usr/lib/llvm-22"})
    assert "TRITON_OFFLINE_BUILD" not in d and notes == []
    assert "nlohmann-json3-dev" in warning and "configure downloads TRITON_PTXAS_PATH" in warning


@given(st.sets(st.sampled_from(VARS)), st.sets(st.sampled_from(["cuda-headers", "cupti-headers", "cupti-libs"])))
def test_every_variable_is_either_given_or_named_as_gone_without(tree_vars: set[str], names: set[str]) -> None:
    ordered = tuple(v for v in VARS if v in tree_vars)
    d, notes, _ = configure_paths(ordered, Resolution(parts=tuple(_part(n, "include") for n in sorted(names))), BASE)
    given_vars = {e.partition("=")[0] for e in d.get("TRITONBUILD_NVIDIA_PATHS", "").split(";") if e} | set(d)
    assert given_vars - {"TRITONBUILD_NVIDIA_PATHS", "TRITON_OFFLINE_BUILD"} <= tree_vars
    for var in ordered:
        assert var in given_vars or var in notes[0]


def test_the_step_is_found_in_the_trees_cmake_modules_too(tmp_path) -> None:
    """A tree that moves the step into cmake/<x>.cmake and include()s it (found by a hostile review: only the
    top-level file was read, and configure downloaded into the source again)."""
    from tritonbuild.gather.source import _with_cmake_modules

    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / "nvidia-parts.cmake").write_text(UPSTREAM.replace("project(triton CXX C)\n", ""))
    top = "project(triton CXX C)\ninclude(cmake/nvidia-parts.cmake)\n"
    assert parse_configure_nvidia_paths(top) == ()
    assert parse_configure_nvidia_paths(_with_cmake_modules(tmp_path, top)) == VARS
