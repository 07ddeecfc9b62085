"""The Plan: an immutable, serialisable value that says exactly what ``build`` will do.

``tritonbuild plan --json`` lists ``Plan.to_dict()``; ``build`` executes the same value. ``Plan.key`` (a
hash of what makes a build directory reusable) keys the persistent build directory; ``identity`` (a hash of what
the wheel is made from) decides whether a kept wheel is this plan's. Neither depends on what the cache holds: a
part provided when the build runs (a downloaded LLVM, NVIDIA's wheels) is the same part found in the cache later.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tritonbuild.jsonout import SCHEMA as SCHEMA_VERSION  # the plan's schema is every --json's
from tritonbuild.redact import redact
from tritonbuild.settings.model import Settings

# Cache variables that change with a commit or with -j but do not make an existing build dir unusable.
# The packaging defines only change the link of libtriton and the install step, never an object file.
VOLATILE_DEFINES = frozenset({"TRITON_VERSION", "TRITON_PARALLEL_LINK_JOBS", "TRITONBUILD_LLVM_LINK",
                              "TRITONBUILD_BUNDLE_PYTHON", "TRITONBUILD_SYSTEM_LIBS"})


@dataclass(frozen=True)
class Case:
    id: str  # kernel@target
    kernel: str
    backend: str
    target: dict[str, Any]  # what corpus_kernels.py builds a GPUTarget from

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kernel": self.kernel, "backend": self.backend, "target": self.target}


@dataclass(frozen=True)
class CompileCheckPlan:
    enabled: bool
    timeout: int  # seconds per case
    cases: tuple[Case, ...]
    why_off: str | None = None  # set when not enabled

    def describe(self) -> str:
        if not self.enabled:
            return f"off ({self.why_off})"
        by_target: dict[str, list[str]] = {}
        for case in self.cases:
            kernel, _, target = case.id.partition("@")
            by_target.setdefault(target, []).append(kernel)
        parts = [f"{t}: {', '.join(k)}" for t, k in by_target.items()]
        return f"{len(self.cases)} kernels, {self.timeout} s each; " + "; ".join(parts)


@dataclass(frozen=True)
class CanaryPlan:
    """Whether ``build`` compiles a few units with -fsyntax-only after configure (tritonbuild.resolve.canary)."""

    enabled: bool
    why: str
    max_units: int = 64
    timeout: int = 300  # seconds one unit may take
    budget: float | None = None  # seconds of compiling after which no unit starts (None: the whole cover)
    budget_why: str = ""  # where the budget (or its absence) came from

    def describe(self) -> str:
        """One line: why it runs (or not), and its time budget with where that came from."""
        budget = f"budget {self.budget:g} s" if self.budget is not None else "no budget (the whole cover)"
        return f"{self.why}; {budget}{f', {self.budget_why}' if self.budget_why else ''}"


@dataclass(frozen=True)
class PatchInfo:
    """One patch applied to tritonbuild's copy of the source (``--patch``, a recipe's ``patches``)."""

    path: str  # as given (a recipe's: joined to the recipe's dir)
    sha256: str  # of its bytes
    files: tuple[str, ...]  # the files it touches, relative to the top of the source


def patches_hash(patches: tuple[PatchInfo, ...] | list[PatchInfo]) -> str | None:
    """The combined sha256 of a patch set, in order (None: no patch)."""
    if not patches:
        return None
    return hashlib.sha256("\n".join(p.sha256 for p in patches).encode()).hexdigest()


@dataclass(frozen=True)
class SourcePlan:
    root: str
    generation: str
    version: str | None
    commit: str | None
    dirty: bool | None
    branch: str | None
    commit_time: int | None
    tuple_limit: int
    tuple_limit_known: bool
    has_proton: bool
    proton_in_tuple: str
    in_tree_backends: tuple[str, ...]
    default_backends: tuple[str, ...]
    required_backends: tuple[str, ...]
    build_requires: tuple[str, ...] = ()  # pyproject.toml's [build-system] requires
    bindings: str = "pybind11"  # pybind11, or nanobind (mid-2026 trees)
    stable_abi: bool = False  # the tree has TRITON_STABLE_ABI (a cp312-abi3 wheel for 3.12+)
    checkout: str | None = None  # with patches: the user's checkout (root is tritonbuild's patched copy of it)
    patches: tuple[PatchInfo, ...] = ()  # applied to the copy at root, in order
    submodules: tuple[tuple[str, str], ...] = ()  # --submodule: (path, commit) exported into the copy at root


@dataclass(frozen=True)
class BackendPlan:
    name: str
    origin: str  # "in-tree" or "plugin"
    path: str
    language: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    llvm_targets: tuple[str, ...] = ()
    commit: str | None = None
    dirty: bool | None = None
    name_from: str | None = None  # plugins: "name.conf" or "directory name"
    given_as: str | None = None  # plugins: "--plugin-dir", "env TRITON_PLUGIN_DIRS", ...
    triton_pin: str | None = None
    triton_pin_from: str | None = None  # plugins: "triton-hash.txt" or "its triton submodule"
    pin_matches_source: bool | None = None
    api: dict[str, Any] | None = None  # the compatibility check: verdict, findings, C++ drift (resolve.backend_api)
    checkout: str | None = None  # plugins with patches: the plugin dir given (path is tritonbuild's patched copy)
    patches: tuple[PatchInfo, ...] = ()  # plugins: --patch NAME=FILE, applied to the copy at path, in order


@dataclass(frozen=True)
class LLVMPlan:
    pin_file: str
    pinned_hash: str
    build_number: int | None
    sha256: dict[str, str]
    host_suffix: str | None
    archive: str | None
    required_targets: tuple[str, ...]
    needs_lld: bool  # the source or a selected backend runs find_package(LLD)
    strategy: str  # "prefix", "cached", "download", "source", "system" or "none" (auto picks one)
    found_by: str | None
    prefix: str | None
    version: str | None
    targets_built: tuple[str, ...]
    link_dylib: bool
    revision: str | None
    is_pinned: bool | None  # None: this LLVM does not record its commit
    problem: str | None  # why no usable LLVM was chosen, and what to run
    rejected: tuple[tuple[str, str], ...] = ()  # (prefix, reason) of candidates not taken
    static_libs: bool = True  # the LLVM has its component archives (prebuilt and source-built ones are static)
    static_missing: tuple[str, ...] = ()  # what a static link would still need
    link: str = "static"  # how libtriton links LLVM: "static", or "shared" (a libLLVM.so the wheel must carry)


@dataclass(frozen=True)
class NvidiaPart:
    """Files the nvidia backend needs next to libtriton (setup.py downloads them into the source tree)."""

    name: str  # "cuda-headers", "cupti-headers", "cupti-libs"
    dest: str  # under triton/backends/nvidia: "include", "lib/cupti"
    dirs: tuple[str, ...]  # where the files are on this machine (a wheel's: its unpacked dir in the cache)
    found_by: str  # "env TRITON_CUDART_PATH", "CUDA toolkit /usr/local/cuda", "PyPI nvidia-cuda-runtime==..."
    why: str
    roots: tuple[str, ...] = ()  # headers: the names the backend includes (the closure is installed)
    files: tuple[tuple[str, str], ...] = ()  # (dir, path in it) known now; empty while a wheel is to fetch
    wheels: tuple[str, ...] = ()  # PyPI specs to download when the build runs


@dataclass(frozen=True)
class ToolchainPlan:
    c_compiler: str | None
    cxx_compiler: str | None
    linker: str  # "lld", "gold", "bfd" or "default" (tritonbuild.resolve.linker)
    ccache: str | None  # the ccache launcher, when ccache is the compiler cache
    jobs: int
    link_jobs: int
    build_type: str
    proton: bool
    offline: bool
    mem_total_gib: float = 0.0  # this host's memory, for the out-of-memory hint
    compiler_cache: str = "none"  # ccache, sccache or none (tritonbuild.resolve.compilercache)
    sccache: str | None = None  # the sccache launcher
    distcc: str | None = None  # distcc, run behind ccache (CCACHE_PREFIX) or as the launcher
    distcc_hosts: str | None = None  # DISTCC_HOSTS given to it
    lld_dir: str | None = None  # handed to gcc with -B so that -fuse-ld=lld finds ld.lld
    debug_info: str = "tree"  # lines (-g1), full (-g), none (-g0) or tree (the build type's flags)
    unity_batch: int = 0  # CMake unity builds: source files per unity translation unit (0: off)
    unity_exclude: tuple[str, ...] = ()  # targets compiled file by file even so

    @property
    def debug_flag(self) -> str | None:
        """The -g level appended after the build type's flags (the last -g wins), or None."""
        return {"lines": "-g1", "full": "-g", "none": "-g0"}.get(self.debug_info)

    @property
    def launcher(self) -> str | None:
        """CMAKE_<LANG>_COMPILER_LAUNCHER: the compiler cache, else distcc alone."""
        return self.ccache or self.sccache or (self.distcc if self.compiler_cache == "none" else None)


@dataclass(frozen=True)
class WheelPlan:
    name: str
    version: str
    requires_python: str
    entry_points: tuple[tuple[str, str], ...]
    scripts: tuple[tuple[str, str], ...]
    out_dir: str
    bundle_libs: bool = True  # copy needed non-system shared libraries into triton/_C ($ORIGIN run paths)
    system_libs: tuple[str, ...] = ()  # besides the manylinux allow-list: libraries the user's system provides
    zip_level: int = 6  # deflate level of the wheel's members
    requires: tuple[str, ...] = ()  # Requires-Dist: the source's setup.py install_requires
    python_abi: str = ""  # the target interpreter's ABI (cp312, cp313t)
    py_api: str | None = None  # "cp312": a limited-API wheel tagged cp312-abi3 (TRITON_STABLE_ABI), else None

    @property
    def tag(self) -> str:
        """The wheel's python and ABI tags: cp312-abi3, or the interpreter's own (cp311-cp311, cp313-cp313t)."""
        if self.py_api:
            return f"{self.py_api}-abi3"
        return f"{self.python_abi[:5]}-{self.python_abi}" if self.python_abi else "?"


@dataclass(frozen=True)
class CMakePlan:
    source_dir: str
    build_dir: str  # the persistent dir for this plan: <cache>/build/<key>
    generator: str
    defines: tuple[tuple[str, str], ...]
    extra_args: tuple[str, ...]
    build_targets: tuple[str, ...]
    install_component: str
    env: tuple[tuple[str, str], ...]
    plugin_shims: tuple[tuple[str, str], ...]  # (shim dir, plugin dir as CMake sees it) of plugins without name.conf
    # (link, real path): CMake sees the source and plugins through these links (tritonbuild.resolve.pathviews)
    views: tuple[tuple[str, str], ...] = ()

    def define(self, name: str) -> str | None:
        return dict(self.defines).get(name)


@dataclass(frozen=True)
class Plan:
    tritonbuild_version: str
    source: SourcePlan
    backends: tuple[BackendPlan, ...]
    backends_tuple: tuple[str, ...]
    llvm: LLVMPlan
    toolchain: ToolchainPlan
    wheel: WheelPlan
    cmake: CMakePlan
    python: str
    cache_root: str
    settings: Settings  # in JSON its report: each value as given, with its origin
    key: str
    fingerprint: str = ""  # like key, with the source, cache and plugin directories left out
    reproducible: bool = False
    strip: bool = False
    repair: tuple[str, ...] | None = None  # auditwheel repair with these --exclude names; None: no repair
    repair_plat: str | None = None  # the policy repair gives (auditwheel repair --plat); None: the lowest met
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    nvidia: tuple[NvidiaPart, ...] = ()
    deps: tuple[Any, ...] = ()  # configure-time downloads the tree declares (tritonbuild.resolve.fetchdeps.Dep)
    compile_check: CompileCheckPlan | None = None  # the kernels the wheel must compile before it is published
    canary: CanaryPlan | None = None  # the syntax-only compile before the build
    preflight: tuple[str, ...] = ()  # problems the include preflight found, kept (check-llvm) instead of refused
    serves: tuple[str, ...] = ()  # further interpreters a cp312-abi3 wheel is for: each imports it before publishing
    schema: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def backend_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.backends)

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON-ready data, with URL secrets redacted (``redact``): it is printed and written."""
        data = asdict(self)
        data["settings"] = self.settings.report()
        out: dict[str, Any] = redact(data)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def compute_key(
    *,
    source_root: str,
    python: str,
    defines: tuple[tuple[str, str], ...],
    extra_args: tuple[str, ...],
    build_type: str,
    targets: tuple[str, ...],
    patches: str | None = None,
) -> str:
    """What makes a build directory reusable: the same source, Python, CMake cache and build type. URL secrets are
    hashed redacted (a short hash of a low-entropy password could be brute-forced; the key is printed)."""
    identity = {
        "source": source_root,
        "python": python,
        "defines": sorted((k, v) for k, v in defines if k not in VOLATILE_DEFINES),
        "extra_args": list(extra_args),
        "build_type": build_type,
        "targets": list(targets),
    }
    if patches:  # the combined hash of the patches (absent without: keys of unpatched builds stay as they were)
        identity["patches"] = patches
    return hashlib.sha256(json.dumps(redact(identity), sort_keys=True).encode()).hexdigest()[:16]


# LLVM strategies whose prefix is an entry of tritonbuild's cache at the source's pin: "download" and "source" fill
# it when the build runs, "cached" finds it filled. What is probed of it once it is there (its version, targets,
# revision, how it was found) is a function of the pin and the prefix, so it is no part of the plan's identity.
PROVIDED_LLVM = frozenset({"download", "source", "cached"})
_PROBED_LLVM = ("strategy", "found_by", "version", "targets_built", "link_dylib", "static_libs", "static_missing",
                "revision", "is_pinned")


def identity_dict(plan: Plan) -> dict[str, Any]:
    """The plan as JSON-ready data (redacted) without what says how its parts are had *now* rather than what they
    are: the notes and warnings (words, some saying "downloaded when the build runs"), each NVIDIA part's files
    (listed once unpacked) and wheels (the downloads still to do), the LLVM candidates not taken, and the probed
    facts of an LLVM tritonbuild provides in its cache at the pin (``PROVIDED_LLVM``). Whatever of those changes the
    build itself is in the plan elsewhere (the defines, the key), and the files are in the build's inputs. Nor where
    the wheel is published: ``--out`` changes no byte of it (a kept wheel is published again into the new dir)."""
    data = plan.to_dict()
    data.pop("notes", None)
    data.pop("warnings", None)
    data["wheel"].pop("out_dir", None)
    for part in data.get("nvidia") or ():
        part.pop("files", None)
        part.pop("wheels", None)
    llvm = data["llvm"]
    llvm.pop("rejected", None)
    if llvm.get("strategy") in PROVIDED_LLVM:
        for name in _PROBED_LLVM:
            llvm.pop(name, None)
    return data


def identity(plan: Plan) -> str:
    """sha256 of ``identity_dict``: the same for the same request and inputs whether a provider already ran or runs
    when the build does (a kept wheel of this identity is this plan's)."""
    return hashlib.sha256(json.dumps(identity_dict(plan), sort_keys=True).encode()).hexdigest()
