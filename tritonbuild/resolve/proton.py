"""Proton, Triton's profiler: what its CMake requires, and the values setup.py gives it (pure).

Real trees' ``third_party/proton/CMakeLists.txt`` stop configuring (``FATAL_ERROR``) unless CUPTI_INCLUDE_DIR,
ROCTRACER_INCLUDE_DIR and JSON_INCLUDE_DIR are set; setup.py passes them (``TRITON_CUPTI_INCLUDE_PATH``,
``TRITON_ROCTRACER_INCLUDE_PATH`` defaulting to the amd backend's in-tree headers, the nlohmann/json dir);
mid-2026 setup.py adds ROCM_INCLUDE_DIR and Intel's XPUPTI_INCLUDE_DIR. tritonbuild reads from the tree's setup.py
which variables it passes, from which environment variables and with which in-tree defaults, reads which variables
proton's CMake requires, and checks that the plan gives each one before configuring.
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

# Header dirs setup.py passes to proton's CMake, as (variable, environment variable, in-tree default or ""), read
# from the tree's setup.py (``setup_dirs``); this is what 2024-2026 setup.py passed when it cannot be read.
FALLBACK_DIRS = (("ROCTRACER_INCLUDE_DIR", "TRITON_ROCTRACER_INCLUDE_PATH", "third_party/amd/backend/include"),)
_FUNCTION = re.compile(r"\n([ \t]*)def get_proton_cmake_args\(.*?(?=\n\1def |\n\S|\Z)", re.S)
_FROM_ENV = re.compile(r"(\w+)\s*=\s*get_env_with_keys\(\s*\[\s*[\"'](\w+)[\"']")
_DEFAULT = re.compile(r"(\w+)\s*=\s*os\.path\.join\(\s*get_base_dir\(\)\s*,([^)]*)\)")
_PASSED = re.compile(r"[\"']-D(\w+)=[\"']\s*\+\s*(\w+)")
_DEFINE = re.compile(r"-D([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z]+)?=(.*)")
_STAGED = ("CUPTI_INCLUDE_DIR",)  # from the CUDA toolkit or the staged NVIDIA parts (tritonbuild.nvidia)


def setup_dirs(setup_py: str) -> tuple[tuple[str, str, str], ...]:
    """What ``get_proton_cmake_args`` in a tree's setup.py passes: each ``-DVAR=`` given from an environment
    variable (``get_env_with_keys``), with its ``os.path.join(get_base_dir(), ...)`` default. Empty when the
    function is not there."""
    m = _FUNCTION.search(setup_py)
    if not m:
        return ()
    body = m.group(0)
    envs = dict(_FROM_ENV.findall(body))
    defaults = {name: "/".join(re.findall(r"[\"']([^\"']+)[\"']", parts)) for name, parts in _DEFAULT.findall(body)}
    return tuple((var, envs[name], defaults.get(name, "")) for var, name in _PASSED.findall(body)
                 if name in envs and var not in _STAGED)


def include_dirs(given: Mapping[str, str | None], source_root: str, dirs: tuple[tuple[str, str, str], ...],
                 present: tuple[str, ...]) -> dict[str, str]:
    """setup.py's values for proton's header dirs (``dirs``, from ``setup_dirs``): the environment variable's value
    (``given``: environment variable -> value), else the in-tree default when the source has it (``present``: the
    defaults found, relative to the source root); a dir with neither is not passed, as setup.py does."""
    out = {}
    for var, env, default in dirs:
        value = given.get(env) or (str(Path(source_root) / default) if default and default in present else None)
        if value:
            out[var] = value
    return out


def cmake_arg_defines(args: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The cache variables ``-DNAME[:TYPE]=VALUE`` arguments given to CMake define."""
    return {m.group(1): m.group(2) for a in args if (m := _DEFINE.fullmatch(str(a)))}


def required_variables(cmakelists: str) -> tuple[str, ...]:
    """The variables a CMakeLists.txt refuses to configure without (``if(NOT X) message(FATAL_ERROR``)."""
    return tuple(dict.fromkeys(_REQUIRED.findall(cmakelists)))


def preflight(required: tuple[str, ...], defines: Mapping[str, str], cmake_args: list[str] | tuple[str, ...] = (),
              dirs: tuple[tuple[str, str, str], ...] = FALLBACK_DIRS) -> None:
    """Fail before configuring when the tree's proton needs a variable neither the plan nor the user's own
    ``--cmake-arg -DNAME=...`` gives."""
    provided = {**dict(defines), **cmake_arg_defines(cmake_args)}
    if provided.get("TRITONBUILD_CUPTI_FROM_STAGE") == "ON":
        provided["CUPTI_INCLUDE_DIR"] = "<staged>"
    missing = [v for v in required if not provided.get(v)]
    if missing:
        how = "; ".join(f"{v}: set {_how(v, dirs)}" for v in missing)
        raise UserError(f"This source's third_party/proton/CMakeLists.txt stops configuring without "
                        f"{', '.join(missing)}, and tritonbuild found no value for it ({how}). Or build without "
                        "proton (--no-proton).")


def _how(var: str, dirs: tuple[tuple[str, str, str], ...]) -> str:
    for name, env, default in dirs:
        if name == var:
            where = f"setup.py's default, {default}, is not in this tree" if default else "setup.py has no default"
            return f"{env} or --cmake-arg -D{var}=DIR ({where})"
    return HOW.get(var, f"--cmake-arg -D{var}=...")
