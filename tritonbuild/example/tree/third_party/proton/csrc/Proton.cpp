#include <cupti.h>
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <string>

// Like Triton's proton, each profiler's file keeps file-local helpers under the same names: joined into one
// unity translation unit they clash (redefinition), so a unity build must compile this target file by file.
namespace {
int versionOf() { return CUPTI_API_VERSION; }
} // namespace

int roctracerVersion(); // RoctracerProfiler.cpp

std::string protonRuntimeInfo() {
  nlohmann::json info = {{"cupti", versionOf()}, {"roctracer", roctracerVersion()}};
  return info.dump();
}

PYBIND11_MODULE(libproton, m) { m.def("runtime_info", &protonRuntimeInfo); }
