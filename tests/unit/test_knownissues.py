"""Known source/LLVM incompatibilities, recognised from both sides' text."""

from __future__ import annotations

from tritonbuild.resolve import knownissues as ki

UTILITY = "lib/Dialect/TritonGPU/Transforms/Utility.cpp"
HEADER = "mlir/Interfaces/ControlFlowInterfaces.h"
# d8da7c998's Utility.cpp, in short: the pattern, its special case for a yield of the loop's own init (the rewrite
# LLVM 22.1's region-branch patterns undo), and the function that adds it
D8_SPECIAL = "      if (!forOp->isAncestor(yieldOperand.value().getParentRegion()->getParentOp()) &&\n" \
             "          yieldOperand.value() != forOp.getInitArgs()[yieldOperand.index()])\n        continue;\n"
# the rewrite MLIR undoes: the dead argument yielded as itself
D8_REWRITE = "        yieldOp.setOperand(deadArgIdx, arg);\n"
D8 = D8_SPECIAL + D8_REWRITE + "void populateForOpDeadArgumentElimination(RewritePatternSet &patterns) {\n" \
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


def test_upstreams_own_fix_of_january_2026_is_not_the_hang() -> None:
    """986729e0c (#9249) keeps the special case but replaces the dead argument's uses with its init instead of
    yielding the argument, which MLIR's region-branch patterns do not undo: 50b2f739a (after that fix) on LLVM 22.1.8
    with the two API fixes built, passed the compile check (66 of 66, the warp-specialized matmuls too) and, on an
    H100, test_warp_specialization and test_matmul as the official wheel (docs/real-trees.md). The plan refused it."""
    upstream = D8.replace(D8_REWRITE, "        rewriter.replaceAllUsesWith(arg, forOp.getTiedLoopInit(arg)->get());\n")
    assert "getInitArgs()[yieldOperand.index()]" in upstream and "setOperand" not in upstream
    assert ki.matching(ki.source_markers({UTILITY: upstream}), ki.llvm_markers({HEADER: LLVM_22_1})) == ()


def test_the_local_fix_that_keeps_the_pattern_without_the_init_special_case_is_not_the_hang() -> None:
    """The fix measured on an H100 (docs/real-trees.md): the pattern stays, a yield of a value from outside the loop
    is left to MLIR. The empty-populate experiment is no hang either, but the fix text warns against it."""
    kept = D8.replace("&&\n          yieldOperand.value() != forOp.getInitArgs()[yieldOperand.index()])", ")")
    assert "patterns.add<ForOpDeadArgElimination>" in kept and "getInitArgs" not in kept
    assert ki.matching(ki.source_markers({UTILITY: kept}), ki.llvm_markers({HEADER: LLVM_22_1})) == ()
    issue = next(i for i in ki.ISSUES if i.id == "for-op-dead-arg-ping-pong")
    assert "Do NOT make populateForOpDeadArgumentElimination add nothing" in issue.fix
    assert "OutOfResources" in issue.fix and "NaN" in issue.fix


TASK_ID = "third_party/nvidia/hopper/lib/Transforms/WarpSpecialization/TaskIdPropagation.h"
SPARSE = "mlir/Analysis/DataFlow/SparseAnalysis.h"
D8_TASK_ID = ("class TaskIdBackwardPropagation\n"
              "    : public dataflow::SparseBackwardDataFlowAnalysis<TaskIdLattice> {\n"
              "  void visitBranchOperand(OpOperand &operand) override;\n};\n")
LLVM_22_1_SPARSE = ("  virtual void\n  visitNonControlFlowArguments(RegionSuccessor &successor,\n"
                    "                               ArrayRef<BlockArgument> arguments) = 0;\n")


def test_d8da7c998s_backward_task_id_analysis_lacks_llvm_22_1s_new_pure_virtual() -> None:
    """Found by the full build, missed by the canary (the header compiles; only the unit that instantiates the class
    fails): the pair is recognised at plan time, and it refuses whatever the compile check (it fails the compile)."""
    [issue] = ki.matching(ki.source_markers({TASK_ID: D8_TASK_ID}), ki.llvm_markers({SPARSE: LLVM_22_1_SPARSE}))
    assert issue.id == "task-id-backward-pure-virtual" and issue.fails == "compile"
    for check in (True, False):
        text = ki.message(issue, "22.1.8", compile_check=check)
        assert text.endswith("The build would fail to compile, so the plan stops here.")
    fixed = D8_TASK_ID.replace("};", "  void visitNonControlFlowArguments(RegionSuccessor &successor,\n"
                                     "      ArrayRef<BlockArgument> arguments) override {}\n};")
    assert ki.source_markers({TASK_ID: fixed}) == ()
    assert ki.llvm_markers({SPARSE: "virtual void visitNonControlFlowArguments(Operation *op) {}"}) == ()


def test_triton_cpus_host_features_call_with_llvm_19_is_a_compile_failure_found_at_plan_time() -> None:
    """triton-cpu 637ed8b0d (2024) on LLVM 19.1.7: the canary's header cover compiled everything, and the build
    failed in llvm.cc's body, which fills a map LLVM 19.1 now returns."""
    llvm_cc = "    llvm::StringMap<bool> features;\n    llvm::sys::getHostCPUFeatures(features);\n"
    llvm_19 = "  const StringMap<bool, MallocAllocator> getHostCPUFeatures();\n"
    llvm_22 = "LLVM_ABI StringMap<bool, MallocAllocator> getHostCPUFeatures();\n"
    llvm_18 = "  bool getHostCPUFeatures(StringMap<bool, MallocAllocator> &Features);\n"
    source = ki.source_markers({"python/src/llvm.cc": llvm_cc})
    for header in (llvm_19, llvm_22):
        [issue] = ki.matching(source, ki.llvm_markers({"llvm/TargetParser/Host.h": header}))
        assert issue.id == "host-cpu-features-returns-map" and issue.fails == "compile"
    assert ki.matching(source, ki.llvm_markers({"llvm/TargetParser/Host.h": llvm_18})) == ()
    fixed = "    auto features = llvm::sys::getHostCPUFeatures();\n"
    assert ki.source_markers({"python/src/llvm.cc": fixed}) == ()
