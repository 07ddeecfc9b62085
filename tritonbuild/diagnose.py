"""Explain build failures the user can act on (pure: a plan and the error lines in, a hint out)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tritonbuild.plan import Plan

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
_MISSING_TARGET = re.compile(
    r"undefined (reference|symbol).*LLVMInitialize(\w+?)(Target|AsmPrinter|TargetInfo|TargetMC)"
)


def explain(plan: Plan, errors: Sequence[str]) -> str | None:
    text = "\n".join(errors)
    m = _MISSING_TARGET.search(text)
    if m:
        return (f"libtriton references LLVM target {m.group(2)}, which the LLVM at {plan.llvm.prefix} was built "
                f"without (it has: {' '.join(plan.llvm.targets_built) or 'unknown'}). Use an LLVM with that target.")
    if plan.llvm.is_pinned is True or not _API_MISMATCH.search(text):
        return None
    return (
        f"The source pins LLVM {plan.llvm.pinned_hash[:12]} but this build uses LLVM {plan.llvm.version or '?'} at "
        f"{plan.llvm.prefix}, which is not that commit; errors like these usually mean an LLVM/MLIR C++ API changed "
        "between the two. Build against the pinned LLVM (`tritonbuild llvm status` shows how: a verified prebuilt "
        "download or `tritonbuild llvm build`), or check out a Triton commit whose cmake/llvm-hash.txt is closer "
        "to this LLVM."
    )
