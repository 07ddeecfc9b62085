"""Known source/LLVM incompatibilities, recognised from both sides' text."""

from __future__ import annotations

from tritonbuild.resolve import knownissues as ki

UTILITY = "lib/Dialect/TritonGPU/Transforms/Utility.cpp"
HEADER = "mlir/Interfaces/ControlFlowInterfaces.h"
D8 = "void populateForOpDeadArgumentElimination(RewritePatternSet &patterns) {\n" \
     "  patterns.add<ForOpDeadArgElimination>(patterns.getContext());\n}\n"
LLVM_22_1 = "void populateRegionBranchOpInterfaceCanonicalizationPatterns(RewritePatternSet &patterns, StringRef name);"


def test_the_d8da7c998_source_with_llvm_22_1_is_the_matmul_hang() -> None:
    source = ki.source_markers({UTILITY: D8})
    llvm = ki.llvm_markers({HEADER: LLVM_22_1})
    [issue] = ki.matching(source, llvm)
    assert issue.id == "for-op-dead-arg-ping-pong"
    text = ki.message(issue, "22.1.8 at /usr/lib/llvm-22", compile_check=True)
    assert "MakeRegionBranchOpSuccessorInputsDead" in text and "remove-layout-conversions never ends" in text
    assert "--no-compile-check builds it anyway" in text
    assert "will be published" in ki.message(issue, "22.1.8", compile_check=False)


def test_either_side_alone_is_fine() -> None:
    assert ki.matching(ki.source_markers({UTILITY: D8}), ki.llvm_markers({HEADER: "// LLVM 21"})) == ()
    # upstream since March 2026 (#9136) runs a liveness analysis instead of the pattern
    after = "void runDeadIterArgElimination(Operation *top) {}"
    assert ki.matching(ki.source_markers({UTILITY: after}), ki.llvm_markers({HEADER: LLVM_22_1})) == ()
    assert ki.source_markers({UTILITY: None}) == ()
