#include "llvm/IR/LLVMContext.h"

extern "C" int tritonbuild_instrumentation_abi() {
  llvm::LLVMContext context;
  return 1;
}
