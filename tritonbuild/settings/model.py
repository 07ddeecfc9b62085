"""Every setting, declared once, and the one precedence chain: default < recipe < env < CLI.

A ``Spec`` holds all there is to know of a setting: its kind (str, int, bool, list or a word from fixed
choices), default, range or choices, environment variables, command-line flag (with its ``--no-`` form) and
whether a recipe may set it. The click options (``tritonbuild.cli.options``), the recipe model and schema
(``tritonbuild.settings.recipes``) and the README's settings table (``tritonbuild.settings.docs``) are made
from ``SPECS``; nothing else declares a setting.

Each resolved value remembers its origin (``default``, ``recipe <path>``, ``env NAME``, ``cli --flag``) so
the plan can say where every choice came from. Resolvers take ``env`` as an argument, never os.environ.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tritonbuild.errors import UserError

TRUE = {"ON", "1", "YES", "TRUE", "Y"}
FALSE = {"OFF", "0", "NO", "FALSE", "N", ""}


@dataclass(frozen=True)
class Resolved:
    value: Any
    origin: str


def env_bool(env: Mapping[str, str], name: str) -> bool | None:
    if name not in env:
        return None
    text = env[name].strip().upper()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise UserError(
        f"The environment variable {name}={env[name]!r} is not a yes/no value. Use 1/0, ON/OFF, YES/NO or "
        f"TRUE/FALSE, or unset it."
    )


def env_int(env: Mapping[str, str], name: str) -> int | None:
    """A whole number; its range is the setting's, checked with every other origin's in ``resolve_settings``."""
    if name not in env or not env[name].strip():
        return None
    try:
        return int(env[name])
    except ValueError:
        raise UserError(f"The environment variable {name}={env[name]!r} is not a whole number.") from None


EnvReader = Callable[[Mapping[str, str]], "tuple[Any, str] | None"]


def _from(name: str, read: Callable[[Mapping[str, str], str], Any]) -> EnvReader:
    def reader(env: Mapping[str, str]) -> tuple[Any, str] | None:
        value = read(env, name)
        return None if value is None else (value, name)

    return reader


def _str(env: Mapping[str, str], name: str) -> str | None:
    return env.get(name) or None


def _list_semicolon(env: Mapping[str, str], name: str) -> list[str] | None:
    if name not in env or not env[name].strip():
        return None
    return [p.strip() for p in env[name].strip().split(";") if p.strip()]


def _shlex(env: Mapping[str, str], name: str) -> list[str] | None:
    if name not in env or not env[name].strip():
        return None
    try:
        return shlex.split(env[name])
    except ValueError as exc:
        raise UserError(f"The environment variable {name} cannot be split into arguments: {exc}.") from None


# setup.py's build-type variables, in setup.py's order of priority.
BUILD_TYPE_ENV = (
    ("DEBUG", "Debug"),
    ("REL_WITH_DEB_INFO", "RelWithDebInfo"),
    ("TRITON_REL_BUILD_WITH_ASSERTS", "TritonRelBuildWithAsserts"),
    ("TRITON_BUILD_WITH_O1", "TritonBuildWithO1"),
)


def _build_type(env: Mapping[str, str]) -> tuple[Any, str] | None:
    for name, value in BUILD_TYPE_ENV:
        if env_bool(env, name):
            return value, name
    return None


KINDS = ("str", "int", "bool", "list", "word")


@dataclass(frozen=True)
class Spec:
    name: str
    default: Any
    flag: str | None  # "--x", "-j/--jobs", or for yes/no settings "--x/--no-x"
    env: tuple[EnvReader, ...]
    env_names: tuple[str, ...]
    help: str
    kind: str = "str"  # one of KINDS: the type of the value, whichever origin gives it
    minimum: int | None = None  # whole-number settings: the one range for flag, environment and recipe
    maximum: int | None = None
    choices: tuple[str, ...] = ()  # "word" settings: the one set of words for flag, env and recipe
    recipe: bool = True  # whether a recipe may set it (under its own name)
    recipe_also: tuple[str, ...] = ()  # words a recipe may give a yes/no setting besides true/false ("auto")

    def check(self, value: Any, origin: str) -> None:
        """Refuse a value outside the setting's range or choices, whichever origin it came from."""
        if self.choices and value is not None and value not in self.choices:
            raise UserError(f"The setting {self.name} = {value!r} ({origin}) must be one of: "
                            f"{', '.join(self.choices)}.")
        if self.minimum is None or value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum or (
                self.maximum is not None and value > self.maximum):
            span = f"{self.minimum}-{self.maximum}" if self.maximum is not None else f"{self.minimum} or more"
            raise UserError(f"The setting {self.name} = {value!r} ({origin}) must be a whole number {span}.")


def _kind(default: Any, flag: str | None, minimum: int | None, choices: tuple[str, ...]) -> str:
    if choices:
        return "word"
    if minimum is not None:
        return "int"
    if isinstance(default, bool) or (flag and "/--no-" in flag):
        return "bool"
    return "list" if isinstance(default, list) else "str"


def _spec(name: str, default: Any, flag: str | None, env: dict[str, Callable[..., Any]] | None, help: str,
          extra: tuple[EnvReader, ...] = (), extra_names: tuple[str, ...] = (), minimum: int | None = None,
          maximum: int | None = None, choices: tuple[str, ...] = (), recipe: bool | None = None,
          recipe_also: tuple[str, ...] = ()) -> Spec:
    """A setting; its kind follows from its default, flag, range and choices. A recipe may set every setting
    that has a flag unless ``recipe`` says otherwise (machine-specific paths come from the environment only)."""
    env = env or {}
    readers = tuple(_from(n, r) for n, r in env.items()) + extra
    return Spec(name, default, flag, readers, tuple(env) + extra_names, help, _kind(default, flag, minimum, choices),
                minimum, maximum, choices, flag is not None if recipe is None else recipe, recipe_also)


SPECS: tuple[Spec, ...] = (
    _spec("source", None, "-s/--source", None, "Triton source: a path or a git URL (default: the current directory)"),
    _spec("ref", None, "--ref", None, "git ref to check out when --source is a URL"),
    _spec("backends", None, "-b/--backends", {"TRITON_CODEGEN_BACKENDS": _str},
          "in-tree backends: ';' or ',' separated, or 'all' (default: the source's own default list)"),
    _spec("plugin_dirs", [], "--plugin-dir", {"TRITON_PLUGIN_DIRS": _list_semicolon},
          "external plugin directories (repeatable; env: ';' separated; in a recipe: the key plugins)",
          recipe=False),
    _spec("llvm", "auto", "--llvm", {"LLVM_SYSPATH": _str},
          "LLVM: auto, system, download, source or a prefix path"),
    _spec("llvm_mirror", "https://oaitriton.blob.core.windows.net/public/llvm-builds", "--llvm-mirror",
          {"TRITONBUILD_LLVM_MIRROR": _str}, "base URL of prebuilt LLVM archives (a company mirror)"),
    _spec("allow_unpinned", False, "--allow-unpinned/--no-allow-unpinned", {"TRITONBUILD_ALLOW_UNPINNED": env_bool},
          "accept a prebuilt LLVM the pin has no sha256 for (llvm-hash.txt pins); its sha256 is logged"),
    _spec("llvm_src", None, "--llvm-src", {"TRITONBUILD_LLVM_SRC": _str},
          "llvm-project URL or local clone for --llvm source (default: the upstream repository)"),
    _spec("llvm_assertions", False, "--llvm-assertions/--no-llvm-assertions", None,
          "build LLVM from source with assertions"),
    _spec("clang", False, "--clang/--no-clang", {"TRITON_BUILD_WITH_CLANG_LLD": env_bool},
          "build with clang and lld instead of the default compiler (a recipe may say \"auto\": when installed)",
          recipe_also=("auto",)),
    _spec("ccache", None, "--ccache/--no-ccache", {"TRITON_BUILD_WITH_CCACHE": env_bool},
          "use ccache (default: on when ccache is found)"),
    _spec("compiler_cache", None, "--compiler-cache", {"TRITONBUILD_COMPILER_CACHE": _str},
          "compiler cache: ccache, sccache or none (default: ccache when found; sccache's remote storage comes "
          "from its own SCCACHE_* variables)", choices=("ccache", "sccache", "none")),
    _spec("distcc", None, "--distcc", {"TRITONBUILD_DISTCC_HOSTS": _str},
          "distcc hosts (DISTCC_HOSTS syntax, 'host[:port]/jobs ...'): compile on a distcc fleet behind ccache, "
          "with compile jobs sized to its slots"),
    _spec("stable_paths", True, "--stable-paths/--no-stable-paths", {"TRITONBUILD_STABLE_PATHS": env_bool},
          "with a compiler cache, CMake sees the source and plugins through links in the build dir, so another "
          "checkout of the same commit at another path hits the cache"),
    _spec("unity_build", 0, "--unity-build", {"TRITONBUILD_UNITY_BUILD": env_int},
          "CMake unity builds: this many source files per translation unit (0: off); a target whose files fail "
          "to compile joined is learned and built file by file (unity-learned.txt in the build dir)",
          minimum=0),
    _spec("unity_exclude", [], "--unity-exclude", None,
          "a CMake target compiled file by file under --unity-build (repeatable): one whose files clash when joined"),
    _spec("jobs", None, "-j/--jobs", {"MAX_JOBS": env_int},
          "parallel compile jobs (default: min(cores, total GiB / 2.5))", minimum=1),
    _spec("link_jobs", None, "--link-jobs", {"TRITON_PARALLEL_LINK_JOBS": env_int},
          "parallel link jobs (default: min(jobs, total GiB / 8), at least 1)", minimum=1),
    _spec("build_type", "TritonRelBuildWithAsserts", "--build-type", None,
          "CMake build type; the default is setup.py's (-O2 -g, assertions on). Release, Debug, RelWithDebInfo, "
          "TritonBuildWithO1",
          extra=(_build_type,), extra_names=tuple(n for n, _ in BUILD_TYPE_ENV)),
    _spec("linker", "auto", "--linker", {"TRITONBUILD_LINKER": _str},
          "linker for gcc builds: auto (lld when installed, else gold), lld, gold, bfd, default (the compiler's); "
          "--clang always links with lld", choices=("auto", "lld", "gold", "bfd", "default")),
    _spec("debug_info", "auto", "--debug-info", {"TRITONBUILD_DEBUG_INFO": _str},
          "debug info in the objects: lines (-g1, file:line in backtraces), full (-g, as setup.py), none (-g0), "
          "tree (the build type's own flags); auto: lines for build types that compile with -g "
          "(TritonRelBuildWithAsserts, Debug, RelWithDebInfo), tree otherwise",
          choices=("auto", "lines", "full", "none", "tree")),
    _spec("proton", None, "--proton/--no-proton", {"TRITON_BUILD_PROTON": env_bool},
          "build the proton profiler (default: on when the source has it and CUPTI headers are found)"),
    _spec("offline", False, "--offline/--no-offline", {"TRITON_OFFLINE_BUILD": env_bool},
          "never touch the network; fail listing what is missing"),
    _spec("cmake_args", [], "--cmake-arg", {"TRITON_APPEND_CMAKE_ARGS": _shlex},
          "extra CMake arguments appended to the configure command"),
    _spec("deps", [], "--dep", {"TRITONBUILD_DEPS": _list_semicolon},
          "NAME=PATH|URL: a local checkout (or a git URL, cloned at the pinned tag) for a dependency the tree "
          "fetches at configure time (FETCHCONTENT_SOURCE_DIR_<NAME>); repeatable, env ';' separated"),
    _spec("targets", [], "--target", None,
          "extra CMake targets to build besides libtriton (triton-opt, a plugin's tool such as triton-shared-opt); "
          "they stay in the build dir, the wheel does not change"),
    _spec("strict", False, "--strict/--no-strict", None, "refuse to add back backends the source cannot drop"),
    _spec("compile_check", True, "--compile-check/--no-compile-check", {"TRITONBUILD_COMPILE_CHECK": env_bool},
          "after the import, compile real kernels (matmul fp16/bf16/fp8, reduction, softmax, split/permute, atomics) "
          "with the launcher's specialisations for each backend's targets; a failure or hang keeps the wheel out"),
    _spec("compile_check_timeout", 120, "--compile-check-timeout", {"TRITONBUILD_COMPILE_CHECK_TIMEOUT": env_int},
          "seconds one kernel of the compile check may take before it counts as a hang", minimum=1),
    _spec("require_pinned_llvm", False, "--require-pinned-llvm/--no-require-pinned-llvm",
          {"TRITONBUILD_REQUIRE_PINNED_LLVM": env_bool},
          "refuse an LLVM that is not (or does not record being) the source's pin (the nightly recipe sets it)"),
    _spec("api_check", True, "--api-check/--no-api-check", None,
          "refuse a backend that lacks a method the source's BaseBackend/DriverBase declare abstract (off: a warning)"),
    _spec("wheelhouse", None, "--wheelhouse", {"TRITONBUILD_WHEELHOUSE": _str},
          "a dir of wheels (scikit-build-core, pybind11/nanobind) for the isolated build environment of a target "
          "interpreter that lacks them, offline"),
    _spec("stable_abi", None, "--stable-abi/--no-stable-abi", {"TRITON_STABLE_ABI": env_bool},
          "one cp312-abi3 wheel for CPython 3.12+ (TRITON_STABLE_ABI; 3.10/3.11 and free-threaded Pythons get their "
          "own); default: on when the tree has the option, as upstream's wheels.yml builds; --no-stable-abi: a wheel "
          "per interpreter"),
    _spec("ext_headers", True, "--ext-headers/--no-ext-headers", {"TRITON_EXT_ENABLED": env_bool},
          "extension headers in the wheel (triton/include: Triton's *.h, *.td and generated *.h.inc, for every tree "
          "generation) and TRITON_EXT_ENABLED=ON where the tree has it, as PyTorch's and Intel's wheels do"),
    _spec("wheel_name", "triton", "--wheel-name", {"TRITON_WHEEL_NAME": _str}, "distribution name of the wheel"),
    _spec("version_suffix", None, "--version-suffix", {"TRITON_WHEEL_VERSION_SUFFIX": _str},
          "appended to the version (default: +git<sha8> off release branches, like setup.py)"),
    _spec("version_scheme", "setup", "--version-scheme", {"TRITONBUILD_VERSION_SCHEME": _str},
          "version suffix: setup (+git<sha8> off release branches), git, date (.devYYYYMMDD), date+git, none",
          choices=("setup", "git", "date", "date+git", "none")),
    _spec("requires_python", ">=3.10", None, None, "Requires-Python of the wheel", recipe=True),
    _spec("zip_level", 6, "--zip-level", {"TRITONBUILD_ZIP_LEVEL": env_int},
          "deflate level of the wheel, 0-9 (default 6, like zipfile; the dev recipe uses 1: a 400 MB libtriton "
          "zips several times faster)", minimum=0, maximum=9),
    _spec("reproducible", False, "--reproducible/--no-reproducible", {"TRITONBUILD_REPRODUCIBLE": env_bool},
          "byte-identical wheels: SOURCE_DATE_EPOCH from the commit, prefix maps, fixed zip metadata"),
    _spec("strip", False, "--strip/--no-strip", None, "strip debug info from the installed libtriton"),
    _spec("repair", False, "--repair/--no-repair", {"TRITONBUILD_REPAIR": env_bool},
          "manylinux repair with auditwheel (grafts needed libraries into the wheel)"),
    _spec("repair_exclude", ["libcuda.so.1"], "--repair-exclude", None,
          "libraries the user's system provides (like the CUDA driver): never bundled, never grafted by auditwheel"),
    _spec("llvm_link", "auto", "--llvm-link", {"TRITONBUILD_LLVM_LINK": _str},
          "how libtriton links a shared-libLLVM LLVM (Debian's): auto (static for wheels when its static libraries "
          "are installed, shared for develop), static, shared", choices=("auto", "static", "shared")),
    _spec("bundle_libs", True, "--bundle-libs/--no-bundle-libs", {"TRITONBUILD_BUNDLE_LIBS": env_bool},
          "self-contained wheels: copy needed libraries from outside the manylinux allow-list into triton/_C "
          "($ORIGIN run paths) and drop needed entries nothing uses"),
    _spec("ccache_remote", None, "--ccache-remote", {"TRITONBUILD_CCACHE_REMOTE": _str},
          "ccache remote storage shared by build machines (redis://host:port, http://host/path)"),
    _spec("json_syspath", None, None, {"JSON_SYSPATH": _str}, "nlohmann/json prefix (default: /usr when found)"),
    _spec("bundle_nvidia_tools", True, "--bundle-nvidia-tools/--no-bundle-nvidia-tools", None,
          "copy ptxas, cuobjdump and nvdisasm (TRITON_<TOOL>_PATH, else a CUDA toolkit's) into backends/nvidia/bin, "
          "as setup.py does"),
    _spec("ptxas", None, None, {"TRITON_PTXAS_PATH": _str},
          "ptxas given to Triton's CMake; also the one bundled (default: a CUDA toolkit's real binary)"),
    _spec("cupti_include", None, None, {"TRITON_CUPTI_INCLUDE_PATH": _str},
          "CUPTI headers for proton (default: a CUDA toolkit's, else NVIDIA's CUPTI wheel at the tree's pin)"),
    _spec("cupti_lib", None, None, {"TRITON_CUPTI_LIB_PATH": _str},
          "CUPTI libraries copied into backends/nvidia/lib/cupti (default: a toolkit's, else the CUPTI wheel's)"),
    _spec("cudart_path", None, None, {"TRITON_CUDART_PATH": _str},
          "CUDA runtime headers (cuda.h) for backends/nvidia/include (default: a toolkit's, else the PyPI wheel's)"),
    _spec("cudacrt_path", None, None, {"TRITON_CUDACRT_PATH": _str}, "CUDA CRT headers (an include dir with crt/)"),
    _spec("ptxas_blackwell", None, None, {"TRITON_PTXAS_BLACKWELL_PATH": _str},
          "ptxas for sm_100+ bundled as backends/nvidia/bin/ptxas-blackwell, for trees that look for it "
          "(default: a second CUDA toolkit's ptxas)"),
    _spec("roctracer_include", None, None, {"TRITON_ROCTRACER_INCLUDE_PATH": _str},
          "roctracer headers for proton (default: the amd backend's third_party/amd/backend/include)"),
    _spec("rocm_include", None, None, {"TRITON_ROCM_INCLUDE_PATH": _str},
          "ROCm headers for proton in trees that require ROCM_INCLUDE_DIR (default: third_party/amd/backend/include)"),
    _spec("xpupti_include", None, None, {"TRITON_XPUPTI_INCLUDE_PATH": _str},
          "Intel XPUPTI headers for proton in trees that require XPUPTI_INCLUDE_DIR (default: "
          "third_party/intel/backend/proton/include)"),
    _spec("pypi_index", "https://pypi.org/simple", None,
          {"TRITONBUILD_PYPI_INDEX": _str, "PIP_INDEX_URL": _str},
          "package index NVIDIA's CUDA/CUPTI wheels are fetched from when no toolkit has the files"),
)
SPEC_BY_NAME = {s.name: s for s in SPECS}


def resolve_settings(
    cli: Mapping[str, Any],
    env: Mapping[str, str],
    recipe: Mapping[str, Any] | None = None,
    recipe_origin: str = "recipe",
) -> dict[str, Resolved]:
    """Apply default < recipe < environment < CLI to every setting. ``None`` in ``cli`` means not given."""
    recipe = recipe or {}
    unknown = set(cli) - set(SPEC_BY_NAME)
    if unknown:
        raise ValueError(f"unknown settings from the CLI: {sorted(unknown)}")
    out: dict[str, Resolved] = {}
    for spec in SPECS:
        chosen = Resolved(spec.default, "default")
        if spec.name in recipe and recipe[spec.name] is not None:
            chosen = Resolved(recipe[spec.name], recipe_origin)
        for reader in spec.env:
            hit = reader(env)
            if hit is not None:
                chosen = Resolved(hit[0], f"env {hit[1]}")
                break
        given = cli.get(spec.name)
        if given is not None and given != [] and given != ():
            chosen = Resolved(list(given) if isinstance(given, tuple) else given, f"cli {spec.flag}")
        spec.check(chosen.value, chosen.origin)
        out[spec.name] = chosen
    return out
