// TableGen definitions of the example tree's core "dialect" (shaped like Triton's include/triton/**/*.td; the
// build turns it into CoreOps.h.inc in the build dir, as mlir-tblgen turns Triton's into *.h.inc).
def Triton_CoreValue;
