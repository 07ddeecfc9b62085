#include "triton/Core.h"
@IR_INCLUDES@
#include <pybind11/pybind11.h>

void init_triton_ir(pybind11::module &&m) {
  m.def("core_value", &triton::coreValue);
  m.def("available_dialects", &triton::availableDialects);
}
