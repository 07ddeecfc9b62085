"""Proton, Triton's profiler: what its CMake requires, and the values setup.py gives it (pure).

Real trees' ``third_party/proton/CMakeLists.txt`` stop configuring (``FATAL_ERROR``) unless CUPTI_INCLUDE_DIR,
ROCTRACER_INCLUDE_DIR and JSON_INCLUDE_DIR are set; setup.py passes them (``TRITON_CUPTI_INCLUDE_PATH``,
``TRITON_ROCTRACER_INCLUDE_PATH`` defaulting to the amd backend's in-tree headers, the nlohmann/json dir).
tritonbuild reads which variables the tree requires and checks that the plan gives each one before configuring.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from tritonbuild.errors import UserError

_REQUIRED = re.compile(r"if\s*\(\s*NOT\s+([A-Z][A-Z0-9_]*)\s*\)\s*message\s*\(\s*FATAL_ERROR", re.S)

# How a user supplies each variable, in setup.py's terms.
HOW = {
    "CUPTI_INCLUDE_DIR": "TRITON_CUPTI_INCLUDE_PATH (or CUDA_HOME, or a first online build that fetches CUPTI)",
    "JSON_INCLUDE_DIR": "JSON_SYSPATH (Debian: nlohmann-json3-dev)",
}

# Header dirs setup.py passes to proton's CMake: the setting (its TRITON_*_PATH environment variable) and the
# in-tree default setup.py falls back to (mid-2026 trees add ROCM_INCLUDE_DIR and Intel's XPUPTI_INCLUDE_DIR).
INCLUDE_DIRS = {
    "ROCTRACER_INCLUDE_DIR": ("roctracer_include", "TRITON_ROCTRACER_INCLUDE_PATH", "third_party/amd/backend/include"),
    "ROCM_INCLUDE_DIR": ("rocm_include", "TRITON_ROCM_INCLUDE_PATH", "third_party/amd/backend/include"),
    "XPUPTI_INCLUDE_DIR": ("xpupti_include", "TRITON_XPUPTI_INCLUDE_PATH",
                           "third_party/intel/backend/proton/include"),
}
_DEFINE = re.compile(r"-D([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z]+)?=(.*)")


def include_dirs(given: Mapping[str, str | None], source_root: str, required: tuple[str, ...],
                 present: tuple[str, ...]) -> dict[str, str]:
    """setup.py's values for proton's header dirs: each setting's value (``given``: setting name -> value), else
    the in-tree default when the source has it (``present``: the defaults found, relative to the source root).
    ROCTRACER_INCLUDE_DIR always (every proton needs it); the others when the tree's proton CMakeLists requires
    them."""
    out = {}
    for var, (setting, _env, default) in INCLUDE_DIRS.items():
        if var != "ROCTRACER_INCLUDE_DIR" and var not in required:
            continue
        value = given.get(setting) or (str(Path(source_root) / default) if default in present else None)
        if value:
            out[var] = value
    return out


def cmake_arg_defines(args: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The cache variables ``-DNAME[:TYPE]=VALUE`` arguments given to CMake define."""
    return {m.group(1): m.group(2) for a in args if (m := _DEFINE.fullmatch(str(a)))}


def required_variables(cmakelists: str) -> tuple[str, ...]:
    """The variables a CMakeLists.txt refuses to configure without (``if(NOT X) message(FATAL_ERROR``)."""
    return tuple(dict.fromkeys(_REQUIRED.findall(cmakelists)))


def preflight(required: tuple[str, ...], defines: Mapping[str, str],
              cmake_args: list[str] | tuple[str, ...] = ()) -> None:
    """Fail before configuring when the tree's proton needs a variable neither the plan nor the user's own
    ``--cmake-arg -DNAME=...`` gives."""
    provided = {**dict(defines), **cmake_arg_defines(cmake_args)}
    if provided.get("TRITONBUILD_CUPTI_FROM_STAGE") == "ON":
        provided["CUPTI_INCLUDE_DIR"] = "<staged>"
    missing = [v for v in required if not provided.get(v)]
    if missing:
        how = "; ".join(f"{v}: set {_how(v)}" for v in missing)
        raise UserError(f"This source's third_party/proton/CMakeLists.txt stops configuring without "
                        f"{', '.join(missing)}, and tritonbuild found no value for it ({how}). Or build without "
                        "proton (--no-proton).")


def _how(var: str) -> str:
    if var in INCLUDE_DIRS:
        _setting, env, default = INCLUDE_DIRS[var]
        return f"{env} or --cmake-arg -D{var}=DIR (setup.py's default, {default}, is not in this tree)"
    return HOW.get(var, f"--cmake-arg -D{var}=...")
