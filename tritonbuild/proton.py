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
    "ROCTRACER_INCLUDE_DIR": "TRITON_ROCTRACER_INCLUDE_PATH (setup.py's default is third_party/amd/backend/include)",
    "JSON_INCLUDE_DIR": "JSON_SYSPATH (Debian: nlohmann-json3-dev)",
}


def required_variables(cmakelists: str) -> tuple[str, ...]:
    """The variables a CMakeLists.txt refuses to configure without (``if(NOT X) message(FATAL_ERROR``)."""
    return tuple(dict.fromkeys(_REQUIRED.findall(cmakelists)))


def roctracer_include(given: str | None, source_root: str) -> str | None:
    """setup.py's ROCTRACER_INCLUDE_DIR: TRITON_ROCTRACER_INCLUDE_PATH, else the amd backend's own headers."""
    if given:
        return given
    default = Path(source_root) / "third_party" / "amd" / "backend" / "include"
    return str(default) if default.is_dir() else None


def preflight(required: tuple[str, ...], defines: Mapping[str, str]) -> None:
    """Fail before configuring when the tree's proton needs a variable the plan does not give."""
    provided = dict(defines)
    if provided.get("TRITONBUILD_CUPTI_FROM_STAGE") == "ON":
        provided["CUPTI_INCLUDE_DIR"] = "<staged>"
    missing = [v for v in required if not provided.get(v)]
    if missing:
        how = "; ".join(f"{v}: set {HOW.get(v, v)}" for v in missing)
        raise UserError(f"This source's third_party/proton/CMakeLists.txt stops configuring without "
                        f"{', '.join(missing)}, and tritonbuild found no value for it ({how}). Or build without "
                        "proton (--no-proton).")
