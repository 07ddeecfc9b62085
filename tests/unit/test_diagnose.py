from __future__ import annotations

import dataclasses

from tests.unit.test_resolve import llvm, plan_for
from tritonbuild.diagnose import explain

OVERRIDE = ("AxisInfo.cpp:147:8: error: 'void AxisInfoAnalysis::visitNonControlFlowArguments(...)' marked "
            "'override', but does not override")


def test_api_mismatch_against_a_non_pinned_llvm_is_explained(tree) -> None:
    p = plan_for(tree())
    hint = explain(p, [OVERRIDE])
    assert hint is not None and "pins LLVM 2eb709b95d8f" in hint and "22.1.8" in hint


def test_no_hint_for_a_pinned_llvm_or_an_ordinary_error(tree) -> None:
    pinned = plan_for(tree("a"), system=(llvm(revision="2eb709b95d8f521aa15401e159fac0729d56a677"),))
    assert explain(pinned, [OVERRIDE]) is None
    assert explain(plan_for(tree("b")), ["Plugin.cpp:3:2: error: #error this plugin is broken"]) is None


def test_missing_llvm_target_is_named(tree) -> None:
    p = plan_for(tree())
    p = dataclasses.replace(p, llvm=dataclasses.replace(p.llvm, targets_built=("X86",)))
    hint = explain(p, ["libtriton.so: undefined reference to `LLVMInitializeNVPTXTargetInfo'"])
    assert hint is not None and "target NVPTX" in hint and "(it has: X86)" in hint


def test_abstract_class_after_an_api_change_is_explained(tree) -> None:
    line = ("DataFlowFramework.h:714:30: error: invalid new-expression of abstract class type "
            "'mlir::triton::gpu::TaskIdBackwardPropagation'")
    assert explain(plan_for(tree()), [line]) is not None
