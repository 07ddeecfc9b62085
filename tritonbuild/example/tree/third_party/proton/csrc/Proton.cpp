#include <cupti.h>
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <string>

std::string protonRuntimeInfo() {
  nlohmann::json info = {{"cupti", CUPTI_API_VERSION}};
  return info.dump();
}

PYBIND11_MODULE(libproton, m) { m.def("runtime_info", &protonRuntimeInfo); }
