"""Configure-time downloads: what the tree declares, what this plan needs, what --dep supplies."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_resolve import facts
from tritonbuild import fetchdeps
from tritonbuild.errors import UserError
from tritonbuild.resolve import resolve_plan
from tritonbuild.settings import resolve_settings

INTEL = """include(FetchContent)
    file(READ spirv-llvm-translator.conf SPIRVToLLVMTranslator_TAG)
    string(STRIP "${SPIRVToLLVMTranslator_TAG}" SPIRVToLLVMTranslator_TAG)
    FetchContent_Declare(spirv-llvm-translator
            GIT_REPOSITORY    https://github.com/KhronosGroup/SPIRV-LLVM-Translator.git
            GIT_TAG           ${SPIRVToLLVMTranslator_TAG}
            SOURCE_DIR ${SPIRVToLLVMTranslator_SOURCE_DIR}
            )
"""


def test_declarations_with_tags_in_the_file_or_a_conf_file(tree) -> None:
    root = tree()
    assert fetchdeps.scan(root) == [("googletest", "unittest/googletest.cmake:10", "git",
                                     "https://github.com/google/googletest.git", "v1.17.0")]
    assert fetchdeps.conf_reads(INTEL) == [("spirv-llvm-translator.conf", "SPIRVToLLVMTranslator_TAG")]
    [decl] = fetchdeps.parse(INTEL, "third_party/intel/lib/Target/SPIRV/CMakeLists.txt",
                             {"SPIRVToLLVMTranslator_TAG": "4a2bbe2f8b7dc3c1c46b56a7d1ab1c1b17fc7b2c\n"})
    assert decl[0] == "spirv-llvm-translator" and decl[4] == "4a2bbe2f8b7dc3c1c46b56a7d1ab1c1b17fc7b2c"


def test_which_declarations_a_plan_configures() -> None:
    assert fetchdeps.needed("unittest/googletest.cmake", [], ut=False) is False
    assert fetchdeps.needed("unittest/googletest.cmake", [], ut=True) is True
    assert fetchdeps.needed("third_party/intel/lib/CMakeLists.txt", ["third_party/intel"], ut=False) is True
    assert fetchdeps.needed("third_party/intel/lib/CMakeLists.txt", ["third_party/nvidia"], ut=False) is False
    assert fetchdeps.needed("cmake/deps.cmake", [], ut=False) is True


def plan(root: Path, cli: dict, supplied: dict | None = None):
    f = facts(root)
    f = type(f)(**{**f.__dict__, "fetch_decls": tuple(fetchdeps.scan(root)), "deps_supplied": supplied or {}})
    return resolve_plan(resolve_settings(cli, {}), f, {})


def test_offline_names_each_needed_download_and_the_flag(tree) -> None:
    root = tree()
    assert plan(root, {"offline": True}).deps[0].needed is False  # unit tests off: googletest not configured
    with pytest.raises(UserError) as err:
        plan(root, {"offline": True, "cmake_args": ["-DTRITON_BUILD_UT=ON"]})
    assert "googletest (https://github.com/google/googletest.git at v1.17.0, unittest/googletest.cmake:10)" in \
        str(err.value) and "--dep googletest=PATH" in str(err.value)


def test_supplied_dependencies_become_fetchcontent_overrides(tree) -> None:
    root = tree()
    gt = fetchdeps.Supplied("googletest", "/src/googletest", "googletest=/src/googletest", {"v1.17.0": False})
    p = plan(root, {"offline": True, "cmake_args": ["-DTRITON_BUILD_UT=ON"]}, {"googletest": gt})
    assert p.cmake.define("FETCHCONTENT_SOURCE_DIR_GOOGLETEST") == "/src/googletest"
    assert p.deps[0].supplied == "/src/googletest" and p.deps[0].tag_matches is False
    assert any("not at the tree's pinned v1.17.0" in w for w in p.warnings)
    other = fetchdeps.Supplied("gtest", "/src/x", "gtest=/src/x", {})
    with pytest.raises(UserError, match=r"--dep names gtest, which this source does not declare.*googletest"):
        plan(root, {}, {"gtest": other})
