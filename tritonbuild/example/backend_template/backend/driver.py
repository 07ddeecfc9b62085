import os

from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase


class @CLASS@Driver(DriverBase):
    @staticmethod
    def is_active() -> bool:
        return os.environ.get("TRITON_DEFAULT_BACKEND") == "@NAME@"

    def get_current_target(self) -> GPUTarget:
        """The target of this machine (a CPU-side backend answers without a device, as triton-cpu's does)."""
        return GPUTarget("@GPU@", "example", 1)
