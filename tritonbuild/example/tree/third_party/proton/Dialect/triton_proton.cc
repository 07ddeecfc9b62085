#include <pybind11/pybind11.h>

void init_triton_proton(pybind11::module &&m) { m.attr("BACKEND") = "proton"; }
