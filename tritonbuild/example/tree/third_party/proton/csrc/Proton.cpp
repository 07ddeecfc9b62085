#include <cupti.h>
#include <nlohmann/json.hpp>
#include <string>

std::string protonRuntimeInfo() {
  nlohmann::json info = {{"cupti", CUPTI_API_VERSION}};
  return info.dump();
}
