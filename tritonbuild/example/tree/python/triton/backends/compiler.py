from abc import ABCMeta, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True)
class GPUTarget:
    backend: str
    arch: object
    warp_size: int


class BaseBackend(metaclass=ABCMeta):
    """The interface Triton's compiler drives a backend through (the shape of upstream's, early 2026)."""

    def __init__(self, target: GPUTarget) -> None:
        self.target = target

    @staticmethod
    @abstractmethod
    def supports_target(target: GPUTarget) -> bool: ...

    @abstractmethod
    def hash(self) -> str:
        """A unique identifier of this backend's compiler (part of the kernel cache key)."""

    @abstractmethod
    def add_stages(self, stages: dict, options: object) -> None:
        """Fill ``stages`` (like upstream, the declaration lags behind the call, which passes the language too)."""

    def native_info(self) -> str:
        return ""

    @staticmethod
    def parse_attr(desc):
        """The launcher's specialisation letters as attributes (upstream 3.3+): "D" is divisible by 16."""
        return [["tt.divisibility", 16]] if "D" in desc else []
