"""The example tree's triton package (a small stand-in written from the Triton build contract)."""

__version__ = "@VERSION@"

from ._C import libtriton  # noqa: E402  (like Triton, importing triton loads libtriton)

__all__ = ["__version__", "libtriton"]
