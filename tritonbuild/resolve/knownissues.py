"""Known incompatibilities between a Triton source and an LLVM, recognised from both sides' text (pure).

Each entry names a line the source holds and a declaration the LLVM's headers hold; when both are there, the
pair is known not to work, and the plan says so before an hour-long build (the compile check would find it after).
Found on real trees and recorded with the evidence in docs/real-trees.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownIssue:
    id: str
    source_file: str  # relative to the source root
    source_marker: str  # present: the source has the susceptible code
    source_also: tuple[str, ...]  # all present too (the part of that code the LLVM undoes); () when not needed
    llvm_header: str  # relative to the LLVM prefix's include/
    llvm_marker: str  # present: the LLVM has the behaviour that breaks it
    what: str
    fix: str
    source_lacks: str = ""  # absent too (the override the LLVM now requires); "" when not needed
    fails: str = "run"  # "compile": the build fails to compile (refused whatever the compile check); "run": it hangs


ISSUES: tuple[KnownIssue, ...] = (
    KnownIssue(
        id="for-op-dead-arg-ping-pong",
        source_file="lib/Dialect/TritonGPU/Transforms/Utility.cpp",
        source_marker="patterns.add<ForOpDeadArgElimination>",
        # the rewrite MLIR undoes: a dead iter arg whose yield is its own init, marked dead and yielded as the arg.
        # Upstream 986729e0c (#9249, January 2026) replaces the arg's uses with its init instead of yielding the arg:
        # that rewrite MLIR does not undo, so the pair is the hang only while the yield-the-arg rewrite is there.
        source_also=("yieldOperand.value() != forOp.getInitArgs()[yieldOperand.index()]",
                     "yieldOp.setOperand(deadArgIdx, arg)"),
        llvm_header="mlir/Interfaces/ControlFlowInterfaces.h",
        llvm_marker="populateRegionBranchOpInterfaceCanonicalizationPatterns",
        what=("this source adds its ForOpDeadArgElimination pattern to scf.for's canonicalization patterns, and "
              "this LLVM's scf.for canonicalization includes the RegionBranchOpInterface patterns (llvm-project "
              "#174094, in LLVM 22.1), whose MakeRegionBranchOpSuccessorInputsDead undoes that pattern's rewrite: "
              "tritongpu-remove-layout-conversions never ends on common kernels (a specialised fp16 matmul, the "
              "tree's own test/TritonGPU/combine.mlir)"),
        fix=("build against the source's pinned LLVM, or use a Triton from 19 January 2026 on (upstream 986729e0c, "
             "#9249, replaces the dead argument's uses with its init instead of yielding the argument; #9136 in March "
             "replaced the pattern with a liveness analysis). A local fix that was measured to match the official "
             "wheel (docs/real-trees.md, d8da7c998 on an H100: shared memory of all 28 warp-specialized matmuls equal "
             "to the official 3.6.0's, test_warp_specialization and test_matmul as the official): keep the pattern, "
             "but in ForOpDeadArgElimination leave a yield of a value defined outside the loop (its init included) to "
             "MLIR, i.e. drop the `&& yieldOperand.value() != forOp.getInitArgs()[...]` special case. Do NOT make "
             "populateForOpDeadArgumentElimination add nothing: that wheel leaves a dead loop-carried buffer in every "
             "warp-specialized loop (one pipeline stage more shared memory), and on an H100 12 of Triton's "
             "warp-specialization tests raised OutOfResources and 6 computed NaN"),
    ),
    KnownIssue(
        id="task-id-backward-pure-virtual",
        source_file="third_party/nvidia/hopper/lib/Transforms/WarpSpecialization/TaskIdPropagation.h",
        source_marker="class TaskIdBackwardPropagation",
        source_also=("SparseBackwardDataFlowAnalysis",),
        source_lacks="visitNonControlFlowArguments",
        llvm_header="mlir/Analysis/DataFlow/SparseAnalysis.h",
        llvm_marker="ArrayRef<BlockArgument> arguments) = 0;",
        what=("this source's TaskIdBackwardPropagation (nvidia's warp specialization) derives from MLIR's "
              "SparseBackwardDataFlowAnalysis without a visitNonControlFlowArguments(RegionSuccessor &, "
              "ArrayRef<BlockArgument>), which this LLVM made pure virtual: WSTaskIdPropagate.cpp's "
              "solver.load<TaskIdBackwardPropagation> fails to compile (invalid new-expression of abstract class "
              "type); a compile of the header alone does not show it"),
        fix=("build against the source's pinned LLVM, or add to the class `void visitNonControlFlowArguments("
             "RegionSuccessor &successor, ArrayRef<BlockArgument> arguments) override {}` (a backward analysis "
             "has nothing to propagate into non-forwarded arguments: the tree's later upstream commits do this)"),
        fails="compile",
    ),
    KnownIssue(
        id="host-cpu-features-returns-map",
        source_file="python/src/llvm.cc",
        source_marker="llvm::sys::getHostCPUFeatures(features)",
        source_also=(),
        llvm_header="llvm/TargetParser/Host.h",
        llvm_marker="StringMap<bool, MallocAllocator> getHostCPUFeatures();",
        what=("this source's python/src/llvm.cc calls llvm::sys::getHostCPUFeatures(features) with a map to fill, "
              "and this LLVM's getHostCPUFeatures() takes no argument and returns the map (LLVM 19.1): llvm.cc "
              "fails to compile; its headers compile, so the canary's header cover does not show it (triton-cpu "
              "637ed8b0d on LLVM 19.1.7: the canary said everything compiles)"),
        fix=("build against the source's pinned LLVM, or patch the call to `features = "
             "llvm::sys::getHostCPUFeatures();` (the one line triton-cpu's later commits have; docs/real-trees.md)"),
        fails="compile",
    ),
)


def source_markers(read: Mapping[str, str | None]) -> tuple[str, ...]:
    """The ids of the issues whose source side ``read`` (source file -> its text, None when absent) shows."""
    return tuple(i.id for i in ISSUES if i.source_marker in (text := read.get(i.source_file) or "")
                 and all(also in text for also in i.source_also) and not (i.source_lacks and i.source_lacks in text))


def llvm_markers(read: Mapping[str, str | None]) -> tuple[str, ...]:
    """The ids of the issues whose LLVM side ``read`` (header -> its text, None when absent) shows."""
    return tuple(i.id for i in ISSUES if i.llvm_marker in (read.get(i.llvm_header) or ""))


def matching(source_ids: tuple[str, ...], llvm_ids: tuple[str, ...]) -> tuple[KnownIssue, ...]:
    return tuple(i for i in ISSUES if i.id in source_ids and i.id in llvm_ids)


def message(issue: KnownIssue, llvm: str, compile_check: bool) -> str:
    verdict = ("The compile check would fail after the whole build, so the plan stops here; --no-compile-check "
               "builds it anyway." if compile_check else "The compile check is off: the wheel will be published.")
    if issue.fails == "compile":
        verdict = "The build would fail to compile, so the plan stops here."
    return f"Known problem with LLVM {llvm} ({issue.id}): {issue.what}. Fix: {issue.fix}. {verdict}"
