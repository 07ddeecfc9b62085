from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase


class PluginDriver(DriverBase):
    @staticmethod
    def is_active() -> bool:
        # Like triton-shared's CPU driver: never active by itself, users call driver.set_active().
        return False

    def get_current_target(self) -> GPUTarget:
        """The target of this machine (a CPU-side backend answers without a device, as triton-cpu's does)."""
        return GPUTarget("@NAME@", "example", 1)
