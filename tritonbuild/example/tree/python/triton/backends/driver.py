from abc import ABCMeta, abstractmethod


class DriverBase(metaclass=ABCMeta):
    @staticmethod
    @abstractmethod
    def is_active() -> bool: ...

    @abstractmethod
    def get_current_target(self):
        """The target this machine compiles for (upstream's drivers answer from the device)."""
