"""The debug-info lever (pure): which -g level a build compiles with.

Measured on upstream d8da7c998's three largest translation units (bench/bench_levers.py, gcc 12, -O2): 162.0 s
with the build type's ``-g``, 113.7 s with ``-g1`` (1.43x), 111.5 s with ``-g0``. Line tables keep file:line in
backtraces and profiles; ``--debug-info full`` brings back variables and types for a debugger.
"""

from __future__ import annotations

from tritonbuild.settings.model import BuildType, DebugInfo

WITH_G: tuple[BuildType, ...] = ("TritonRelBuildWithAsserts", "Debug", "RelWithDebInfo")  # their flags have -g


def choose(value: DebugInfo, build_type: BuildType) -> str:
    """The level (``lines``, ``full``, ``none`` or ``tree``); the words are the setting's
    (``settings.model.DebugInfo``), checked where the setting is resolved."""
    if value == "auto":
        return "lines" if build_type in WITH_G else "tree"
    return value
