"""The example tree's triton package (a small stand-in written from the Triton build contract)."""

__version__ = "@VERSION@"

from ._C import libtriton  # noqa: E402  (like Triton, importing triton loads libtriton)



def jit(fn):
    """Like ``triton.jit``: the example keeps the Python function (its signature names the kernel's arguments)."""
    fn.arg_names = list(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    return fn


from .compiler import compile  # noqa: E402,A004

__all__ = ["__version__", "compile", "jit", "libtriton"]
