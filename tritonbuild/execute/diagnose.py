"""Explain build failures the user can act on (pure: a plan and the error lines in, a hint out)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from tritonbuild.plan import BackendPlan, Plan
from tritonbuild.resolve import pathviews

# What a C++ API change between two LLVM commits looks like from gcc and clang (gcc quotes with U+2018/9).
_Q = "['\u2018\u2019`]?"
_API_MISMATCH = re.compile(
    "|".join([
        f"marked {_Q}override{_Q}, but does not override", "does not override", "has no member named",
        "no member named", r"no matching (member )?function for call", r"too (many|few) arguments to function",
        "cannot convert", "was not declared in this scope", "use of undeclared identifier", "is deprecated",
        f"undefined reference to {_Q}(llvm|mlir)::", "unknown type name", "incomplete type",
        "of abstract class type", "is abstract",
    ])
)
# A header of LLVM's own tree that this LLVM does not have: it was moved or removed (LLVM 22.1 moved
# llvm/Passes/PassPlugin.h to llvm/Plugins/), so the code was written for another LLVM.
_MISSING_LLVM_HEADER = re.compile(
    rf"fatal error: {_Q}((?:llvm|llvm-c|mlir|mlir-c|lld)/[\w/.+-]+\.(?:h|inc|def)){_Q}: No such file or directory"
)
# The LLVM/MLIR symbol an API-change error names (gcc: "no matching function for call to
# 'mlir::tensor::ExtractSliceOp::inferResultType(...)'").
_LLVM_SYMBOL = re.compile(
    r"(?:no matching (?:member )?function for call to|has no member named|is not a member of|no member named"
    rf"|was not declared in this scope|marked {_Q}override{_Q}, but does not override) ?{_Q}((?:mlir|llvm)::[\w:]+)"
    r"|(GEN_PASS_CLASSES) is deprecated"  # MLIR's tablegen'd pass bases, an #error in LLVM 22's Passes.h.inc
)
# A compiler or linker the kernel killed (the OOM killer sends SIGKILL): gcc/clang report the signal, Ninja
# the exit code 137 (128 + 9).
_KILLED = re.compile(r"Killed signal terminated program|terminated with signal 9|\[code=137\]|"
                     r"internal compiler error: Killed|clang.*: error: unable to execute command: Killed")
_KILLED_LINK = re.compile(r"(ld|lld|collect2)[^\n]*(terminated with signal 9|Killed)|FAILED: \[code=137\] \S+\.so\b")
_NO_SPACE = re.compile(r"No space left on device|\bENOSPC\b")
_READ_ONLY = re.compile(r"Read-only file system|\bEROFS\b")
# What a build needs: an upstream nvidia;amd build dir is about 3 GiB (2.8 GiB seen for d8da7c998 with proton).
BUILD_DIR_GIB = 3.0
_UNKNOWN_TARGET = re.compile(r"ninja: error: unknown target '([^']+)'")
_MISSING_TARGET = re.compile(
    r"undefined (reference|symbol).*LLVMInitialize(\w+?)(Target|AsmPrinter|TargetInfo|TargetMC)"
)


# gcc/clang diagnostics name the file first; with CCACHE_BASEDIR the path is relative to the CMake build dir.
_DIAG_PATH = re.compile(r"^(?:In file included from )?([^\s:]+\.(?:cpp|cc|cxx|c|h|hpp|inc|td)):\d+")
_FAILED_OBJECT = re.compile(r"^FAILED:(?: \[code=\d+\])? (\S+)")


def _inside(path: str, root: str) -> bool:
    return PurePosixPath(path) == PurePosixPath(root) or PurePosixPath(root) in PurePosixPath(path).parents


def blamed_plugins(plan: Plan, errors: Sequence[str]) -> list[BackendPlan]:
    """The plugins whose own files (or whose objects in third_party/<name>/) the errors name."""
    cmake_dir = os.path.join(plan.cmake.build_dir, "cmake")

    def names(plugin: BackendPlan, line: str) -> bool:
        m, failed = _DIAG_PATH.match(line), _FAILED_OBJECT.match(line)
        named = m and pathviews.to_real(os.path.normpath(os.path.join(cmake_dir, m.group(1))), plan.cmake.views)
        return bool(named and _inside(named, plugin.path)) or bool(
            failed and failed.group(1).startswith(f"third_party/{plugin.name}/"))

    return [b for b in plan.backends if b.origin == "plugin" and any(names(b, line.strip()) for line in errors)]


def _plugin_hint(plan: Plan, plugin: BackendPlan) -> str:
    where = f"The failing code is in the plugin {plugin.name!r} ({plugin.path}), not in Triton"
    if plugin.pin_matches_source is False and plugin.triton_pin:
        source = (plan.source.commit or "?")[:12]
        return (f"{where}: it pins Triton {plugin.triton_pin[:12]} ({plugin.triton_pin_from}) but the source is at "
                f"{source}, so it was written against another Triton C++ API. Build it with the Triton it pins "
                f"(--source <Triton git URL or checkout> --ref {plugin.triton_pin[:12]}) or port the plugin to "
                "this Triton.")
    return f"{where}; fix the plugin (the compiler's messages are above)."


def memory_hint(plan: Plan, text: str) -> str | None:
    """A compile or link killed by the kernel: say it is memory, what ran at once, and what would fit."""
    if not _KILLED.search(text):
        return None
    tc = plan.toolchain
    link = bool(_KILLED_LINK.search(text))
    what = "a link" if link else "a compiler"
    fit_jobs = max(1, tc.jobs // 2)
    fit_links = 1 if link else tc.link_jobs
    ram = f"{tc.mem_total_gib:.0f} GiB" if tc.mem_total_gib else "this machine's memory"
    return (f"The kernel killed {what} (signal 9): the build ran out of memory with -j{tc.jobs} compile and "
            f"{tc.link_jobs} link jobs on {ram}. Run again with fewer at once, e.g. `-j {fit_jobs} --link-jobs "
            f"{fit_links}` (MAX_JOBS / TRITON_PARALLEL_LINK_JOBS); finished objects are kept.")


_BUS_ERROR = re.compile(r"signal 7 \[Bus error\]|\bBus error\b")


def disk_hint(plan: Plan, text: str, free_gib: float | None = None) -> str | None:
    """A build that hit a full or read-only disk: which directory, how much it needs, what is kept."""
    where = f"the build dir {plan.cmake.build_dir}"
    if _READ_ONLY.search(text):
        return (f"The disk under {where} is read-only (EROFS). Point --cache-dir (or TRITONBUILD_CACHE_DIR) at a "
                "writable place; nothing was written to the output dir.")
    # lld writes its output through a memory map: on a full disk it dies of SIGBUS instead of saying ENOSPC
    no_space = _NO_SPACE.search(text)
    mapped = _BUS_ERROR.search(text) and free_gib is not None and free_gib < BUILD_DIR_GIB
    if not no_space and not mapped:
        return None
    free = f"{free_gib:.1f} GiB free now" if free_gib is not None else "no space left"
    if not no_space:
        free += "; the linker died of a bus error writing its memory-mapped output, which is how lld meets a full disk"
    return (f"The disk under {where} is full ({free}); a Triton build dir needs about {BUILD_DIR_GIB:.0f} GiB, "
            "plus the wheel in the output dir. Free space there or use --cache-dir on a larger disk; what was "
            "built so far is kept and the next run resumes, and the output dir is untouched.")


def explain(plan: Plan, errors: Sequence[str]) -> str | None:
    text = "\n".join(errors)
    first = memory_hint(plan, text) or disk_hint(plan, text)
    if first:
        return first
    unknown = _UNKNOWN_TARGET.search(text)
    if unknown:
        return (f"{unknown.group(1)!r} (from --target or the recipe's targets) is not a target of this build: "
                f"`ninja -C <build dir> -t targets all` lists them (tools are e.g. triton-opt, and a plugin's "
                "tool exists only when the plugin is part of the build). Fix or drop the name.")
    m = _MISSING_TARGET.search(text)
    if m:
        return (f"libtriton references LLVM target {m.group(2)}, which the LLVM at {plan.llvm.prefix} was built "
                f"without (it has: {' '.join(plan.llvm.targets_built) or 'unknown'}). Use an LLVM with that target.")
    plugins = blamed_plugins(plan, errors)
    hints = [_plugin_hint(plan, p) for p in plugins]
    if plan.llvm.is_pinned is True:
        return " ".join(hints) or None
    header = _MISSING_LLVM_HEADER.search(text)
    if header:
        # Whoever's code it is, this LLVM lacks a header of its own: the Triton pin alone cannot fix that.
        hints.append(f"{header.group(1)} is a header of LLVM's own tree that LLVM {plan.llvm.version or '?'} at "
                     f"{plan.llvm.prefix} does not have (moved or removed), so the code was written for another "
                     f"LLVM. {_llvm_hint(plan)}")
    elif _API_MISMATCH.search(text):
        symbol = _LLVM_SYMBOL.search(text)
        if not any(p.pin_matches_source is False for p in plugins):
            hints.append(_llvm_hint(plan))
        elif symbol:  # the plugin's Triton pin comes with its own LLVM pin, and this is an LLVM API
            hints.append(f"The compiler names {symbol.group(1) or symbol.group(2)}, an LLVM/MLIR API: with the "
                         "Triton it pins, the plugin also needs that Triton's LLVM (its cmake/llvm-hash.txt), not "
                         f"LLVM {plan.llvm.version or '?'} at {plan.llvm.prefix}.")
    return " ".join(hints) or None


def _llvm_hint(plan: Plan) -> str:
    return (
        f"The source pins LLVM {plan.llvm.pinned_hash[:12]} but this build uses LLVM {plan.llvm.version or '?'} at "
        f"{plan.llvm.prefix}, which is not that commit; errors like these usually mean an LLVM/MLIR C++ API changed "
        "between the two. Build against the pinned LLVM (`tritonbuild llvm status` shows how: a verified prebuilt "
        "download or `tritonbuild llvm build`), or check out a Triton commit whose cmake/llvm-hash.txt is closer "
        "to this LLVM."
    )


# "fatal error: 'x.h' file not found" (clang), "fatal error: x.h: No such file or directory" (gcc)
_MISSING_HEADER_LINE = re.compile(rf"{_Q}([\w/.+-]+\.(?:h|hpp|inc|def)){_Q}(?: file not found|: No such file or "
                                  "directory)")


def error_kind(message: str) -> str:
    """What one compiler error message is, in the words of the diagnosis above: "moved header" (an LLVM/MLIR/LLD
    header this LLVM lacks), "missing header" (another header), "API change" (an LLVM/MLIR C++ API that changed:
    an override that overrides nothing, a member or function that is gone or takes other arguments), or "error"."""
    header = _MISSING_HEADER_LINE.search(message)
    if header:
        return "moved header" if header.group(1).startswith(("llvm/", "llvm-c/", "mlir/", "mlir-c/", "lld/")) \
            else "missing header"
    return "API change" if _API_MISMATCH.search(message) else "error"
