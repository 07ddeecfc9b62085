from triton.backends.compiler import BaseBackend, GPUTarget


class PluginBackend(BaseBackend):
    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "@NAME@"

    def hash(self) -> str:
        return "@NAME@-1"

    def add_stages(self, stages: dict, options: object, language: str) -> None:
        stages["ttir"] = lambda src, metadata: src
        stages["@NAME@"] = lambda src, metadata: f"{src} for @NAME@"

    def native_info(self) -> str:
        from triton._C.libtriton import @NAME@

        return f"{@NAME@.BACKEND}:{@NAME@.VALUE}"
