// Like mid-2026 upstream's examples/plugins (built with TRITON_EXT_ENABLED): a shared library that links libtriton
// and lands in the package's plugins/ dir. It cannot be a dependency of libtriton (that is a cycle).
#include "triton/Core.h"
extern "C" int tb_example_plugin() { return triton::coreValue(); }
