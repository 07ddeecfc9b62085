#include <cupti.h>
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <roctracer/roctracer.h>
#include <string>

std::string protonRuntimeInfo() {
  nlohmann::json info = {{"cupti", CUPTI_API_VERSION}, {"roctracer", ROCTRACER_VERSION_MAJOR}};
  return info.dump();
}

PYBIND11_MODULE(libproton, m) { m.def("runtime_info", &protonRuntimeInfo); }
