from triton.backends.compiler import BaseBackend, GPUTarget


class PluginBackend(BaseBackend):
    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "@NAME@"

    def native_info(self) -> str:
        from triton._C.libtriton import @NAME@

        return f"{@NAME@.BACKEND}:{@NAME@.VALUE}"
