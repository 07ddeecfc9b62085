"""A small Triton-shaped source tree and external plugins, written from the Triton build contract.

They are real CMake projects: ``libtriton`` is a pybind11 module that links LLVM and MLIR from
``LLVM_SYSPATH``, with one ``init_triton_<name>`` per ``TRITON_BACKENDS_TUPLE`` entry, backends registered
with ``add_triton_plugin``, plugins added from ``TRITON_PLUGIN_DIRS`` via ``name.conf``, Python backends
that subclass ``BaseBackend``/``DriverBase``, and entry-point discovery. Tests, ``tritonbuild selftest``
and ``tritonbuild example`` write them.

Layout generations (see the contract): G1 keeps ``python/setup.py``, a 4-entry tuple macro and never puts
proton in the tuple; G2 has a root ``setup.py``/``pyproject.toml``, a 5-entry macro and always puts proton
in the tuple; G3 pins LLVM in ``cmake/llvm-info.json`` and runs ``python/build_helpers.py
write_thirdparty_cmake_vars`` at configure time; G4 is mid-2026 upstream: G3 with nanobind bindings instead of
pybind11 (``find_package(nanobind)``, ``nanobind_build_library(nanobind-static)``, ``nanobind==2.10.2`` in
pyproject.toml) and ``option(TRITON_STABLE_ABI)``, which builds the Python-facing code against the limited API
of 3.12 (``Py_LIMITED_API=0x030C0000``) for one ``cp312-abi3`` wheel.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE / "tree"
BACKEND_TEMPLATE = HERE / "backend_template"
PLUGIN_TEMPLATE = HERE / "plugin_template"
EXAMPLE_LLVM_HASH = "2eb709b95d8f521aa15401e159fac0729d56a677"
GENERATIONS = ("G1", "G2", "G3", "G4")
OLD_PASS_PLUGIN = "llvm/Passes/PassPlugin.h"  # before LLVM 22.1; since then llvm/Plugins/PassPlugin.h
OLD_INCLUDE_FILES = ("python/src/ir.cc", "test/lib/Instrumentation/Hello.cpp")  # include it with old_includes
# old_override: a header of the tree with a rewrite pattern in the split match()/rewrite() style, which MLIR removed
# in LLVM 21 (RewritePattern has only matchAndRewrite since): "marked 'override', but does not override" with 22
OLD_OVERRIDE_HEADER = "include/triton/CorePatterns.h"
OLD_OVERRIDE_USER = "lib/Core.cpp"  # the unit of the build that includes it
OLD_OVERRIDE_TEXT = """#pragma once
#include "mlir/IR/PatternMatch.h"

namespace triton {
// Written against LLVM 20: RewritePattern::match() was a virtual of its own until LLVM 21.
struct FoldCorePattern : public mlir::RewritePattern {
  explicit FoldCorePattern(mlir::MLIRContext *context)
      : mlir::RewritePattern(mlir::Pattern::MatchAnyOpTypeTag(), 1, context) {}
  llvm::LogicalResult match(mlir::Operation *op) const override { return llvm::failure(); }
  llvm::LogicalResult matchAndRewrite(mlir::Operation *op, mlir::PatternRewriter &rewriter) const override {
    return match(op);
  }
};
} // namespace triton
"""


@dataclass(frozen=True)
class BackendSpec:
    cls: str
    gpu: str
    llvm_target: str  # "host" picks the machine's target in CMake
    lookup: str
    extra_cmake: str = ""
    extra_link: str = ""  # more LINK_LIBS of the backend's plugin object
    extra_decl: str = ""  # C++ declarations before init_triton_<name>, and its extra body
    extra_init: str = ""
    extra_stages: str = ""  # Python lines at the end of add_stages


# Like triton's amd backend: the only user of LLD (find_package(LLD) in its own CMakeLists.txt).
_AMD_CMAKE = """if(TRITON_BUILD_PYTHON_MODULE)
  find_package(LLD REQUIRED CONFIG PATHS "${LLD_DIR}" NO_DEFAULT_PATH)
endif()"""

# Like triton-cpu: companion shared libraries next to libtriton, one from a nested project.
_CPU_CMAKE = """if(TRITON_BUILD_PYTHON_MODULE)
  add_library(TritonCPURuntime SHARED ${CMAKE_CURRENT_SOURCE_DIR}/runtime/cpu_runtime.cpp)
  add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/runtime/mathlib mathlib)
endif()"""


# Like Intel's XPU backend: a SPIR-V translation library in lib/ with a dependency fetched at configure time
# (cmake/FindSPIRVKernelABI.cmake, patched after the fetch), bound into libtriton by the backend's .cc.
_SPIRV_CMAKE = """list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_SOURCE_DIR}/cmake")
if(TRITON_BUILD_PYTHON_MODULE)
  add_subdirectory(lib)
endif()"""
_SPIRV_DECL = """#include <pybind11/stl.h>
namespace triton::spirv {
bool translateToSPIRV(const std::string &llir, std::string &binary, std::string &error);
}"""
_SPIRV_INIT = """  m.def("translate_to_spirv", [](const std::string &llir) {
    std::string binary, error;
    if (!triton::spirv::translateToSPIRV(llir, binary, error))
      throw std::runtime_error("SPIR-V translation failed: " + error);
    return pybind11::bytes(binary);
  });"""
_SPIRV_STAGES = """        from . import stages as spirv_stages

        spirv_stages.add(stages)"""


BACKENDS: dict[str, BackendSpec] = {
    "nvidia": BackendSpec("NVIDIA", "cuda", "NVPTX", "nvptx64"),
    "amd": BackendSpec("AMD", "hip", "AMDGPU", "amdgcn", _AMD_CMAKE),
    "cpu": BackendSpec("CPU", "cpu", "host", "", _CPU_CMAKE),
    "spirv": BackendSpec("SPIRV", "spirv", "SPIRV", "spirv64", _SPIRV_CMAKE, "TritonSPIRVTranslation",
                         _SPIRV_DECL, _SPIRV_INIT, _SPIRV_STAGES),
}

_HOST_SELECT = """if(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(TB_LLVM_TARGET AArch64)
  set(TB_LOOKUP aarch64)
else()
  set(TB_LLVM_TARGET X86)
  set(TB_LOOKUP x86-64)
endif()"""

_PROTON_ALWAYS = """  # The proton dialect is always built, and proton is always part of the backends tuple.
  list(APPEND TRITON_PLUGIN_NAMES "proton")
  add_subdirectory(third_party/proton/Dialect)
"""

_PROTON_ROCM = """if(NOT ROCM_INCLUDE_DIR)
  message(FATAL_ERROR "ROCM include directory not defined")
endif()
"""

_PROTON_XPUPTI = """if(NOT XPUPTI_INCLUDE_DIR)
  message(FATAL_ERROR "XPUPTI include directory not defined")
endif()
if(NOT EXISTS "${XPUPTI_INCLUDE_DIR}/pti/pti_view.h")
  message(FATAL_ERROR "XPUPTI_INCLUDE_DIR=${XPUPTI_INCLUDE_DIR} has no pti/pti_view.h")
endif()
"""

_G3_HELPERS = """
# G3: third-party paths come from python/build_helpers.py at configure time.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(TRITON_VERSION "" CACHE STRING "Triton version string (passed from setup.py)")
set(TRITON_CACHE_PATH "" CACHE PATH "Path to triton cache")
set(JSON_SYSPATH "" CACHE PATH "Path to system nlohmann/json headers")
if(NOT TRITON_CACHE_PATH)
  message(FATAL_ERROR "TRITON_CACHE_PATH must be set.")
endif()
set(_helper_args --triton-cache-path "${TRITON_CACHE_PATH}")
if(DEFINED LLVM_SYSPATH AND NOT "${LLVM_SYSPATH}" STREQUAL "")
  list(APPEND _helper_args --llvm-syspath "${LLVM_SYSPATH}")
endif()
if(TRITON_OFFLINE_BUILD)
  list(APPEND _helper_args --offline)
endif()
execute_process(
  COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/python/build_helpers.py"
          write_thirdparty_cmake_vars ${_helper_args} --out "${CMAKE_BINARY_DIR}/thirdparty-vars.cmake"
  RESULT_VARIABLE _helper_rc)
if(NOT _helper_rc EQUAL 0)
  message(FATAL_ERROR "python/build_helpers.py write_thirdparty_cmake_vars failed")
endif()
include("${CMAKE_BINARY_DIR}/thirdparty-vars.cmake")
"""

# G4: mid-2026 upstream's configure also runs build_helpers.py download_and_copy_dependencies, which downloads
# NVIDIA's archives and copies ptxas, cuobjdump, nvdisasm, CUDA and CUPTI headers and CUPTI's libraries into
# third_party/nvidia/backend for each TRITON_*_PATH left empty, unless TRITON_OFFLINE_BUILD (whatever the backends).
_G4_NVIDIA_DOWNLOADS = """
set(TRITON_PTXAS_PATH "" CACHE FILEPATH "Path override for ptxas")
set(TRITON_PTXAS_BLACKWELL_PATH "" CACHE FILEPATH "Path override for ptxas-blackwell")
set(TRITON_CUOBJDUMP_PATH "" CACHE FILEPATH "Path override for cuobjdump")
set(TRITON_NVDISASM_PATH "" CACHE FILEPATH "Path override for nvdisasm")
set(TRITON_CUDACRT_PATH "" CACHE PATH "Path to CUDA CRT headers.")
set(TRITON_CUDART_PATH "" CACHE PATH "Path to CUDA Runtime headers")
set(TRITON_CUPTI_INCLUDE_PATH "" CACHE PATH "Path to CUPTI headers")
set(TRITON_CUPTI_LIB_PATH "" CACHE PATH "Path to CUPTI libraries")
set(TRITON_CUPTI_LIB_BLACKWELL_PATH "" CACHE PATH "Path to Blackwell CUPTI libraries")
if(TRITON_BUILD_PYTHON_MODULE)
  set(_nvidia_args "")
  foreach(_var PTXAS PTXAS_BLACKWELL CUOBJDUMP NVDISASM CUDACRT CUDART CUPTI_INCLUDE CUPTI_LIB CUPTI_LIB_BLACKWELL)
    list(APPEND _nvidia_args --path "TRITON_${_var}_PATH=${TRITON_${_var}_PATH}")
  endforeach()
  if(TRITON_OFFLINE_BUILD)
    list(APPEND _nvidia_args --offline)
  endif()
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/python/build_helpers.py"
            download_and_copy_dependencies ${_nvidia_args}
    RESULT_VARIABLE _nvidia_rc)
  if(NOT _nvidia_rc EQUAL 0)
    message(FATAL_ERROR "python/build_helpers.py download_and_copy_dependencies failed")
  endif()
endif()
"""

_BUILD_HELPERS = '''"""Configure-time helpers of the example tree (G3 shape)."""
import argparse
import json
import os
import sys


def write_thirdparty_cmake_vars(args):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    info = json.load(open(os.path.join(here, "cmake", "llvm-info.json")))
    if not args.llvm_syspath:
        name = f"llvm-{info['llvm_hash'][:8]}-ubuntu-x64-{info['build_number']}.tar.gz"
        if args.offline:
            sys.exit("offline build: LLVM_SYSPATH is not set")
        sys.exit(f"would download {name} from the network: the example tree never downloads; set LLVM_SYSPATH")
    with open(args.out, "w") as out:
        out.write(f'set(LLVM_SYSPATH "{args.llvm_syspath}")\\n')
        out.write(f'set(TRITON_THIRDPARTY_CACHE "{args.triton_cache_path}")\\n')


def download_and_copy_dependencies(args):
    """G4: each NVIDIA part whose TRITON_*_PATH is empty would be downloaded into third_party/nvidia/backend."""
    if args.offline:
        return
    empty = [var for var, _, value in (p.partition("=") for p in args.path) if not value]
    if empty:
        sys.exit("would download NVIDIA's archives from developer.download.nvidia.com into third_party/nvidia/"
                 f"backend for {', '.join(empty)}: the example tree never downloads; set them or build offline")


parser = argparse.ArgumentParser()
sub = parser.add_subparsers(dest="cmd", required=True)
w = sub.add_parser("write_thirdparty_cmake_vars")
w.add_argument("--triton-cache-path", required=True)
w.add_argument("--llvm-syspath")
w.add_argument("--offline", action="store_true")
w.add_argument("--out", required=True)
d = sub.add_parser("download_and_copy_dependencies")
d.add_argument("--path", action="append", default=[])
d.add_argument("--offline", action="store_true")
ns = parser.parse_args()
(write_thirdparty_cmake_vars if ns.cmd == "write_thirdparty_cmake_vars" else download_and_copy_dependencies)(ns)
'''

_SETUP = '''# Shape of Triton's setup.py: tritonbuild never runs it, it reads the in-tree backend list and what
# get_proton_cmake_args passes from it.
import os

TRITON_VERSION = "{version}"


class CMakeBuild:  # setuptools' build_ext in the real file
    def get_proton_cmake_args(self):
        cmake_args = []
{proton}        return cmake_args

    def build_extension(self, ext):
        pass


backends = [*BackendInstaller.copy({backends!r}), *BackendInstaller.copy_externals()]  # noqa: F821
setup(name=os.environ.get("TRITON_WHEEL_NAME", "triton"), version=TRITON_VERSION,  # noqa: F821
      install_requires=["importlib-metadata; python_version < '3.10'"])
'''

# The header dirs each generation's setup.py passes to proton: (variable, environment variable, in-tree default).
# Mid-2026 (Intel's HEAD) adds ROCm's and Intel's XPUPTI headers and an optional ROCprofiler-SDK.
_PROTON_SETUP_DIRS = {
    "G1": [("CUPTI", "nvidia/backend/include"), ("ROCTRACER", "amd/backend/include")],
    "G3": [("CUPTI", "nvidia/backend/include"), ("ROCM", "amd/backend/include"), ("ROCTRACER", "amd/backend/include")],
    "G4": [("CUPTI", "nvidia/backend/include"), ("ROCM", "amd/backend/include"), ("ROCTRACER", "amd/backend/include"),
           ("XPUPTI", "intel/backend/proton/include"), ("ROCPROFILER_SDK", "")],
}


def _proton_setup(generation: str) -> str:
    lines = []
    for name, default in _PROTON_SETUP_DIRS.get(generation, _PROTON_SETUP_DIRS["G1"]):
        var = f"{name.lower()}_include_dir"
        lines.append(f'        {var} = get_env_with_keys(["TRITON_{name}_INCLUDE_PATH"])  # noqa: F821')
        if default:
            parts = ", ".join(f'"{p}"' for p in ["third_party", *default.split("/")])
            lines += [f'        if {var} == "":',
                      f"            {var} = os.path.join(get_base_dir(), {parts})  # noqa: F821",
                      f'        cmake_args += ["-D{name}_INCLUDE_DIR=" + {var}]']
        else:
            lines += [f"        if {var}:", f'            cmake_args += ["-D{name}_INCLUDE_DIR=" + {var}]']
    return "\n".join(lines) + "\n"


_DIRECTORY_DISCOVERY = """\
    root = os.path.dirname(__file__)
    names = [n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)) and not n.startswith("__")]
    values = {n: f"triton.backends.{n}" for n in names}
"""


def _for_each(limit: int) -> str:
    lines = ["#define FOR_EACH_1(MACRO, X) MACRO(X)"]
    for n in range(2, limit + 1):
        lines.append(f"#define FOR_EACH_{n}(MACRO, X, ...) MACRO(X) FOR_EACH_{n - 1}(MACRO, __VA_ARGS__)")
    args = ", ".join(f"_{i}" for i in range(1, limit + 1))
    seq = ", ".join(str(i) for i in range(limit, -1, -1))
    lines += [
        "#define FOR_EACH_NARG(...) FOR_EACH_NARG_(__VA_ARGS__, FOR_EACH_RSEQ_N())",
        "#define FOR_EACH_NARG_(...) FOR_EACH_ARG_N(__VA_ARGS__)",
        f"#define FOR_EACH_ARG_N({args}, N, ...) N",
        f"#define FOR_EACH_RSEQ_N() {seq}",
    ]
    return "\n".join(lines)


def _substitute(path: Path, values: dict[str, str]) -> None:
    text = path.read_text()
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    path.write_text(text)


def _render_dir(template: Path, dest: Path, values: dict[str, str]) -> None:
    """Copy a template with its @PLACEHOLDERS@ filled. Byte-code caches are left out: pip byte-compiles the
    templates' .py files when it installs tritonbuild, and those are neither templates nor text."""
    for src in template.rglob("*"):
        if "__pycache__" in src.parts or src.suffix == ".pyc":
            continue
        rel = Path(*(part.replace("@NAME@", values["NAME"]) for part in src.relative_to(template).parts))
        target = dest / rel
        if src.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        _substitute(target, values)


def stand_in_library() -> bytes:
    """A small real shared library of this host (glibc's libdl/libutil stub, 14 KB) to stand in for CUPTI's: the plan
    bundles only ELF shared objects of this machine (tritonbuild.resolve.nvidia.input_problem)."""
    import sysconfig

    triplet = sysconfig.get_config_var("MULTIARCH") or "-"
    for d in (f"/lib/{triplet}", f"/usr/lib/{triplet}", "/lib64", "/usr/lib64"):
        for name in ("libdl.so.2", "libutil.so.1"):
            if (Path(d) / name).is_file():
                return (Path(d) / name).read_bytes()
    return b"stand-in: no small shared library found on this host\n"


def write_cuda_stub(dest: Path, *, cupti: bool = True) -> Path:
    """A CUDA_HOME shaped like a toolkit: cuda.h (including a neighbour relative to itself, like the real one;
    CUDA_VERSION 12040), a header nothing includes, and with ``cupti`` CUPTI's headers (cupti.h includes
    cuda.h; CUPTI_API_VERSION 4242) and libraries (libcupti.so -> libcupti.so.12, libnvperf_host.so)."""
    include = dest / "include"
    (include / "crt").mkdir(parents=True, exist_ok=True)
    (include / "crt" / "host_defines.h").write_text("#pragma once\n#define TB_CUDA_MINOR 40\n")
    (include / "cuda.h").write_text(
        '#pragma once\n#include "crt/host_defines.h"\n#define CUDA_VERSION (12000 + TB_CUDA_MINOR)\n')
    (include / "cublas_v2.h").write_text("#pragma once\n/* a toolkit header the backend never includes */\n")
    if cupti:
        (include / "cupti.h").write_text('#pragma once\n#include <cuda.h>\n#include "cupti_version.h"\n')
        (include / "cupti_version.h").write_text("#pragma once\n#define CUPTI_API_VERSION 4242\n")
        lib = dest / "lib64"
        lib.mkdir(exist_ok=True)
        (lib / "libcupti.so.12").write_bytes(stand_in_library())
        (lib / "libcupti.so").symlink_to("libcupti.so.12")
        (lib / "libnvperf_host.so").write_bytes(stand_in_library())
        (lib / "libcublas.so.12").write_bytes(b"not a CUPTI library\n")
    return dest


def write_googletest(dest: Path, version: str = "1.17.0") -> Path:
    """A local stand-in for googletest (what --dep googletest=PATH points at): a CMake project with
    ``gtest_main`` and ``gtest/gtest.h``."""
    (dest / "include" / "gtest").mkdir(parents=True, exist_ok=True)
    (dest / "include" / "gtest" / "gtest.h").write_text(f'#pragma once\n#define TB_GTEST_VERSION "{version}"\n')
    (dest / "CMakeLists.txt").write_text(
        "add_library(gtest_main INTERFACE)\n"
        "target_include_directories(gtest_main INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include)\n")
    return dest


SPIRV_ABI_TAG = "v1.0.0"
_SPIRV_ABI_HEADER = """#pragma once
// spirv-kernel-abi {tag} (a tritonbuild example dependency)
#define TB_SPIRV_KERNEL_TRIPLE "spirv64-unknown-unknown"
#define TB_SPIRV_ABI_VERSION 100
// The spirv backend's CMake applies kernel-abi.patch here, as Intel's applies its patches to the translator.
"""


def write_spirv_abi(dest: Path, tag: str = SPIRV_ABI_TAG, llvm_include: str = "llvm/Support/raw_ostream.h") -> Path:
    """The example spirv backend's configure-time dependency, as a local git repository with ``tag`` (what
    ``--dep spirv-kernel-abi=PATH`` points at; the tree fetches it from GitHub otherwise). Like Intel's translator
    it has code the backend compiles (``lib/abi.cpp``, including ``llvm_include`` from the LLVM: the translator's
    ``PassPlugin.cpp`` includes a header that moved in LLVM 22)."""
    from tritonbuild.system.proc import run

    (dest / "include").mkdir(parents=True, exist_ok=True)
    (dest / "lib").mkdir(parents=True, exist_ok=True)
    (dest / "include" / "spirv_kernel_abi.h").write_text(_SPIRV_ABI_HEADER.format(tag=tag))
    (dest / "lib" / "abi.cpp").write_text(f'#include "spirv_kernel_abi.h"\n#include "{llvm_include}"\n'
                                          "int tb_spirv_abi_version() { return TB_SPIRV_ABI_VERSION; }\n")
    (dest / "CMakeLists.txt").write_text("add_library(spirv_kernel_abi INTERFACE)\n")
    env = {"GIT_AUTHOR_NAME": "tritonbuild", "GIT_AUTHOR_EMAIL": "example@tritonbuild.invalid",
           "GIT_COMMITTER_NAME": "tritonbuild", "GIT_COMMITTER_EMAIL": "example@tritonbuild.invalid",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", f"spirv-kernel-abi {tag}"],
                 ["tag", tag]):
        result = run(["git", "-C", str(dest), *argv], env={**os.environ, **env}, timeout=60)
        if not result.ok:
            raise RuntimeError(f"git {argv[0]} in {dest} failed: {result.stderr.strip()}")
    return dest


def write_tree(
    dest: Path,
    *,
    generation: str = "G2",
    backends: Sequence[str] = ("nvidia", "amd", "cpu", "spirv"),
    required: bool = True,
    proton: bool = True,
    tuple_limit: int | None = None,
    version: str = "3.6.0",
    default_backends: Sequence[str] = ("nvidia", "amd"),
    llvm_hash: str = EXAMPLE_LLVM_HASH,
    old_includes: bool = False,
    old_override: bool = False,
    old_host_features: bool = False,
) -> Path:
    """Write the example Triton tree into ``dest`` (which must not exist or be empty).

    ``old_includes``: written against an LLVM before 22.1, as upstream d8da7c998 is: python/src/ir.cc and the
    instrumentation plugin in test/lib include ``llvm/Passes/PassPlugin.h`` (line 2 of each), which LLVM 22.1 moved
    to ``llvm/Plugins/PassPlugin.h`` (what the include preflight must report).
    ``old_override``: a header of the tree (``OLD_OVERRIDE_HEADER``, included by lib/Core.cpp) overrides
    ``RewritePattern::match``, which LLVM 21 removed: it compiles only against an older LLVM (what the canary
    compile must report before the build).
    ``old_host_features``: python/src/llvm.cc calls ``getHostCPUFeatures`` with the map to fill, as triton-cpu's
    2024 llvm.cc does, which LLVM 19.1 changed: an error in that unit's body only (its headers are ir.cc's too)."""
    if generation not in GENERATIONS:
        raise ValueError(f"generation must be one of {GENERATIONS}")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(TREE, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    _write_backends(dest, backends)
    if generation == "G1":
        _make_2024(dest, backends)
    _write_proton(dest, generation, proton)
    need_nvidia = required and "nvidia" in backends
    need_amd = required and "amd" in backends
    values = {
        "FOR_EACH": _for_each(tuple_limit or (4 if generation == "G1" else 5)),
        "PROTON_TUPLE": _PROTON_ALWAYS if proton and generation != "G1" else "",
        "G3_BUILD_HELPERS": _G3_HELPERS + (_G4_NVIDIA_DOWNLOADS if generation == "G4" else "")
        if generation in ("G3", "G4") else "",
        "CORE_INCLUDES": '#include "third_party/nvidia/include/NVIDIAAttrs.h"' if need_nvidia else "",
        "IR_INCLUDES": '#include "third_party/amd/include/AMDAttrs.h"' if need_amd else "",
        "VERSION": version,
        # mid-2024 upstream (a51de76) built the C++ flags from the C flags, dropping CMAKE_CXX_FLAGS given to it
        "CXX_FLAGS_BASE": "${CMAKE_C_FLAGS}" if generation == "G1" else "${CMAKE_CXX_FLAGS}",
    }
    for rel in ("CMakeLists.txt", "python/src/main.cc", "lib/Core.cpp", "python/src/ir.cc",
                "python/triton/__init__.py"):
        _substitute(dest / rel, values)
    _write_setup(dest, generation, version, [b for b in default_backends if b in backends])
    _write_pins(dest, generation, llvm_hash)
    _write_old_api(dest, old_includes, old_override, old_host_features)
    if generation == "G4":
        _make_nanobind(dest)
    return dest


def _write_old_api(dest: Path, old_includes: bool, old_override: bool, old_host_features: bool) -> None:
    """The tree written against an older LLVM, as write_tree's flags of these names say."""
    if old_includes:
        for rel in OLD_INCLUDE_FILES:
            first, _, rest = (dest / rel).read_text().partition("\n")
            (dest / rel).write_text(f"{first}\n#include \"{OLD_PASS_PLUGIN}\"\n{rest}")
    if old_override:
        (dest / OLD_OVERRIDE_HEADER).write_text(OLD_OVERRIDE_TEXT)
        first, _, rest = (dest / OLD_OVERRIDE_USER).read_text().partition("\n")
        (dest / OLD_OVERRIDE_USER).write_text(f"{first}\n#include \"triton/CorePatterns.h\"\n{rest}")
    if old_host_features:
        llvm_cc = dest / "python" / "src" / "llvm.cc"
        llvm_cc.write_text(llvm_cc.read_text().replace(
            "getHostCPUFeatures()", "getHostCPUFeatures(std::declval<llvm::StringMap<bool> &>())"))


def _write_backends(dest: Path, backends: Sequence[str]) -> None:
    """The selected backends, each rendered from the backend template; the others removed."""
    for name in ("nvidia", "amd", "cpu", "spirv"):
        if name not in backends:
            shutil.rmtree(dest / "third_party" / name, ignore_errors=True)
    for name in backends:
        spec = BACKENDS[name]
        select = _HOST_SELECT if spec.llvm_target == "host" else (
            f"set(TB_LLVM_TARGET {spec.llvm_target})\nset(TB_LOOKUP {spec.lookup})")
        _render_dir(BACKEND_TEMPLATE, dest / "third_party" / name,
                    {"NAME": name, "CLASS": spec.cls, "GPU": spec.gpu, "TARGET_SELECT": select,
                     "EXTRA_CMAKE": spec.extra_cmake, "EXTRA_LINK": spec.extra_link, "EXTRA_DECL": spec.extra_decl,
                     "EXTRA_INIT": spec.extra_init, "EXTRA_STAGES": spec.extra_stages})


def _make_2024(dest: Path, backends: Sequence[str]) -> None:
    """What 2024 trees (G1) do differently: language extras in the core package, backends discovered by listing
    directories, and an nvidia backend that needs the CUDA headers setup.py downloads."""
    for name in backends:
        for lang in sorted((dest / "third_party" / name / "language").glob("*")):
            shutil.move(str(lang), dest / "python" / "triton" / "language" / "extra" / lang.name)
    init = dest / "python" / "triton" / "backends" / "__init__.py"
    text = init.read_text()
    start, end = text.index("    if os.environ.get(\"TRITON_BACKENDS_IN_TREE\""), text.index("    for name, value")
    text = text[:start] + _DIRECTORY_DISCOVERY + text[end:]
    text = text.replace("from importlib.metadata import entry_points\n", "")
    init.write_text(text.replace(text.splitlines()[0], '"""Backend discovery: the directories of this package."""'))
    # Upstream committed python/triton/_C/include -> ../../../include until April 2025 (#6381): a link out of the
    # package, which the official wheels never carried (triton 3.0.0's _C holds libtriton and libproton only)
    c_dir = dest / "python" / "triton" / "_C"
    c_dir.mkdir(parents=True, exist_ok=True)
    (c_dir / "include").symlink_to(Path("..", "..", "..", "include"))
    if "nvidia" in backends:
        cc = dest / "third_party" / "nvidia" / "triton_nvidia.cc"
        value = 'm.attr("VALUE") = 1;'
        text = cc.read_text().replace(value, value + '\n  m.attr("CUDA_VERSION") = CUDA_VERSION;')
        cc.write_text('#include "backend/include/cuda.h"\n' + text)


def _write_proton(dest: Path, generation: str, proton: bool) -> None:
    if not proton:
        shutil.rmtree(dest / "third_party" / "proton")
    elif generation in ("G3", "G4"):  # mid-2026 proton also needs ROCm's headers (setup.py: TRITON_ROCM_INCLUDE_PATH)
        cmake = dest / "third_party" / "proton" / "CMakeLists.txt"
        json_check = "if(NOT JSON_INCLUDE_DIR)"
        checks = _PROTON_ROCM + (_PROTON_XPUPTI if generation == "G4" else "")
        cmake.write_text(cmake.read_text().replace(json_check, checks + json_check))
    if proton and generation == "G4":  # Intel's tree: XPUPTI's headers in-tree, where only setup.py says they are
        pti = dest / "third_party" / "intel" / "backend" / "proton" / "include" / "pti"
        pti.mkdir(parents=True)
        (pti / "pti_view.h").write_text("#pragma once\n#define PTI_VERSION_MAJOR 0\n")


def _write_setup(dest: Path, generation: str, version: str, defaults: list[str]) -> None:
    """setup.py (python/setup.py in 2024 trees), and from G2 on pyproject.toml and build_helpers.py."""
    setup = _SETUP.format(version=version, backends=defaults, proton=_proton_setup(generation))
    if generation == "G1":
        (dest / "python" / "setup.py").write_text(setup)
        return
    (dest / "setup.py").write_text(setup)
    (dest / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=40.8.0", "cmake>=3.20,<4.0", "ninja>=1.11.1", '
        '"pybind11>=2.13.1"]\nbuild-backend = "setuptools.build_meta"\n')
    (dest / "python" / "build_helpers.py").write_text(_BUILD_HELPERS)


# pybind11 -> nanobind, as upstream's switch (#10283) rewrote the bindings; only what the example's C++ uses.
_NANOBIND_CXX = (
    ("#include <pybind11/pybind11.h>", "#include <nanobind/nanobind.h>\n#include <nanobind/stl/string.h>\n"
                                       "#include <nanobind/stl/vector.h>"),
    ("#include <pybind11/stl.h>", "#include <nanobind/stl/string.h>"),
    ("namespace py = pybind11;", "namespace py = nanobind;"),
    ("pybind11::module &&m", "nanobind::module_ &&m"),
    ("PYBIND11_MODULE(", "NB_MODULE("),
    ("pybind11::class_<", "nanobind::class_<"),
    ("pybind11::init<>()", "nanobind::init<>()"),
    ("pybind11::bytes(binary)", "nanobind::bytes(binary.data(), binary.size())"),
)
# Upstream adds examples/plugins with TRITON_EXT_ENABLED: shared libraries that link libtriton, put into the
# package's plugins/ dir (the tree's wheel-building setup.py builds every target).
_EXT_PLUGIN = """
  if(TRITON_EXT_ENABLED)
    add_library(TritonExamplePlugin SHARED ${PROJECT_SOURCE_DIR}/lib/ExamplePlugin.cpp)
    target_link_libraries(TritonExamplePlugin PRIVATE triton)
    if(DEFINED CMAKE_LIBRARY_OUTPUT_DIRECTORY)
      set_target_properties(TritonExamplePlugin PROPERTIES LIBRARY_OUTPUT_DIRECTORY
                            "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}/../plugins")
    endif()
  endif()
"""
_NANOBIND_CMAKE = """find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module)
  find_package(nanobind CONFIG REQUIRED HINTS "${Python3_SITELIB}")
  nanobind_build_library(nanobind-static)
  if(TRITON_STABLE_ABI)
    # the limited API of 3.12: one libtriton for every CPython from 3.12 on (a cp312-abi3 wheel)
    target_compile_definitions(nanobind-static PUBLIC Py_LIMITED_API=0x030C0000)
  endif()"""


# Upstream's wheel_headers component (#10847): what setup.py installs into the wheel with TRITON_EXT_ENABLED. The
# example declares it as upstream does; tritonbuild installs the same set itself for every generation, and a test
# holds the two sets equal.
_WHEEL_HEADERS = """
  set(_TRITON_WHEEL_INCLUDE "${TRITON_WHEEL_DIR}/include")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ COMPONENT wheel_headers DESTINATION "${_TRITON_WHEEL_INCLUDE}"
          FILES_MATCHING PATTERN "*.h")
  install(DIRECTORY ${PROJECT_BINARY_DIR}/include/ COMPONENT wheel_headers DESTINATION "${_TRITON_WHEEL_INCLUDE}"
          FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ COMPONENT wheel_headers DESTINATION "${_TRITON_WHEEL_INCLUDE}"
          FILES_MATCHING PATTERN "*.td")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ COMPONENT wheel_headers DESTINATION "${_TRITON_WHEEL_INCLUDE}/python"
          FILES_MATCHING PATTERN "*.h" PATTERN "triton" EXCLUDE)
"""


def _make_nanobind(dest: Path) -> None:
    """G4: the bindings in nanobind, the stable-ABI and extension options, the wheel_headers component."""
    for path in sorted(dest.rglob("*")):
        if path.suffix in (".cc", ".cpp", ".h") and path.is_file():
            text = path.read_text()
            for old, new in _NANOBIND_CXX:
                text = text.replace(old, new)
            path.write_text(text)
        elif path.name == "CMakeLists.txt":
            text = path.read_text().replace("pybind11::headers", "nanobind-static")
            text = text.replace('find_package(pybind11 CONFIG REQUIRED HINTS "${Python3_SITELIB}")', _NANOBIND_CMAKE)
            filecheck = '  configure_file("${LLVM_SYSPATH}/bin/FileCheck" "${TRITON_WHEEL_DIR}/FileCheck" COPYONLY)\n'
            text = text.replace(filecheck, filecheck + _WHEEL_HEADERS + _EXT_PLUGIN)
            text = text.replace('option(TRITON_BUILD_PROTON "Build the Triton Proton profiler" ON)',
                                'option(TRITON_BUILD_PROTON "Build the Triton Proton profiler" ON)\n'
                                'option(TRITON_STABLE_ABI "Build with Python Stable ABI (abi3) for Python 3.12+" OFF)\n'
                                'option(TRITON_EXT_ENABLED "Symbols visible to plugin extensions" OFF)\n'
                                'if(TRITON_EXT_ENABLED)\n  add_compile_definitions(TRITON_EXT_ENABLED=1)\nendif()')
            path.write_text(text)
    pyproject = dest / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"pybind11>=2.13.1"', '"nanobind==2.10.2"'))


def _write_pins(dest: Path, generation: str, llvm_hash: str) -> None:
    """The LLVM pin (llvm-hash.txt, or G3's llvm-info.json) and G1's single NVIDIA version."""
    if generation in ("G3", "G4"):
        (dest / "cmake" / "llvm-hash.txt").unlink()
        (dest / "cmake" / "llvm-info.json").write_text(json.dumps(
            {"llvm_hash": llvm_hash, "build_number": 1,
             "sha256sum": {"ubuntu-x64": "0" * 64, "almalinux-x64": "1" * 64}}, indent=2) + "\n")
    else:
        (dest / "cmake" / "llvm-hash.txt").write_text(llvm_hash + "\n")
    if generation == "G1":  # 2024 trees pinned one NVIDIA version for every component
        (dest / "cmake" / "nvidia-toolchain-version.json").unlink()
        (dest / "cmake" / "nvidia-toolchain-version.txt").write_text("12.4.99\n")


_HASH = "    def hash(self) -> str:\n"
_ADD_STAGES = "    def add_stages(self, stages: dict, options: object, language: str) -> None:\n"


def _plugin_api(compiler: Path, api: str) -> None:
    text = compiler.read_text()
    if api == "old":
        text = text.replace(_ADD_STAGES, "    def add_stages(self, stages: dict, options: object) -> None:\n")
        start = text.index(_HASH)
        text = text[:start] + text[text.index("\n\n", start) + 2:]
    elif api == "plain-supports-target":
        text = text.replace("    @staticmethod\n    def supports_target(target: GPUTarget) -> bool:\n",
                            "    def supports_target(self, target: GPUTarget) -> bool:\n")
    elif api == "extra":
        text += "\n    def get_codegen_implementation(self, options: object) -> dict:\n        return {}\n"
    elif api != "current":
        raise ValueError(f"unknown plugin api {api!r}")
    compiler.write_text(text)


def write_plugin(
    dest: Path,
    name: str = "shared",
    *,
    name_conf: bool = True,
    language: bool = True,
    triton_hash: str | None = None,
    broken: bool = False,
    llvm_targets: Sequence[str] = (),
    trailing_newline: bool = False,
    api: str = "current",
    hang_on_specialised: bool = False,
) -> Path:
    """Write an external plugin into ``dest``. ``name`` must match what Triton will derive for it.

    ``api`` picks the backend interface it was written for: ``current`` (this tree's), ``old`` (no ``hash``,
    two-argument ``add_stages``: an older Triton), ``plain-supports-target`` (a plain method where Triton calls the
    class's static one), ``extra`` (also a method no Triton calls any more). ``hang_on_specialised``: its stage never
    ends for a kernel with the launcher's divisibility attributes (what the compile check must catch)."""
    dest = Path(dest)
    _render_dir(PLUGIN_TEMPLATE, dest, {
        "NAME": name,
        "BROKEN": "#error this plugin is broken on purpose (tritonbuild test fixture)" if broken else "",
        "HANG": str(hang_on_specialised),
    })
    _plugin_api(dest / "backend" / "compiler.py", api)
    if name_conf:
        (dest / "backend" / "name.conf").write_text(name + ("\n" if trailing_newline else ""))
    if language:
        (dest / "language" / name).mkdir(parents=True, exist_ok=True)
        (dest / "language" / name / "__init__.py").write_text(f'PLUGIN = "{name}"\n')
    if triton_hash:
        (dest / "triton-hash.txt").write_text(triton_hash + "\n")
    if llvm_targets:
        (dest / "backend" / "llvm-targets.txt").write_text(";".join(llvm_targets) + "\n")
    return dest
