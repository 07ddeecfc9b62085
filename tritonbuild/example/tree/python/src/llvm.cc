// Shaped like Triton's python/src/llvm.cc: the bindings' LLVM glue, whose own body calls LLVM's API directly.
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"
#include <pybind11/pybind11.h>
#include <utility>

void init_triton_llvm(pybind11::module &&m) {
  // LLVM 19.1 made getHostCPUFeatures() return the map it filled before (triton-cpu's 2024 llvm.cc calls it the old
  // way); unevaluated, so the module needs no more of LLVM at link time. old_host_features writes the old call,
  // an error only in this body (ir.cc includes the same headers): what the canary must still find.
  m.def("host_features_size", [] { return sizeof(decltype(llvm::sys::getHostCPUFeatures())); });
}
