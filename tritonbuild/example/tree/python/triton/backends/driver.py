from abc import ABCMeta, abstractmethod


class DriverBase(metaclass=ABCMeta):
    @staticmethod
    @abstractmethod
    def is_active() -> bool: ...
