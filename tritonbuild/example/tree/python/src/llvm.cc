// Shaped like Triton's python/src/llvm.cc: the bindings' LLVM glue, whose own body calls LLVM's API directly
// (registered by ir.cc; no pybind11 here, so the example's builds stay quick).
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include <cstddef>
#include <utility>

// LLVM 19.1 made getHostCPUFeatures() return the map it filled before (triton-cpu's 2024 llvm.cc calls it the old
// way); unevaluated, so the module needs no more of LLVM at link time. old_host_features writes the old call, an
// error only in this body (ir.cc includes the same headers): what the canary must still find.
std::size_t hostFeaturesSize() { return sizeof(decltype(llvm::sys::getHostCPUFeatures())); }
