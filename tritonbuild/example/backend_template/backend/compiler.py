from triton.backends.compiler import BaseBackend, GPUTarget


class @CLASS@Backend(BaseBackend):
    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "@GPU@"

    def hash(self) -> str:
        return "@NAME@-1"

    def add_stages(self, stages: dict, options: object, language: str) -> None:
        stages["ttir"] = lambda src, metadata: src
        stages["@NAME@"] = lambda src, metadata: f"{src} for @NAME@"
@EXTRA_STAGES@

    def native_info(self) -> str:
        from triton._C.libtriton import @NAME@

        return @NAME@.llvm_target()
