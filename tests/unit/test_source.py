from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.gather.source import inspect_source
from tritonbuild.resolve.source import (
    finds_lld,
    parse_bindings,
    parse_install_requires,
    parse_proton_in_tuple,
    parse_setup_backends,
    parse_stable_abi,
    parse_tuple_limit,
    parse_version,
)

MAIN_CC_5 = "#define FOR_EACH_ARG_N(_1, _2, _3, _4, _5, N, ...) N\n"
MAIN_CC_4 = "#define FOR_EACH_ARG_N(_1, _2, _3, _4, N, ...) N\n"


def test_tuple_limit() -> None:
    assert parse_tuple_limit(MAIN_CC_5) == 5
    assert parse_tuple_limit(MAIN_CC_4) == 4
    assert parse_tuple_limit("int main() {}") is None


def test_proton_in_tuple() -> None:
    always = 'if(TRITON_BUILD_PYTHON_MODULE)\n  list(APPEND TRITON_PLUGIN_NAMES "proton")\nendif()\n'
    when = "if (TRITON_BUILD_PROTON)\n  add_subdirectory(x)\n  list(APPEND TRITON_PLUGIN_NAMES proton)\nendif()\n"
    assert parse_proton_in_tuple(always) == "always"
    assert parse_proton_in_tuple(when) == "when-built"
    assert parse_proton_in_tuple("if(TRITON_BUILD_PROTON)\nendif()\n") == "never"
    assert parse_proton_in_tuple('# list(APPEND TRITON_PLUGIN_NAMES "proton")\n') == "never"


def test_finds_lld() -> None:
    assert finds_lld('if(TRITON_BUILD_PYTHON_MODULE)\n  find_package(LLD REQUIRED CONFIG PATHS "${LLD_DIR}")\nendif()')
    assert finds_lld("FIND_PACKAGE( LLD CONFIG)")
    assert not finds_lld("# find_package(LLD REQUIRED)\nset(LLD_DIR ${LLVM_LIBRARY_DIR}/cmake/lld)")
    assert not finds_lld("find_package(LLDB)")


def test_inspect_reads_which_cmake_finds_lld(tree) -> None:
    info = inspect_source(tree())
    assert {b.name: b.finds_lld for b in info.backends} == {"amd": True, "cpu": False, "nvidia": False,
                                                             "spirv": False}
    assert info.core_finds_lld is False


def test_g1_nvidia_needs_cuda_headers_setup_py_would_download(tree) -> None:
    assert inspect_source(tree("g1", generation="G1")).nvidia_missing_headers == ("cuda.h",)
    assert inspect_source(tree("g2")).nvidia_missing_headers == ()
    g1 = tree("g1b", generation="G1")
    (g1 / "third_party" / "nvidia" / "backend" / "include").mkdir()
    (g1 / "third_party" / "nvidia" / "backend" / "include" / "cuda.h").write_text("#define CUDA_VERSION 1\n")
    assert inspect_source(g1).nvidia_missing_headers == ()  # as left by an online setup.py run


def test_install_requires_are_read_from_a_literal_list() -> None:
    intel = 'setup(\n    name="triton",\n    install_requires=[\n        "pyelftools",\n' \
            '        "importlib-metadata; python_version < \'3.10\'",\n    ],\n    zip_safe=False)\n'
    assert parse_install_requires(intel) == ("pyelftools", "importlib-metadata; python_version < '3.10'")
    assert parse_install_requires("setup(install_requires=deps())") == ()  # not a literal: nothing guessed
    assert parse_install_requires("setup(name='triton')") == ()
    assert parse_install_requires("def broken(:") == ()


def test_setup_backends_and_version() -> None:
    setup = 'TRITON_VERSION = "3.6.0"\nbackends = [*BackendInstaller.copy(["nvidia", "amd"]), *x()]\n'
    assert parse_setup_backends(setup) == ("nvidia", "amd")
    assert parse_setup_backends("setup()") is None
    assert parse_version("__version__ = '3.4.0'\n") == "3.4.0"
    assert parse_version("", setup) == "3.6.0"


@pytest.mark.parametrize(("gen", "limit", "proton", "pin_kind"),
                         [("G1", 4, "never", "llvm-hash.txt"), ("G2", 5, "always", "llvm-hash.txt"),
                          ("G3", 5, "always", "llvm-info.json")])
def test_inspect_generations(tree, gen: str, limit: int, proton: str, pin_kind: str) -> None:
    info = inspect_source(tree(generation=gen))
    assert info.generation == gen
    assert info.tuple_limit == limit and info.tuple_limit_known
    assert info.proton_in_tuple == proton
    assert info.pin.kind == pin_kind
    assert info.backend_names == ("amd", "cpu", "nvidia", "spirv")
    assert info.default_backends == ("nvidia", "amd")
    assert info.required_backends == ("nvidia", "amd")
    assert info.has_proton and info.version == "3.6.0"
    # 2024 (G1) trees keep language extras in python/triton/language/extra, not in the backends
    assert info.backend("nvidia").language == (() if gen == "G1" else ("cuda",))
    assert info.backend("spirv").tools == ("spirvdis",)


def test_inspect_without_required_backends(tree) -> None:
    info = inspect_source(tree(required=False, backends=("cpu", "nvidia"), proton=False))
    assert info.required_backends == ()
    assert info.backend_names == ("cpu", "nvidia")
    assert not info.has_proton


def test_not_a_triton_tree(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is not a Triton source tree"):
        inspect_source(tmp_path)


def test_missing_pin(tree) -> None:
    root = tree()
    (root / "cmake" / "llvm-hash.txt").unlink()
    with pytest.raises(UserError, match="has no LLVM pin"):
        inspect_source(root)


def test_corrupt_pin_names_the_file(tree) -> None:
    root = tree()
    (root / "cmake" / "llvm-hash.txt").write_text("main\n")
    with pytest.raises(UserError, match=r"llvm-hash\.txt"):
        inspect_source(root)


def test_missing_submodules_are_found_with_their_users(tree) -> None:
    root = tree()
    (root / ".gitmodules").write_text('[submodule "sleef"]\n\tpath = third_party/sleef\n\turl = https://x/sleef\n')
    (root / "third_party" / "sleef").mkdir()
    cml = root / "third_party" / "cpu" / "CMakeLists.txt"
    cml.write_text(cml.read_text() + 'add_subdirectory("${CMAKE_SOURCE_DIR}/third_party/sleef" sleef)\n')
    assert inspect_source(root).missing_submodules == (("third_party/sleef", ("cpu",)),)
    (root / "third_party" / "sleef" / "CMakeLists.txt").write_text("# checked out\n")
    assert inspect_source(root).missing_submodules == ()


def test_mid_2026_trees_bind_with_nanobind_and_can_build_for_the_stable_abi(tree) -> None:
    g4 = inspect_source(tree(generation="G4"))
    assert (g4.generation, g4.bindings, g4.stable_abi) == ("G3", "nanobind", True)  # G3's layout, 2026's bindings
    assert "nanobind==2.10.2" in g4.build_requires
    g3 = inspect_source(tree(generation="G3"))
    assert (g3.bindings, g3.stable_abi) == ("pybind11", False)
    assert parse_bindings("# find_package(nanobind CONFIG)\nfind_package(pybind11 CONFIG)") == "pybind11"
    assert parse_stable_abi('option(TRITON_STABLE_ABI "abi3" OFF)') and not parse_stable_abi("# TRITON_STABLE_ABI")
