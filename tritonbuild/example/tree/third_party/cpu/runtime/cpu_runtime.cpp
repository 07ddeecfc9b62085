// Shape of triton-cpu's runtime: a shared library in triton/_C that every compiled CPU kernel links
// (-lTritonCPURuntime), so the wheel must carry it next to libtriton.
extern "C" __attribute__((visibility("default"))) int triton_cpu_runtime_abi() { return 1; }
