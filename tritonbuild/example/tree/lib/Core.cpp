#include "triton/Core.h"
@CORE_INCLUDES@
#include "llvm/ADT/ScopeExit.h"
#include "mlir/IR/MLIRContext.h"

namespace triton {
int coreValue() {
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
