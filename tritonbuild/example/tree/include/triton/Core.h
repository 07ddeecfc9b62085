#pragma once
#include "triton/CoreOps.h.inc"
namespace triton {
// 42, computed with llvm::make_scope_exit (deprecated by LLVM 22, like Triton's January 2026 sources).
int coreValue();
// How many MLIR dialects a fresh context can load.
unsigned availableDialects();
} // namespace triton
