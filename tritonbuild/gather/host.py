"""Facts about this host (edge: reads /proc, runs ``--version`` commands). Resolvers take them as input."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import platform
import shutil
import sys
import sysconfig
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.gather import pythons
from tritonbuild.resolve.facts import HostFacts, PythonFacts
from tritonbuild.system import probememo
from tritonbuild.system.proc import run, tool

TOOLS = ("cmake", "ninja", "ccache", "sccache", "distcc", "gcc", "g++", "cc", "c++", "clang", "clang++", "ld.lld",
         "lld", "ld.gold", "git", "ptxas")


def _meminfo() -> tuple[float, float]:
    total = avail = 0.0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            kib = float(rest.split()[0]) if rest.split() else 0.0
            if key == "MemTotal":
                total = kib / 1024 / 1024
            elif key == "MemAvailable":
                avail = kib / 1024 / 1024
    except OSError:
        pass
    return total, avail


def _os_release() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            k, _, v = line.partition("=")
            if k:
                out[k] = v.strip().strip('"')
    except OSError:
        pass
    return out


def _which_versioned(name: str) -> str | None:
    """``clang`` or the newest ``clang-NN`` on PATH or under /usr/lib/llvm-NN/bin."""
    found = shutil.which(name)
    if found:
        return found
    for version in range(30, 13, -1):
        found = shutil.which(f"{name}-{version}") or shutil.which(name, path=f"/usr/lib/llvm-{version}/bin")
        if found:
            return found
    return None


@functools.cache
def tool_version(path: str | None) -> str | None:
    """The first line ``PATH --version`` prints (cached: a build asks for the compiler's more than once; and
    remembered, ``probememo`` kind ``compiler``, under the stat of the program: a no-op build runs no compiler)."""
    if not path:
        return None
    key = {"files": probememo.files_key([path])}
    memo = probememo.recall("compiler", key, _version_line)
    if memo is not None:
        return str(memo)
    out = run([path, "--version"], timeout=30)
    if out.returncode in (124, 127):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    if lines and _version_line(lines[0]):
        probememo.remember("compiler", key, lines[0])
    return lines[0] if lines else None


def _version_line(value: object) -> bool:
    """A first line of ``--version`` worth remembering (and a remembered one worth using): short printable text."""
    return isinstance(value, str) and 0 < len(value) <= 300 and value.isprintable()


def pybind11_dir(target: PythonFacts | None) -> str | None:
    """pybind11's CMake dir from the target interpreter, else from tritonbuild's own environment (its headers
    do not depend on the Python version; CMake finds the target Python through Python3_EXECUTABLE)."""
    if target and target.pybind11_cmake_dir:
        return target.pybind11_cmake_dir
    return _own_cmake_dir("pybind11", "get_cmake_dir")


def _own_cmake_dir(module: str, attr: str) -> str | None:
    try:
        return str(getattr(importlib.import_module(module), attr)())
    except ImportError:
        return None


def gather(python: str | None = None, *, bindings: str = "pybind11") -> HostFacts:
    total, avail = _meminfo()
    try:
        free = shutil.disk_usage(Path.cwd()).free / 2**30
    except OSError:
        free = None
    # next to this interpreter first (a venv's ninja, cmake, sccache), then PATH, like the subprocess runner
    tools = {name: (_which_versioned(name) if name in ("clang", "clang++", "ld.lld") else tool(name))
             for name in TOOLS}
    if tools["ptxas"] is None and Path("/usr/local/cuda/bin/ptxas").is_file():
        tools["ptxas"] = "/usr/local/cuda/bin/ptxas"
    py = python or sys.executable
    target = _target_python(py)
    libc = platform.libc_ver()
    return HostFacts(
        machine=platform.machine(),
        system=platform.system(),
        glibc=libc[1] if libc[0] == "glibc" else None,
        cpus=os.cpu_count() or 1,
        mem_total_gib=round(total, 2),
        mem_available_gib=round(avail, 2),
        disk_free_gib=round(free, 1) if free is not None else None,
        tools=tools,
        python=py,
        python_version=target.version if target else "",
        python_include=target.include if target else None,
        python_abi=target.abi if target else "",
        pybind11_cmake_dir=pybind11_dir(target) if bindings == "pybind11" else None,
        # nanobind as setup.py passes it (-Dnanobind_ROOT), from the target interpreter only: without one, the
        # isolated build environment installs the tree's pin and CMake finds it in its site-packages
        nanobind_cmake_dir=target.nanobind_cmake_dir if target and bindings == "nanobind" else None,
        os_release=_os_release(),
        lld_dir=_lld_dir(tools["ld.lld"]),
    )


def _lld_dir(found: str | None) -> str | None:
    """Where ``ld.lld`` itself lives for the one found (Debian: /usr/bin/ld.lld-22 -> /usr/lib/llvm-22/bin)."""
    for path in (Path(found), Path(found).resolve()) if found else ():
        if (path.parent / "ld.lld").exists():
            return str(path.parent)
    return None


def _target_python(python: str) -> PythonFacts | None:
    """The target interpreter's version, ABI and headers; None when it does not run (``doctor`` reports that; a
    build refuses it up front in ``tritonbuild.gather.request``)."""
    if python == sys.executable:
        major, minor = sys.version_info[:2]
        free = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
        return PythonFacts(python, platform.python_version(), f"cp{major}{minor}", free, sysconfig.get_path("include"),
                           importlib.util.find_spec("scikit_build_core") is not None,
                           _own_cmake_dir("pybind11", "get_cmake_dir"), _own_cmake_dir("nanobind", "cmake_dir"))
    try:
        return pythons.probe(python, require_headers=False)
    except UserError:
        return None

