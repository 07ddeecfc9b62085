#include "triton/Core.h"  // like triton-shared, the plugin builds against Triton's headers
#include <pybind11/pybind11.h>

@BROKEN@
void init_triton_@NAME@(pybind11::module &&m) {
  m.attr("BACKEND") = "@NAME@";
  m.attr("VALUE") = 1;
}
