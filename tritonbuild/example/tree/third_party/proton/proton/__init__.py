"""Proton, installed as triton.profiler."""

PROFILER = "proton"


def runtime_info() -> str:
    from triton._C.libproton import runtime_info as info  # like Triton's profiler

    return info()
