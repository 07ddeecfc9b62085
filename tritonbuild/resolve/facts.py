"""What a plan is resolved from: every fact about the disk, git, the host and LLVMs, as values.

``tritonbuild.gather`` fills them at the edge (``gather.collect.gather``); the resolvers only read them. The
types of the facts live here or in other pure modules (``resolve.source``, ``resolve.nvidia_parts``), never in a module
that reads the disk or runs a program, so that resolving imports nothing of the edge."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from tritonbuild.plan import PatchInfo
from tritonbuild.resolve import fetchdeps
from tritonbuild.resolve.backend_api import BackendApi
from tritonbuild.resolve.nvidia_parts import NvidiaFacts
from tritonbuild.resolve.plugins import PluginFiles
from tritonbuild.resolve.preflight import IncludeFacts
from tritonbuild.resolve.source import GitState, SourceInfo


@dataclass(frozen=True)
class HostFacts:
    machine: str
    system: str
    glibc: str | None
    cpus: int
    mem_total_gib: float
    mem_available_gib: float
    disk_free_gib: float | None
    tools: dict[str, str | None] = field(default_factory=dict)  # name -> absolute path or None
    python: str = sys.executable
    python_version: str = ""
    python_include: str | None = None
    python_abi: str = ""  # the target interpreter's ABI tag: cp312, cp313t (free-threaded)
    pybind11_cmake_dir: str | None = None
    nanobind_cmake_dir: str | None = None  # the target interpreter's nanobind (trees that bind with nanobind)
    os_release: dict[str, str] = field(default_factory=dict)
    lld_dir: str | None = None  # a directory with an unversioned ld.lld (gcc's -fuse-ld=lld looks for that name)

    def tool(self, name: str) -> str | None:
        return self.tools.get(name)


@dataclass(frozen=True)
class LLVMInstall:
    prefix: str
    runs: bool
    error: str | None = None
    version: str | None = None
    targets_built: tuple[str, ...] = ()
    has_mlir: bool = False
    has_lld: bool = False
    mlir_tblgen_runs: bool = False
    link_dylib: bool = False
    static_libs: bool = False  # lib/ has the LLVM and MLIR component archives (libtriton can link LLVM statically)
    static_missing: tuple[str, ...] = ()  # archives a static link needs that lib/ lacks (libPolly.a)
    revision: str | None = None
    found_by: str = ""  # how the prefix was found: "--llvm", "LLVM_SYSPATH", "PATH llvm-config", ...


@dataclass(frozen=True)
class PythonFacts:
    """One target interpreter (``tritonbuild.gather.pythons.probe``)."""

    path: str
    version: str  # 3.12.3
    tag: str  # the interpreter tag: cp312
    free_threaded: bool = False  # a 3.13t/3.14t build: its own ABI (cp313t), never abi3
    include: str | None = None  # the dir with Python.h
    has_skbuild: bool = False  # scikit-build-core importable: it can run the build itself
    pybind11_cmake_dir: str | None = None  # its pybind11's and nanobind's CMake dirs, when it has them
    nanobind_cmake_dir: str | None = None

    @property
    def abi(self) -> str:
        return self.tag + ("t" if self.free_threaded else "")


@dataclass(frozen=True)
class Facts:
    source: SourceInfo
    host: HostFacts
    llvm_explicit: LLVMInstall | None  # probed --llvm PATH / LLVM_SYSPATH
    llvm_system: tuple[LLVMInstall, ...]  # probed system LLVMs, newest first
    plugin_git: Mapping[str, GitState | None]  # by absolute plugin path
    cwd: str
    cmake_dir: str  # tritonbuild's injected CMake code
    cache_root: str
    json_prefix: str | None = None
    default_pin: str | None = None  # the LLVM pin of tritonbuild's default recipe (llvm-hash.txt)
    llvm_cached: tuple[LLVMInstall, ...] = ()  # probed cache entries at the pinned commit
    llvm_stale: tuple[tuple[str, str], ...] = ()  # cache entries at the pin whose sha256 the pin contradicts
    nvidia: NvidiaFacts = field(default_factory=NvidiaFacts)  # CUDA headers, CUPTI, NVIDIA tools on this machine
    api: Mapping[str, BackendApi] = field(default_factory=dict)  # compatibility check per backend path
    fetch_decls: tuple[fetchdeps.Decl, ...] = ()  # FetchContent/ExternalProject declarations of source and plugins
    deps_supplied: Mapping[str, fetchdeps.Supplied] = field(default_factory=dict)  # --dep, by lowercase name
    known_source: tuple[str, ...] = ()  # tritonbuild.resolve.knownissues ids whose source side this source shows
    known_llvm: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # LLVM prefix -> ids its headers show
    plugin_files: Mapping[str, PluginFiles] = field(default_factory=dict)  # what each plugin dir holds, as given
    includes: IncludeFacts = field(default_factory=IncludeFacts)  # LLVM headers included, and what each LLVM lacks
    llvm_src_kind: str | None = None  # --llvm-src as a local path: "dir", "other" (not a dir), None: no such path
    patches: tuple[PatchInfo, ...] = ()  # --patch: applied to tritonbuild's copy of the source (source.root)
    checkout: str | None = None  # with patches or submodules: the user's checkout the copy was made from
    submodules: tuple[tuple[str, str], ...] = ()  # --submodule: (path, commit) each supplied into the copy
    # --patch NAME=FILE: by the plugin's patched copy (its path in plugin_files), the plugin dir it was made from
    # and the patches applied to it, in order
    plugin_patches: Mapping[str, tuple[str, tuple[PatchInfo, ...]]] = field(default_factory=dict)
    # What the plan needs of the environment that no setting declares (tools' own variables, read at the edge):
    # sccache's SCCACHE_* configuration (the server's storage; its port follows from it), and the values of the
    # variables the tree's setup.py reads for proton's header dirs (``SourceInfo.proton_dirs``), by name.
    sccache_config: tuple[tuple[str, str], ...] = ()
    proton_env: Mapping[str, str] = field(default_factory=dict)

    def every_patch(self) -> tuple[PatchInfo, ...]:
        """The source's patches, then each patched plugin's: what the build dir key and the version label hash."""
        return (*self.patches, *(p for _, applied in self.plugin_patches.values() for p in applied))
