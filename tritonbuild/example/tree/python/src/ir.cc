#include "triton/Core.h"
@IR_INCLUDES@
#include "llvm/LTO/LTOBackend.h"
#include <pybind11/pybind11.h>

void init_triton_ir(pybind11::module &&m) {
  m.def("core_value", &triton::coreValue);
  m.def("available_dialects", &triton::availableDialects);
  // Like Triton through lld's ELF linker (amd): LLVM's LTO backend, whose object file references Polly's
  // plugin when the LLVM was built with Polly linked in (Debian's): a static LLVM link then needs libPolly.a.
  m.def("lto_backend_linked", [] { return reinterpret_cast<void *>(&llvm::lto::backend) != nullptr; });
}
