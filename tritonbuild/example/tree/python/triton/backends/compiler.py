from abc import ABCMeta, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class GPUTarget:
    backend: str
    arch: object
    warp_size: int


class BaseBackend(metaclass=ABCMeta):
    def __init__(self, target: GPUTarget) -> None:
        self.target = target

    @staticmethod
    @abstractmethod
    def supports_target(target: GPUTarget) -> bool: ...
