#include "triton/Core.h"
#include "triton/CoreAttrs.h.inc"
@CORE_INCLUDES@
#include "llvm/ADT/ScopeExit.h"
#include "mlir/IR/MLIRContext.h"

namespace triton {
int coreValue() {
  static_assert(TRITON_CORE_ATTRS == 1, "the generated header");
  int value = 0;
  {
    auto guard = llvm::make_scope_exit([&] { value += 1; });
    value = 41;
  }
  return value;
}

unsigned availableDialects() {
  mlir::MLIRContext context;
  return context.getAvailableDialects().size();
}
} // namespace triton
