from triton.backends.compiler import BaseBackend, GPUTarget


class @CLASS@Backend(BaseBackend):
    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "@GPU@"

    def native_info(self) -> str:
        from triton._C.libtriton import @NAME@

        return @NAME@.llvm_target()
