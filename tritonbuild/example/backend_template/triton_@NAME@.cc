#include "llvm/MC/TargetRegistry.h"
#include <pybind11/pybind11.h>
#include <string>

// Defined by the LLVM target's Info library: an undefined symbol here means LLVM lacks the target.
extern "C" void TB_INIT();
@EXTRA_DECL@

namespace {
std::string describeTarget() {
  TB_INIT();
  for (const llvm::Target &target : llvm::TargetRegistry::targets())
    if (std::string(target.getName()) == TB_LOOKUP)
      return target.getShortDescription();
  return "missing";
}
} // namespace

void init_triton_@NAME@(pybind11::module &&m) {
  m.attr("BACKEND") = "@NAME@";
  m.attr("VALUE") = 1;
  m.def("llvm_target", &describeTarget);
@EXTRA_INIT@
}
