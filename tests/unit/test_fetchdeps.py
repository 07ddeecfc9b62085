"""Configure-time downloads: what the tree declares, what this plan needs, what --dep supplies."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import facts
from tritonbuild.errors import UserError
from tritonbuild.gather import deps
from tritonbuild.resolve import fetchdeps
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.settings.model import resolve_settings

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
    assert ("googletest", "unittest/googletest.cmake:10", "git", "https://github.com/google/googletest.git",
            "v1.17.0") in deps.scan(root)
    assert fetchdeps.conf_reads(INTEL) == [("spirv-llvm-translator.conf", "SPIRVToLLVMTranslator_TAG")]
    [decl] = fetchdeps.parse(INTEL, "third_party/intel/lib/Target/SPIRV/CMakeLists.txt",
                             {"SPIRVToLLVMTranslator_TAG": "4a2bbe2f8b7dc3c1c46b56a7d1ab1c1b17fc7b2c\n"})
    assert decl[0] == "spirv-llvm-translator" and decl[4] == "4a2bbe2f8b7dc3c1c46b56a7d1ab1c1b17fc7b2c"


def test_declarations_outside_what_configure_reaches_are_left_out(tree) -> None:
    root = tree()
    # like Intel's tree: benchmarks/ and utils/ declare downloads, but the top CMakeLists.txt never adds them
    for rel in ("benchmarks/cmake/FindCUTLASSLibrary.cmake", "utils/Runner/CMakeLists.txt"):
        (root / rel).parent.mkdir(parents=True)
        (root / rel).write_text("FetchContent_Declare(unused GIT_REPOSITORY https://example.invalid/x.git "
                                "GIT_TAG v1)\n")
    names = [d[0] for d in deps.scan(root)]
    assert names == ["spirv-kernel-abi", "googletest"]
    # the spirv backend's Find module reads its tag from the .conf next to the CMakeLists.txt calling find_package
    [spirv] = [d for d in deps.scan(root) if d[0] == "spirv-kernel-abi"]
    assert spirv[1] == "third_party/spirv/cmake/FindSPIRVKernelABI.cmake:10" and spirv[4] == "v1.0.0"
    (root / "CMakeLists.txt").write_text((root / "CMakeLists.txt").read_text() + "add_subdirectory(utils/Runner)\n")
    assert "unused" in [d[0] for d in deps.scan(root)]


def test_which_declarations_a_plan_configures() -> None:
    assert fetchdeps.needed("unittest/googletest.cmake", [], ut=False) is False
    assert fetchdeps.needed("unittest/googletest.cmake", [], ut=True) is True
    assert fetchdeps.needed("third_party/intel/lib/CMakeLists.txt", ["third_party/intel"], ut=False) is True
    assert fetchdeps.needed("third_party/intel/lib/CMakeLists.txt", ["third_party/nvidia"], ut=False) is False
    assert fetchdeps.needed("cmake/deps.cmake", [], ut=False) is True


def plan(root: Path, cli: dict, supplied: dict | None = None):
    f = facts(root)
    f = type(f)(**{**f.__dict__, "fetch_decls": tuple(deps.scan(root)), "deps_supplied": supplied or {}})
    return resolve_plan(resolve_settings(cli, {}), f)


def test_offline_names_each_needed_download_and_the_flag(tree) -> None:
    root = tree()
    deps = {d.name: d for d in plan(root, {"offline": True}).deps}
    assert deps["googletest"].needed is False  # unit tests off: googletest not configured
    assert deps["spirv-kernel-abi"].needed is False  # the spirv backend is not selected
    with pytest.raises(UserError) as err:
        plan(root, {"offline": True, "cmake_args": ["-DTRITON_BUILD_UT=ON"]})
    assert "googletest (https://github.com/google/googletest.git at v1.17.0, unittest/googletest.cmake:10)" in \
        str(err.value) and "--dep googletest=PATH" in str(err.value)


def test_supplied_dependencies_become_fetchcontent_overrides(tree) -> None:
    root = tree()
    gt = fetchdeps.Supplied("googletest", "/src/googletest", "googletest=/src/googletest", {"v1.17.0": False})
    p = plan(root, {"offline": True, "cmake_args": ["-DTRITON_BUILD_UT=ON"]}, {"googletest": gt})
    assert p.cmake.define("TRITONBUILD_DEPS") == "googletest=/src/googletest"
    assert p.cmake.define("CMAKE_PROJECT_TOP_LEVEL_INCLUDES").endswith("/TritonBuildDeps.cmake")
    [dep] = [d for d in p.deps if d.name == "googletest"]
    assert dep.supplied == "/src/googletest" and dep.tag_matches is False
    assert any("not at the tree's pinned v1.17.0" in w for w in p.warnings)
    other = fetchdeps.Supplied("gtest", "/src/x", "gtest=/src/x", {})
    with pytest.raises(UserError, match=r"--dep names gtest, which this source does not declare.*googletest"):
        plan(root, {}, {"gtest": other})

