#include "triton/Core.h"
@IR_INCLUDES@
#include "llvm/LTO/LTOBackend.h"
#include "llvm/TargetParser/Host.h"
#include <pybind11/pybind11.h>
#include <string>
#include <vector>

std::size_t hostFeaturesSize();  // python/src/llvm.cc

namespace {
// Shaped like Triton's pass_manager binding: backends drive their stages through it, and its signature moves
// (run(mod) until 2025, run(mod, repro_pipeline_tag) since d8da7c998's time); tritonbuild's API check reads the
// lambda's parameters from here and flags a backend that calls it the old way.
struct PassManager {
  std::vector<std::string> ran;
};
} // namespace

void init_triton_ir(pybind11::module &&m) {
  m.def("core_value", &triton::coreValue);
  m.def("available_dialects", &triton::availableDialects);
  m.def("host_features_size", &hostFeaturesSize);
  // Like Triton through lld's ELF linker (amd): LLVM's LTO backend, whose object file references Polly's
  // plugin when the LLVM was built with Polly linked in (Debian's): a static LLVM link then needs libPolly.a.
  m.def("lto_backend_linked", [] { return reinterpret_cast<void *>(&llvm::lto::backend) != nullptr; });
  pybind11::class_<PassManager>(m, "pass_manager")
      .def(pybind11::init<>())
      .def("run", [](PassManager &self, std::string mod, std::string repro_pipeline_tag) {
        self.ran.push_back(repro_pipeline_tag);
        return mod;
      });
}
