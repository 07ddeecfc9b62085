"""The CMake side of a plan (pure): the cache variables, the build environment, the build dir's key and the
equivalent commands."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.plan import CMakePlan, LLVMPlan, ToolchainPlan, compute_key, patches_hash
from tritonbuild.resolve import compilercache, linker, pathviews, proton
from tritonbuild.resolve.facts import Facts
from tritonbuild.resolve.plugins import Plugin
from tritonbuild.resolve.source import limited_api
from tritonbuild.resolve.toolchain import ninja_args
from tritonbuild.settings.model import Settings

INSTALL_COMPONENT = "tritonbuild"


def shim_dir(cache_root: str, name: str, path: str) -> str:
    """Where a plugin without name.conf gets a generated wrapper (name.conf + add_subdirectory of the plugin)."""
    return str(Path(cache_root) / "plugin-shims" / f"{name}-{hashlib.sha256(path.encode()).hexdigest()[:8]}")


def cmake_plan(s: Settings, facts: Facts, toolchain: ToolchainPlan,
               plugins: tuple[Plugin, ...], epoch: int | None,
               all_defines: Mapping[str, str]) -> tuple[CMakePlan, str, str]:
    """The CMake side of the plan, with the key of its build dir and its path-independent fingerprint."""
    src = facts.source
    stable = s.stable_paths and toolchain.compiler_cache != "none"
    # in the key too: another source dir (the link or the checkout) cannot reuse a configured build dir
    defines = tuple(sorted({**all_defines, **({"TRITONBUILD_STABLE_PATHS": "ON"} if stable else {})}.items()))
    shims = tuple((shim_dir(facts.cache_root, p.name, p.path), p.path) for p in plugins
                  if p.name_from != "name.conf")
    extra_args = s.cmake_args
    patched = patches_hash(facts.every_patch())
    key = compute_key(source_root=src.root, python=facts.host.python, defines=defines, extra_args=extra_args,
                      build_type=toolchain.build_type, targets=("triton",), patches=patched)
    fingerprint = compute_key(
        source_root="<source>", python=facts.host.python,
        defines=tuple((k, _placeholders(v, src.root, facts.cache_root, plugins)) for k, v in defines),
        extra_args=extra_args, build_type=toolchain.build_type, targets=("triton",), patches=patched)
    build_dir = str(Path(facts.cache_root) / "build" / key)
    links = pathviews.views(build_dir, src.root, ((p.name, p.path) for p in plugins)) if stable else ()
    cmake = CMakePlan(
        source_dir=pathviews.rewrite(src.root, links),
        build_dir=build_dir,
        generator="Ninja",
        defines=pathviews.rewrite_all(defines, links),
        extra_args=tuple(pathviews.rewrite(a, links) for a in extra_args),
        build_targets=("triton", *extra_targets(s.targets, s.origin("targets"))),
        install_component=INSTALL_COMPONENT,
        env=tuple(_cmake_env(s, facts, toolchain, plugins, epoch, build_dir, bool(links))),
        plugin_shims=pathviews.rewrite_all(shims, links),
        views=links,
    )
    return cmake, key, fingerprint


def _cmake_env(s: Settings, facts: Facts, toolchain: ToolchainPlan,
               plugins: tuple[Plugin, ...], epoch: int | None, build_dir: str, views: bool) -> list[tuple[str, str]]:
    """What the build's environment adds: a ccache remote, SOURCE_DATE_EPOCH, ccache's base dir."""
    out: list[tuple[str, str]] = []
    if s.ccache_remote and not toolchain.ccache:
        raise UserError(f"A ccache remote ({s.origin('ccache_remote')}) needs ccache, which is off or not "
                        "installed. Install ccache (Debian: ccache) or drop --ccache-remote.")
    if s.reproducible:
        if epoch is None:
            raise UserError("A reproducible build needs SOURCE_DATE_EPOCH: build from a git checkout (its commit "
                            "date is used) or set SOURCE_DATE_EPOCH.")
        out.append(("SOURCE_DATE_EPOCH", str(epoch)))
    # The cache rewrites paths under its base dir relative to the build dir. With the stable paths everything
    # the build reads of the checkout is under the build dir, so the cache root is the base (LLVM and the build
    # environment's headers in it included); without them, one dir above the source, plugins and cache.
    base = facts.cache_root if views else os.path.commonpath([facts.source.root, facts.cache_root,
                                                              *(p.path for p in plugins)])
    return out + compilercache.build_env(toolchain.compiler_cache, base, remote=s.ccache_remote,
                                         distcc=toolchain.distcc, distcc_hosts=toolchain.distcc_hosts,
                                         log_dir=build_dir, port=s.sccache_server_port,
                                         sccache_config=facts.sccache_config,
                                         strip=(build_dir, facts.source.root, *(p.path for p in plugins))
                                         if views else ())


_TARGET_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


def extra_targets(given: tuple[str, ...], origin: str) -> tuple[str, ...]:
    """CMake targets to build besides ``triton`` (each once, in the order given). They do not change the build
    dir: adding ``--target triton-opt`` to a dev build reuses its configured tree."""
    out: list[str] = []
    for raw in given:
        name = raw.strip()
        if not _TARGET_NAME.fullmatch(name):
            raise UserError(f"The CMake target {raw!r} (from {origin}) is not a target name: CMake targets "
                            "are letters, digits and _ . + -. Give one name per --target, e.g. --target "
                            "triton-opt --target triton-shared-opt.")
        if name != "triton" and name not in out:
            out.append(name)
    return tuple(out)


def _env_headers(facts: Facts) -> list[tuple[str, str]]:
    """Header dirs of the build environment that reach the objects: pybind11's (in the build venv) and the
    interpreter's include dir. Reproducible builds map them to fixed names."""
    out = []
    if facts.host.pybind11_cmake_dir:  # <site>/pybind11/share/cmake/pybind11
        out.append(("pybind11", str(Path(facts.host.pybind11_cmake_dir).parents[2] / "include")))
    if facts.host.nanobind_cmake_dir:  # <site>/nanobind/cmake: its headers and the sources nanobind-static builds
        out.append(("nanobind", str(Path(facts.host.nanobind_cmake_dir).parent)))
    if facts.host.python_include:
        out.append(("python-include", facts.host.python_include))
    return out


def _placeholders(value: str, source: str, cache: str, plugins: tuple[Plugin, ...]) -> str:
    """A define's value with machine-specific directories replaced, for the path-independent fingerprint."""
    for p in plugins:
        value = value.replace(p.path, f"<plugin:{p.name}>")
    return value.replace(source, "<source>").replace(cache, "<cache>")


def defines(s: Settings, facts: Facts, names: tuple[str, ...],
            plugins: tuple[Plugin, ...], tc: ToolchainPlan, llvm: LLVMPlan) -> tuple[tuple[str, str], ...]:
    """The CMake cache variables of the plan (without LLVM linkage, NVIDIA parts and dependencies)."""
    d = {**_core_defines(facts, names, plugins, tc), **_python_defines(s, facts),
         **_toolchain_defines(s, facts, tc), **_llvm_defines(llvm),
         **_dependency_defines(s, facts, names, tc)}
    return tuple(sorted(d.items()))


def _core_defines(facts: Facts, names: tuple[str, ...], plugins: tuple[Plugin, ...],
                  tc: ToolchainPlan) -> dict[str, str]:
    """What every build sets: the module, the backends and plugins, tritonbuild's injected CMake."""
    src = facts.source
    d: dict[str, str] = {
        "TRITON_BUILD_PYTHON_MODULE": "ON",
        "TRITON_CODEGEN_BACKENDS": ";".join(names),
        "TRITON_BUILD_PROTON": "ON" if tc.proton else "OFF",
        "TRITON_BUILD_UT": "OFF",
        "TRITON_BUILD_WITH_CCACHE": "OFF",  # tritonbuild sets the launcher itself (and CCACHE_BASEDIR)
        "CMAKE_EXPORT_COMPILE_COMMANDS": "ON",
        "CMAKE_PROJECT_triton_INCLUDE": str(Path(facts.cmake_dir) / "TritonBuildInject.cmake"),
        "TRITONBUILD_INSTALL_COMPONENT": INSTALL_COMPONENT,
        "TRITONBUILD_BACKENDS": ";".join(
            [f"{n}={src.backend(n).path}" for n in names] + [f"{p.name}={p.path}" for p in plugins]
        ),
        "TRITON_PARALLEL_LINK_JOBS": str(tc.link_jobs),
    }
    if plugins:
        d["TRITON_PLUGIN_DIRS"] = ";".join(
            p.path if p.name_from == "name.conf" else shim_dir(facts.cache_root, p.name, p.path) for p in plugins
        )
    if src.generation == "G3" or "TRITON_CACHE_PATH" in src.setup_cache_vars:
        d["TRITON_CACHE_PATH"] = str(Path(facts.cache_root) / "triton-cache")
    if src.generation == "G3" or "TRITON_VERSION" in src.setup_cache_vars:
        d["TRITON_VERSION"] = src.version or "0.0.0"
    return d


def _python_defines(s: Settings, facts: Facts) -> dict[str, str]:
    """The Python-facing build: the stable ABI (a cp312-abi3 wheel) and the extension headers."""
    src, d = facts.source, {"TRITONBUILD_EXT_HEADERS": "ON" if s.ext_headers else "OFF"}
    if src.stable_abi:
        abi3 = limited_api(src, facts.host.python_abi, s.stable_abi, s.origin("stable_abi"))
        d["TRITON_STABLE_ABI"] = "ON" if abi3 else "OFF"
    if src.ext_option:
        d["TRITON_EXT_ENABLED"] = "ON" if s.ext_headers else "OFF"
    return d


def _toolchain_defines(s: Settings, facts: Facts, tc: ToolchainPlan) -> dict[str, str]:
    """Compilers, linker flags, debug flag, launcher, offline and reproducible mode."""
    d: dict[str, str] = {}
    if tc.c_compiler:
        d["CMAKE_C_COMPILER"] = tc.c_compiler
    if tc.cxx_compiler:
        d["CMAKE_CXX_COMPILER"] = tc.cxx_compiler
    if link_flags := linker.flags(tc.linker, tc.lld_dir):
        for kind in ("EXE", "MODULE", "SHARED"):
            d[f"CMAKE_{kind}_LINKER_FLAGS"] = link_flags
    if tc.debug_flag:
        d["TRITONBUILD_DEBUG_FLAG"] = tc.debug_flag  # a compile option of the injected CMake: after the flags
    if tc.launcher:
        d["CMAKE_C_COMPILER_LAUNCHER"] = tc.launcher
        d["CMAKE_CXX_COMPILER_LAUNCHER"] = tc.launcher
    if tc.offline:
        d["TRITON_OFFLINE_BUILD"] = "ON"
    if tc.unity_batch:
        d["TRITONBUILD_UNITY_BATCH"] = str(tc.unity_batch)  # the injected CMake turns on CMAKE_UNITY_BUILD
        d["TRITONBUILD_UNITY_EXCLUDE"] = ";".join(tc.unity_exclude)
    if s.reproducible:
        d["TRITONBUILD_REPRODUCIBLE"] = "ON"  # the injected CMake adds -ffile-prefix-map for source and build
        d["TRITONBUILD_PREFIX_MAPS"] = ";".join(f"{name}={path}" for name, path in _env_headers(facts))
    return d


def _llvm_defines(llvm: LLVMPlan) -> dict[str, str]:
    if not llvm.prefix:
        return {}
    d = {"LLVM_SYSPATH": llvm.prefix, "LLVM_INCLUDE_DIRS": f"{llvm.prefix}/include",
         "LLVM_LIBRARY_DIR": f"{llvm.prefix}/lib",
         # the injected CMake applies the fix only when the LLVM says LLVM_LINK_LLVM_DYLIB
         "TRITONBUILD_LLVM_DYLIB_FIX": "ON"}
    if llvm.is_pinned is not True:
        d["TRITONBUILD_DEPRECATED_NOT_ERROR"] = "ON"  # -Wno-error=deprecated-declarations, see the CMake
    return d


def _proton_paths(s: Settings) -> dict[str, Path | None]:
    """The settings that name proton's header dirs (environment only), by the variable setup.py reads (it may read
    more: proton.setup_dirs)."""
    return {"TRITON_ROCTRACER_INCLUDE_PATH": s.roctracer_include, "TRITON_ROCM_INCLUDE_PATH": s.rocm_include,
            "TRITON_XPUPTI_INCLUDE_PATH": s.xpupti_include}


def _dependency_defines(s: Settings, facts: Facts, names: tuple[str, ...],
                        tc: ToolchainPlan) -> dict[str, str]:
    """Where nlohmann/json, pybind11, ptxas and proton's headers are."""
    d: dict[str, str] = {}
    json_prefix = s.json_syspath or facts.json_prefix
    if json_prefix:
        d["JSON_SYSPATH"] = str(json_prefix)
        d["JSON_INCLUDE_DIR"] = f"{json_prefix}/include"
    if facts.host.pybind11_cmake_dir:
        d["pybind11_DIR"] = facts.host.pybind11_cmake_dir
    if facts.host.nanobind_cmake_dir:
        d["nanobind_ROOT"] = facts.host.nanobind_cmake_dir  # as setup.py passes it
    ptxas = s.ptxas or facts.host.tool("ptxas")
    if ptxas and "nvidia" in names:
        d["TRITON_PTXAS_PATH"] = str(ptxas)
    if tc.proton:
        src = facts.source
        given = {**facts.proton_env, **{var: str(path) for var, path in _proton_paths(s).items() if path}}
        d.update(proton.include_dirs(given, src.root, src.proton_dirs,
                                     src.proton_include_defaults))
    return d


def commands(cmake: CMakePlan, tc: ToolchainPlan) -> tuple[str, ...]:
    """The equivalent CMake commands (scikit-build-core runs these steps for ``build``)."""
    cfg = ["cmake", "-S", cmake.source_dir, "-B", f"{cmake.build_dir}/cmake", "-G", cmake.generator,
           f"-DCMAKE_BUILD_TYPE={tc.build_type}"]
    cfg += [f"-D{k}={v}" for k, v in cmake.defines] + list(cmake.extra_args)
    return (
        shlex.join(cfg),
        shlex.join(["cmake", "--build", f"{cmake.build_dir}/cmake", "--target", *cmake.build_targets,
                    "--", *ninja_args(tc)]),
        shlex.join(["cmake", "--install", f"{cmake.build_dir}/cmake", "--component", cmake.install_component]),
        shlex.join([sys.executable, "-m", "tritonbuild", "build"]) + "  # packages the wheel via scikit-build-core",
    )
