import time

from triton.backends.compiler import BaseBackend, GPUTarget

# A test fixture can turn this on: the stage then never ends for a matmul compiled with the launcher's
# specialisations, as a d8da7c998 wheel on LLVM 22.1.8 hung in remove-layout-conversions (docs/real-trees.md).
HANG_ON_SPECIALISED = @HANG@


class PluginBackend(BaseBackend):
    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "@NAME@"

    def hash(self) -> str:
        return "@NAME@-1"

    def add_stages(self, stages: dict, options: object, language: str) -> None:
        stages["ttir"] = lambda src, metadata: src
        stages["@NAME@"] = self.lower

    def lower(self, src: str, metadata: dict) -> str:
        while HANG_ON_SPECIALISED and "@matmul" in src and "tt.divisibility" in src:
            time.sleep(0.05)
        return f"{src} for @NAME@"

    def native_info(self) -> str:
        from triton._C.libtriton import @NAME@

        return f"{@NAME@.BACKEND}:{@NAME@.VALUE}"
