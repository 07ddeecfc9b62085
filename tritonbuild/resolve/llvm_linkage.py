"""How libtriton links LLVM, and how the wheel becomes self-contained (pure: settings + LLVM facts -> decisions).

A wheel built here is installed on other machines, where the build's LLVM prefix does not exist. Official
wheels link LLVM statically. A distribution LLVM built as one shared libLLVM (Debian's, ``LLVM_LINK_LLVM_DYLIB``)
can still be linked statically when it ships its component archives (Debian's llvm-NN-dev and libmlir-NN-dev do):
that is the default for wheels. Otherwise libtriton links libLLVM.so and the wheel carries it. Either way the
install step (``tritonbuild.wheel.bundle``) copies what the installed libraries still need from outside the manylinux
allow-list into ``triton/_C`` with ``$ORIGIN`` run paths.
"""

from __future__ import annotations

import sys

from tritonbuild.errors import UserError
from tritonbuild.plan import LLVMPlan
from tritonbuild.settings.model import Settings


def llvm_link(s: Settings, llvm: LLVMPlan, *, editable: bool) -> tuple[str, str]:
    """``("static"|"shared", why)``: how libtriton will link this LLVM (the words are the setting's,
    ``settings.model.LLVMLink``, checked where it is resolved)."""
    value, origin = s.llvm_link, s.origin("llvm_link")
    if not llvm.link_dylib:
        return "static", "this LLVM is built as static libraries"
    missing = ", ".join(llvm.static_missing) or "libLLVMSupport.a, libMLIRIR.a"
    if value == "static" and not llvm.static_libs:
        raise UserError(
            f"--llvm-link static (from {origin}) needs LLVM's and MLIR's static libraries, but {llvm.prefix}/lib "
            f"lacks {missing}. Install them (Debian: llvm-NN-dev, libmlir-NN-dev and libpolly-NN-dev ship them), "
            "or use --llvm-link shared: the wheel then carries libLLVM.so.")
    if value != "auto":
        return value, origin
    if editable:
        return "shared", "develop links the shared libLLVM (quick relinks; nothing leaves this machine)"
    if llvm.static_libs:
        return "static", "the LLVM ships its static libraries, so the wheel needs no libLLVM.so (like official wheels)"
    return "shared", (f"a static link would need {missing}, which {llvm.prefix}/lib lacks (Debian: libpolly-NN-dev "
                      "for libPolly.a); the wheel carries libLLVM.so instead")


def defines(s: Settings, llvm: LLVMPlan, link: str) -> dict[str, str]:
    """The injected CMake's packaging defines. They are volatile (they never change an object file, so a change
    reuses the build dir), and therefore always given, empty when off: a define left out would keep its old
    value in the CMake cache."""
    bundle = s.bundle_libs
    return {
        "TRITONBUILD_LLVM_LINK": link,
        "TRITONBUILD_BUNDLE_PYTHON": sys.executable if bundle else "",
        "TRITONBUILD_SYSTEM_LIBS": ";".join(s.repair_exclude) if bundle else "",
    }


def notes(s: Settings, llvm: LLVMPlan, link: str, why: str) -> list[str]:
    out = []
    if llvm.link_dylib:
        version = f" {llvm.version}" if llvm.version else ""
        out.append(f"LLVM{version} is a shared libLLVM; libtriton links it {link}: {why}")
    if not s.bundle_libs:
        out.append("--no-bundle-libs: the wheel's libraries keep needing what this machine has (verify will say what)")
    elif link == "shared" and llvm.link_dylib:
        out.append("the wheel will carry libLLVM.so and the libraries it needs (about 200 MB before compression)")
    return out
