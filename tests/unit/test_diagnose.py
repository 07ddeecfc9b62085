from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from tests.helpers import llvm, plan_for
from tritonbuild.execute.diagnose import disk_hint, explain
from tritonbuild.resolve.source import GitState

OVERRIDE = ("AxisInfo.cpp:147:8: error: 'void AxisInfoAnalysis::visitNonControlFlowArguments(...)' marked "
            "'override', but does not override")
# The hint's sentences, whole: a changed word in a hint fails the test that shows it.
PINNED_LLVM = ("The source pins LLVM 2eb709b95d8f but this build uses LLVM 22.1.8 at /usr/lib/llvm-22, which is not "
               "that commit; errors like these usually mean an LLVM/MLIR C++ API changed between the two. Build "
               "against the pinned LLVM (`tritonbuild llvm status` shows how: a verified prebuilt download or "
               "`tritonbuild llvm build`), or check out a Triton commit whose cmake/llvm-hash.txt is closer to this "
               "LLVM.")
PINNED_TRITON = (": it pins Triton e44bd1c83c1c (triton-hash.txt) but the source is at d8da7c9985d1, so it was "
                 "written against another Triton C++ API. Build it with the Triton it pins (--source <Triton git URL "
                 "or checkout> --ref e44bd1c83c1c) or port the plugin to this Triton.")


def in_plugin(plug: Path) -> str:
    return f"The failing code is in the plugin 'triton_shared' ({plug}), not in Triton"


def moved_header(header: str) -> str:
    return (f"{header} is a header of LLVM's own tree that LLVM 22.1.8 at /usr/lib/llvm-22 does not have (moved or "
            "removed), so the code was written for another LLVM.")


def needs_that_llvm(api: str) -> str:
    return (f"The compiler names {api}, an LLVM/MLIR API: with the Triton it pins, the plugin also needs that "
            "Triton's LLVM (its cmake/llvm-hash.txt), not LLVM 22.1.8 at /usr/lib/llvm-22.")


def killed(what: str, link_jobs: int) -> str:
    return (f"The kernel killed a {what} (signal 9): the build ran out of memory with -j8 compile and 4 link jobs on "
            f"32 GiB. Run again with fewer at once, e.g. `-j 4 --link-jobs {link_jobs}` (MAX_JOBS / "
            "TRITON_PARALLEL_LINK_JOBS); finished objects are kept.")


def disk_full(build_dir: str, free: str) -> str:
    return (f"The disk under the build dir {build_dir} is full ({free}); a Triton build dir needs about 3 GiB, plus "
            "the wheel in the output dir. Free space there or use --cache-dir on a larger disk; what was built so far "
            "is kept and the next run resumes, and the output dir is untouched.")


def test_api_mismatch_against_a_non_pinned_llvm_is_explained(tree) -> None:
    p = plan_for(tree())
    assert explain(p, [OVERRIDE]) == PINNED_LLVM


def test_no_hint_for_a_pinned_llvm_or_an_ordinary_error(tree) -> None:
    pinned = plan_for(tree("a"), system=(llvm(revision="2eb709b95d8f521aa15401e159fac0729d56a677"),))
    assert explain(pinned, [OVERRIDE]) is None
    assert explain(plan_for(tree("b")), ["Plugin.cpp:3:2: error: #error this plugin is broken"]) is None


def test_unknown_extra_target_is_named(tree) -> None:
    hint = explain(plan_for(tree(), {"targets": ("triton-shard-opt",)}),
                   ["ninja: error: unknown target 'triton-shard-opt'"])
    assert hint == ("'triton-shard-opt' (from --target or the recipe's targets) is not a target of this build: "
                    "`ninja -C <build dir> -t targets all` lists them (tools are e.g. triton-opt, and a plugin's tool "
                    "exists only when the plugin is part of the build). Fix or drop the name.")


def test_missing_llvm_target_is_named(tree) -> None:
    p = plan_for(tree())
    p = dataclasses.replace(p, llvm=dataclasses.replace(p.llvm, targets_built=("X86",)))
    hint = explain(p, ["libtriton.so: undefined reference to `LLVMInitializeNVPTXTargetInfo'"])
    assert hint == ("libtriton references LLVM target NVPTX, which the LLVM at /usr/lib/llvm-22 was built without "
                    "(it has: X86). Use an LLVM with that target.")


def test_abstract_class_after_an_api_change_is_explained(tree) -> None:
    line = ("DataFlowFramework.h:714:30: error: invalid new-expression of abstract class type "
            "'mlir::triton::gpu::TaskIdBackwardPropagation'")
    assert explain(plan_for(tree()), [line]) == PINNED_LLVM


def test_errors_in_a_plugin_name_the_plugin(tree, plugin) -> None:
    plug = plugin("triton-shared", "triton_shared")
    p = plan_for(tree(), {"plugin_dirs": (str(plug),)})
    # With CCACHE_BASEDIR, gcc names the file relative to the CMake build dir.
    rel = os.path.relpath(plug / "lib" / "Plugin.cpp", os.path.join(p.cmake.build_dir, "cmake"))
    hint = explain(p, [f"{rel}:3:2: error: 'getOperands' has no member named 'foo'"])
    # the plugin pins no Triton: the LLVM mismatch may be the cause
    assert hint == f"{in_plugin(plug)}; fix the plugin (the compiler's messages are above). {PINNED_LLVM}"
    failed = explain(p, ["FAILED: [code=1] third_party/triton_shared/lib/CMakeFiles/x.dir/Plugin.cpp.o"])
    assert failed == f"{in_plugin(plug)}; fix the plugin (the compiler's messages are above)."
    core = explain(p, [f"{os.path.relpath(tree('b') / 'lib' / 'Core.cpp', p.cmake.build_dir)}:1:1: error: x"])
    assert core is None


def shared_over_d8(tree, plugin):
    """triton-shared 1c203ca (pins Triton e44bd1c) as a plugin over a source at d8da7c998: the pins differ."""
    plug = plugin("triton-shared", "triton_shared", triton_hash="e44bd1c83c1c3e8deac7c4f02683cfb3cc395c8b")
    git = GitState(commit="d8da7c9985d1c6d0f7b7f0a6c2b1e0f9a8b7c6d5", dirty=False)
    return plug, plan_for(tree(), {"plugin_dirs": (str(plug),)}, git=git)


def test_plugin_pinned_to_another_triton_is_blamed_on_the_pin(tree, plugin) -> None:
    plug, p = shared_over_d8(tree, plugin)
    hint = explain(p, [f"{plug}/lib/Plugin.cpp:10:5: error: no matching function for call to 'foo'"])
    assert hint == in_plugin(plug) + PINNED_TRITON


def test_a_moved_llvm_header_is_named_even_when_the_plugin_pin_differs(tree, plugin) -> None:
    # microsoft/triton-shared 1c203ca on Triton d8da7c998 and Debian's LLVM 22.1.8: its sanitizer includes the
    # header LLVM 22.1 moved, so both the Triton pin and the LLVM matter.
    plug, p = shared_over_d8(tree, plugin)
    line = (f"{plug}/lib/Sanitizer/SanitizerAttributes.cpp:2:10: fatal error: llvm/Passes/PassPlugin.h: No such "
            "file or directory")
    header = moved_header("llvm/Passes/PassPlugin.h")
    assert explain(p, [line]) == f"{in_plugin(plug)}{PINNED_TRITON} {header} {PINNED_LLVM}"
    core = explain(plan_for(tree("b")), ["python/src/llvm.cc:2:10: fatal error: \u2018mlir/IR/Gone.h\u2019: No "
                                         "such file or directory"])
    assert core == f"{moved_header('mlir/IR/Gone.h')} {PINNED_LLVM}"
    own = explain(plan_for(tree("c")), ["lib/X.cpp:1:10: fatal error: triton/Foo.h: No such file or directory"])
    assert own is None  # a missing header of Triton's own is no LLVM matter


def test_a_plugin_on_another_triton_failing_on_an_mlir_api_needs_that_tritons_llvm(tree, plugin) -> None:
    # triton-shared 1c203ca's MaskAnalysis.cpp over Triton d8da7c998 and LLVM 22.1.8 (the MLIR API changed).
    plug, p = shared_over_d8(tree, plugin)
    line = (f"{plug}/lib/Analysis/MaskAnalysis.cpp:68:57: error: no matching function for call to "
            "\u2018mlir::tensor::ExtractSliceOp::inferResultType(mlir::RankedTensorType&, ...)\u2019")
    api = needs_that_llvm("mlir::tensor::ExtractSliceOp::inferResultType")
    assert explain(p, [line]) == f"{in_plugin(plug)}{PINNED_TRITON} {api}"
    gen = explain(p, ["FAILED: [code=1] third_party/triton_shared/lib/Conversion/CMakeFiles/x.dir/Pass.cpp.o",
                      "third_party/triton_shared/include/Passes.h.inc:2:2: error: #error \"GEN_PASS_CLASSES is "
                      "deprecated; use per-pass macros\""])
    assert gen == f"{in_plugin(plug)}{PINNED_TRITON} {needs_that_llvm('GEN_PASS_CLASSES')}"
    triton_api = explain(p, [f"{plug}/lib/A.cpp:1:1: error: no matching function for call to \u2018getFoo()\u2019"])
    assert triton_api == in_plugin(plug) + PINNED_TRITON  # a Triton API: the pin hint alone


def test_a_compiler_killed_for_memory_is_named_with_the_jobs_that_would_fit(tree) -> None:
    p = plan_for(tree(), {"jobs": 8, "link_jobs": 4})  # HOST: 32 GiB
    hint = explain(p, ["g++: fatal error: Killed signal terminated program cc1plus",
                       "FAILED: [code=1] lib/Dialect/TritonGPU/Transforms/CMakeFiles/x.dir/Pipeliner.cpp.o"])
    assert hint == killed("compiler", 4)


def test_a_linker_killed_for_memory_asks_for_one_link_job(tree) -> None:
    p = plan_for(tree(), {"jobs": 8, "link_jobs": 4})
    for line in ("collect2: fatal error: ld terminated with signal 9 [Killed]",
                 "FAILED: [code=137] tritonbuild-stage/triton/_C/libtriton.so"):
        assert explain(p, [line]) == killed("link", 1), line
    assert explain(p, ["error: something else"]) is None


def test_lld_dying_of_a_bus_error_on_a_nearly_full_disk_is_a_full_disk(tree) -> None:
    p = plan_for(tree())
    crash = "collect2: fatal error: ld terminated with signal 7 [Bus error]"  # lld maps its output file
    assert disk_hint(p, crash, free_gib=0.1) == disk_full(p.cmake.build_dir, "0.1 GiB free now; the linker died of a "
                                                          "bus error writing its memory-mapped output, which is how "
                                                          "lld meets a full disk")
    assert disk_hint(p, crash, free_gib=40.0) is None  # plenty of room: some other crash, not explained as disk
    assert disk_hint(p, "ld: final link failed: No space left on device", free_gib=40.0) == disk_full(
        p.cmake.build_dir, "40.0 GiB free now")
