"""What a plan is resolved from: every fact about the disk, git, the host and LLVMs, gathered at the edge
(``facts.gather``) and passed to the pure resolvers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tritonbuild.gather.host import HostFacts
from tritonbuild.llvm.probe import LLVMInstall
from tritonbuild.nvidia.discover import NvidiaFacts
from tritonbuild.resolve import fetchdeps
from tritonbuild.resolve.backend_api import BackendApi
from tritonbuild.resolve.source import GitState, SourceInfo


@dataclass(frozen=True)
class Facts:
    source: SourceInfo
    host: HostFacts
    llvm_explicit: LLVMInstall | None  # probed --llvm PATH / LLVM_SYSPATH
    llvm_system: tuple[LLVMInstall, ...]  # probed system LLVMs, newest first
    plugin_git: Mapping[str, GitState | None]
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
