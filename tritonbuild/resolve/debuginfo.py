"""The debug-info lever (pure): which -g level a build compiles with.

Measured on upstream d8da7c998's three largest translation units (bench/bench_levers.py, gcc 12, -O2): 162.0 s
with the build type's ``-g``, 113.7 s with ``-g1`` (1.43x), 111.5 s with ``-g0``. Line tables keep file:line in
backtraces and profiles; ``--debug-info full`` brings back variables and types for a debugger.
"""

from __future__ import annotations

from tritonbuild.errors import UserError

LEVELS = ("auto", "lines", "full", "none", "tree")
WITH_G = ("TritonRelBuildWithAsserts", "Debug", "RelWithDebInfo")  # build types whose flags have -g


def choose(value: str, origin: str, build_type: str) -> str:
    if value not in LEVELS:
        raise UserError(f"--debug-info {value!r} ({origin}) is not one of {', '.join(LEVELS)}. lines (-g1) is the "
                        "default for -g build types, full is setup.py's -g, none is -g0, tree leaves the flags "
                        "alone.")
    if value == "auto":
        return "lines" if build_type in WITH_G else "tree"
    return value
