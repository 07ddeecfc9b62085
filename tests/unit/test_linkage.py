"""How libtriton links LLVM and how the wheel is made self-contained: decided in the plan, before building."""

from __future__ import annotations

import pytest

from tests.helpers import llvm, plan_for
from tritonbuild.errors import UserError


def test_wheels_link_a_shared_libllvm_statically_when_its_archives_are_there(tree) -> None:
    p = plan_for(tree(), system=(llvm(static_libs=True),))
    assert p.llvm.link == "static"
    assert p.cmake.define("TRITONBUILD_LLVM_LINK") == "static"
    assert any("links it static" in n and "no libLLVM.so" in n for n in p.notes)


def test_without_archives_the_wheel_carries_libllvm(tree) -> None:
    p = plan_for(tree(), system=(llvm(static_libs=False),))
    assert p.llvm.link == "shared"
    assert any("carry libLLVM.so" in n for n in p.notes)


def test_static_on_request_without_archives_is_a_clear_error(tree) -> None:
    with pytest.raises(UserError) as err:
        plan_for(tree(), {"llvm_link": "static"}, system=(llvm(static_libs=False),))
    assert "libLLVMSupport.a" in str(err.value) and "--llvm-link shared" in str(err.value)


def test_an_all_static_llvm_is_static_whatever_is_asked(tree) -> None:
    p = plan_for(tree(), {"llvm_link": "shared"}, system=(llvm(link_dylib=False),))
    assert p.llvm.link == "static"


def test_env_and_cli_pick_the_link(tree) -> None:
    p = plan_for(tree(), env={"TRITONBUILD_LLVM_LINK": "shared"}, system=(llvm(static_libs=True),))
    assert p.llvm.link == "shared" and p.settings.origin("llvm_link") == "env TRITONBUILD_LLVM_LINK"
    with pytest.raises(UserError) as err:
        plan_for(tree(), env={"TRITONBUILD_LLVM_LINK": "dynamic"})
    assert "auto, static, shared" in str(err.value)


def test_bundling_defines_are_always_given_and_do_not_change_the_build_dir(tree) -> None:
    root = tree()
    on = plan_for(root, system=(llvm(static_libs=True),))
    off = plan_for(root, {"bundle_libs": False, "llvm_link": "shared"}, system=(llvm(static_libs=True),))
    assert on.cmake.define("TRITONBUILD_BUNDLE_PYTHON")
    assert on.cmake.define("TRITONBUILD_SYSTEM_LIBS") == "libcuda.so.1"
    # a define left out would keep its old value in the CMake cache: off is an empty value
    assert off.cmake.define("TRITONBUILD_BUNDLE_PYTHON") == "" and off.cmake.define("TRITONBUILD_SYSTEM_LIBS") == ""
    assert on.key == off.key  # only the link and the install step differ: same objects, same build dir
    assert on.wheel.bundle_libs and not off.wheel.bundle_libs
    assert any("--no-bundle-libs" in n for n in off.notes)


def test_probe_names_the_archives_a_static_link_lacks(tmp_path) -> None:
    from tritonbuild.llvm.probe import _static_missing

    lib = tmp_path / "lib"
    (lib / "cmake" / "llvm").mkdir(parents=True)
    for name in ("libLLVMSupport.a", "libLLVMCore.a", "libMLIRIR.a"):
        (lib / name).write_bytes(b"!<arch>\n")
    assert _static_missing(tmp_path) == ()
    # Debian's LLVM links Polly in: LLVMExtensions and LLVMLTO reference its plugin, so libPolly.a is needed
    (lib / "cmake" / "llvm" / "LLVMExports.cmake").write_text("add_library(Polly STATIC IMPORTED)\n")
    assert _static_missing(tmp_path) == ("libPolly.a", "libPollyISL.a")


def test_auto_falls_back_to_shared_naming_what_is_missing(tree) -> None:
    p = plan_for(tree(), system=(llvm(static_libs=False, static_missing=("libPolly.a",)),))
    assert p.llvm.link == "shared"
    assert any("would need libPolly.a" in n and "libpolly-NN-dev" in n for n in p.notes)
    with pytest.raises(UserError, match=r"lacks libPolly\.a"):
        plan_for(tree("t2"), {"llvm_link": "static"}, system=(llvm(static_libs=False, static_missing=("libPolly.a",)),))
