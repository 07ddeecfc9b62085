// Like Triton's nvidia driver.c: compiled when a kernel is first launched, against the CUDA headers the wheel
// carries in backends/nvidia/include (setup.py downloads them; the source tree does not have them).
#include "cuda.h"

int tritonbuild_cuda_version(void) { return CUDA_VERSION; }
