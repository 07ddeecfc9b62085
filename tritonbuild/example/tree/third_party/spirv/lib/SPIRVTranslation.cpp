// LLVM IR -> SPIR-V binary through LLVM's own SPIRV target (Intel's later trees do the same; earlier ones use
// SPIRV-LLVM-Translator). Built with -fno-exceptions like Triton's libraries: errors come back as strings.
#include "spirv_kernel_abi.h"
#ifndef TB_SPIRV_ABI_PATCHED
#error "spirv-kernel-abi is not patched: the spirv backend's CMake applies kernel-abi.patch after fetching it"
#endif

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <optional>
#include <string>

extern "C" void LLVMInitializeSPIRVTargetInfo();
extern "C" void LLVMInitializeSPIRVTarget();
extern "C" void LLVMInitializeSPIRVTargetMC();
extern "C" void LLVMInitializeSPIRVAsmPrinter();

namespace triton::spirv {

bool translateToSPIRV(const std::string &llir, std::string &binary, std::string &error) {
  static const bool initialized = [] {
    LLVMInitializeSPIRVTargetInfo();
    LLVMInitializeSPIRVTarget();
    LLVMInitializeSPIRVTargetMC();
    LLVMInitializeSPIRVAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module =
      llvm::parseIR(llvm::MemoryBufferRef(llir, "llir"), diagnostic, context);
  llvm::raw_string_ostream errors(error);
  if (!module) {
    diagnostic.print("llir", errors);
    return false;
  }
  llvm::Triple triple(TB_SPIRV_KERNEL_TRIPLE);
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return false;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, "", "", llvm::TargetOptions(), std::nullopt));
  module->setTargetTriple(triple);
  module->setDataLayout(machine->createDataLayout());
  llvm::SmallString<0> out;
  llvm::raw_svector_ostream stream(out);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    errors << "the SPIRV target cannot emit an object file";
    return false;
  }
  passes.run(*module);
  binary.assign(out.data(), out.size());
  return true;
}

} // namespace triton::spirv
