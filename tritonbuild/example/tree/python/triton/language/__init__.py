"""Language extras of backends are installed as triton.language.extra.<name>.

A stand-in of ``triton.language`` with the names kernels are written with, so that kernels (tritonbuild's
compile-check corpus among them) can be defined: the example tree has no frontend, its kernel bodies never run.
"""


class constexpr:  # noqa: N801 - Triton's spelling
    """Marks a compile-time argument, as ``tl.constexpr`` does."""


class dtype:  # noqa: N801
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"triton.language.{self.name}"


float16, bfloat16, float32, int32 = dtype("fp16"), dtype("bf16"), dtype("fp32"), dtype("i32")


def _frontend_only(name):
    def call(*args, **kwargs):
        raise RuntimeError(f"tl.{name}: the example tree has no Triton frontend; kernels are compiled from their "
                           "signature only")

    call.__name__ = name
    return call


for _name in ("program_id", "arange", "load", "store", "dot", "zeros", "cdiv", "sum", "max", "exp", "split",
              "permute", "reshape", "atomic_add", "atomic_max", "where"):
    globals()[_name] = _frontend_only(_name)
