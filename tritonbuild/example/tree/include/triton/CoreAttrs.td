// The example's build-time generated header (copied to CoreAttrs.h.inc by lib/CMakeLists.txt, as mlir-tblgen writes one).
#define TRITON_CORE_ATTRS 1
