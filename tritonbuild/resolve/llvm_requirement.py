"""What LLVM a plan needs and which candidate to use (pure: candidates come in already probed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.resolve.facts import HostFacts, LLVMInstall
from tritonbuild.resolve.pins import same_commit
from tritonbuild.settings.model import Settings


def host_suffix(host: HostFacts, given: str | None = None) -> str | None:
    """Triton's prebuilt-LLVM suffix for this host; ``given`` (the setting ``llvm_system_suffix``, from
    ``TRITON_LLVM_SYSTEM_SUFFIX``, checked to be a name by its spec) overrides."""
    if given:
        return given
    arch = {"x86_64": "x64", "amd64": "x64", "arm64": "arm64", "aarch64": "arm64"}.get(host.machine.lower())
    if arch is None:
        return None
    if host.system == "Darwin":
        return f"macos-{arch}"
    if host.system == "Windows":
        return f"windows-{arch}"
    if host.system != "Linux":
        return None
    if arch == "arm64":
        return "almalinux-arm64" if host.os_release.get("ID") == "almalinux" else "ubuntu-arm64"
    if host.glibc:
        major, minor = (int(x) for x in host.glibc.split(".")[:2])
        return "ubuntu-x64" if major * 100 + minor > 228 else "almalinux-x64"
    return "ubuntu-x64"


def check(install: LLVMInstall, targets: Sequence[str], need_lld: bool = True) -> str | None:
    """Why this LLVM cannot build the plan, or None when it can. LLD is needed only when the source or a
    selected backend runs find_package(LLD) (upstream's amd backend)."""
    if not install.runs:
        return install.error or "llvm-config does not run"
    if not install.has_mlir:
        return ("it has no MLIR CMake package (lib/cmake/mlir/MLIRConfig.cmake); install MLIR (e.g. "
                "libmlir-NN-dev; Debian's libmlir-NN-dev of two LLVM versions cannot be installed together)")
    if need_lld and not install.has_lld:
        return "it has no LLD CMake package (lib/cmake/lld/LLDConfig.cmake); install LLD (e.g. liblld-NN-dev)"
    if not install.mlir_tblgen_runs:
        return "its mlir-tblgen is missing or does not run (e.g. install mlir-NN-tools)"
    missing = [t for t in targets if t not in install.targets_built]
    if missing:
        return (
            f"it was built without the LLVM target(s) {', '.join(missing)} the selected backends need "
            f"(it has: {' '.join(install.targets_built)}); libtriton would fail with undefined "
            f"LLVMInitialize{missing[0]}* symbols"
        )
    return None


def is_pinned(install: LLVMInstall, pinned_hash: str) -> bool | None:
    return same_commit(install.revision, pinned_hash)


PREBUILT_TARGETS = frozenset({"NVPTX", "AMDGPU", "X86", "AArch64"})  # what Triton's prebuilt LLVM archives hold


@dataclass(frozen=True)
class LLVMRequest:
    """What a provider needs to supply the pinned LLVM."""

    llvm_hash: str
    build_number: int | None
    sha256: dict[str, str]
    suffix: str | None
    targets: tuple[str, ...]
    cache_root: Path
    mirror: str
    allow_unpinned: bool = False
    offline: bool = False
    build_type: str = "Release"
    assertions: bool = False
    llvm_src: str | None = None
    # a download's attempts and its wait for the server: the http_retries and http_timeout settings; its time for
    # all attempts, minimum rate and size: http_deadline, http_min_rate, http_max_bytes
    retries: int = Settings.http_retries
    timeout: float = Settings.http_timeout
    deadline: float = Settings.http_deadline
    min_rate: int = Settings.http_min_rate
    max_bytes: int = Settings.http_max_bytes

    @property
    def archive(self) -> str | None:
        if not self.suffix:
            return None
        if self.build_number is None:
            return f"llvm-{self.llvm_hash[:8]}-{self.suffix}.tar.gz"
        return f"llvm-{self.llvm_hash[:8]}-{self.suffix}-{self.build_number}.tar.gz"


def llvm_dir(cache_root: Path) -> Path:
    return cache_root / "llvm"


def download_entry(req: LLVMRequest) -> Path:
    assert req.archive
    return llvm_dir(req.cache_root) / req.archive.removesuffix(".tar.gz")


def source_entry(req: LLVMRequest) -> Path:
    kind = req.build_type + ("-asserts" if req.assertions else "")
    return llvm_dir(req.cache_root) / f"src-{req.llvm_hash[:12]}-{'_'.join(sorted(req.targets))}-{kind}"
