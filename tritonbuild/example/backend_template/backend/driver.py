import os

from triton.backends.driver import DriverBase


class @CLASS@Driver(DriverBase):
    @staticmethod
    def is_active() -> bool:
        return os.environ.get("TRITON_DEFAULT_BACKEND") == "@NAME@"
