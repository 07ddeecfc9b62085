"""Build the pinned LLVM from source into the cache, with only the targets the plan needs (edge)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from tritonbuild.errors import BuildFailed, UserError
from tritonbuild.llvm import cache
from tritonbuild.reporter import Reporter
from tritonbuild.resolve.llvm_requirement import LLVMRequest, llvm_dir, source_entry

DEFAULT_LLVM_SRC = "https://github.com/llvm/llvm-project.git"
PROJECTS = ("mlir", "lld")


def configure_args(req: LLVMRequest, src: Path, build: Path, prefix: Path, ccache: str | None) -> list[str]:
    args = [
        "cmake", "-S", str(src / "llvm"), "-B", str(build), "-G", "Ninja",
        f"-DCMAKE_BUILD_TYPE={req.build_type}",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        f"-DLLVM_ENABLE_PROJECTS={';'.join(PROJECTS)}",
        f"-DLLVM_TARGETS_TO_BUILD={';'.join(req.targets)}",
        f"-DLLVM_ENABLE_ASSERTIONS={'ON' if req.assertions else 'OFF'}",
        "-DLLVM_INCLUDE_TESTS=OFF", "-DLLVM_INCLUDE_BENCHMARKS=OFF", "-DLLVM_INCLUDE_EXAMPLES=OFF",
        "-DLLVM_INCLUDE_DOCS=OFF", "-DMLIR_INCLUDE_TESTS=OFF", "-DMLIR_INCLUDE_INTEGRATION_TESTS=OFF",
        "-DLLD_INCLUDE_TESTS=OFF",
        # llvm-config, mlir-tblgen and FileCheck are what Triton's build needs from the prefix
        "-DLLVM_INSTALL_UTILS=ON", "-DLLVM_ENABLE_ZSTD=OFF", "-DLLVM_ENABLE_LIBXML2=OFF",
    ]
    if ccache:
        args += [f"-DCMAKE_C_COMPILER_LAUNCHER={ccache}", f"-DCMAKE_CXX_COMPILER_LAUNCHER={ccache}"]
    return args


def checkout(req: LLVMRequest, reporter: Reporter) -> Path:
    """Clone (or reuse) llvm-project from a URL or local path and check out exactly the pinned commit. git runs
    through ``gather.safegit``: a URL is checked first (no ``ext::``, no option), the cache repository's own config
    runs nothing, offline nothing is fetched."""
    from tritonbuild.system import safegit

    url = req.llvm_src or DEFAULT_LLVM_SRC
    local = Path(url).exists()
    if req.offline and not local:
        raise UserError(f"Offline: the LLVM source {url} is not a local path. Pass --llvm-src with a local "
                        "llvm-project clone or mirror.")
    if not local:
        safegit.check_url(url, "--llvm-src")
    dest = llvm_dir(req.cache_root).parent / "llvm-src" / hashlib.sha256(url.encode()).hexdigest()[:16]
    if not (dest / ".git").is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        _git_or_fail(req, url, dest, "init", "--quiet")
        _git_or_fail(req, url, dest, "remote", "add", "origin", str(Path(url).resolve()) if local else url)
    if not safegit.run_git(dest, "cat-file", "-e", f"{req.llvm_hash}^{{commit}}", timeout=30).ok:
        if req.offline:
            raise UserError(f"Offline: the LLVM source {url} has no commit {req.llvm_hash} in its cache clone "
                            f"{dest}. Run once without --offline, or pass --llvm-src with a clone that has it.")
        reporter.step(f"fetching {req.llvm_hash[:12]} from {url}")
        if not safegit.run_git(dest, "fetch", "--quiet", "--depth", "1", "origin", req.llvm_hash, timeout=None,
                               fetch=True).ok:
            _git_or_fail(req, url, dest, "fetch", "--quiet", "origin", fetch=True)  # servers that refuse a hash
    _git_or_fail(req, url, dest, "checkout", "--quiet", "--force", "--detach", req.llvm_hash)
    head = safegit.run_git(dest, "rev-parse", "HEAD", timeout=30).stdout.strip()
    if head != req.llvm_hash:
        raise UserError(f"{url} checked out {head}, not the pinned {req.llvm_hash}.")
    return dest


def _git_or_fail(req: LLVMRequest, url: str, dest: Path, *args: str, fetch: bool = False) -> None:
    from tritonbuild.system import safegit

    res = safegit.run_git(dest, *args, timeout=None, fetch=fetch)
    if not res.ok:
        raise UserError(f"Could not check out LLVM {req.llvm_hash} from {url}: git {args[0]}: "
                        f"{res.output or 'failed'}. Check --llvm-src.")


def provide(req: LLVMRequest, reporter: Reporter, *, ccache: str | None = None) -> Path:
    from tritonbuild.system.proc import run_logged
    from tritonbuild.system.progress import Tracker

    entry = source_entry(req)
    if cache.is_complete(entry):
        reporter.step(f"LLVM {req.llvm_hash[:12]} ({', '.join(req.targets)}) is already in the cache: {entry}")
        return entry
    with cache.making(entry, reporter.step):
        if cache.is_complete(entry):
            return entry
        src = checkout(req, reporter)
        build = llvm_dir(req.cache_root).parent / "llvm-build" / entry.name
        staging = cache.staging_dir(entry)
        log_path = build.parent / f"{entry.name}.log"
        build.mkdir(parents=True, exist_ok=True)
        tracker = Tracker()
        try:
            with open(log_path, "w") as log:
                for argv, label in ((configure_args(req, src, build, staging, ccache), "configure LLVM"),
                                    (["ninja", "-C", str(build), "install"], "build LLVM")):
                    rc = run_logged(argv, cwd=build, env=dict(os.environ), log=log,
                                    tracker=tracker, reporter=reporter, label=label)
                    if rc != 0:
                        raise BuildFailed(f"{label} failed (exit code {rc}); the LLVM build dir {build} is kept.",
                                          log_path=str(log_path), tail=tracker.failure_tail())
            cache.commit(staging, entry, {"llvm_hash": req.llvm_hash, "targets": list(req.targets),
                                          "build_type": req.build_type, "assertions": req.assertions,
                                          "projects": list(PROJECTS), "provider": "source",
                                          "source": req.llvm_src or DEFAULT_LLVM_SRC})
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(build, ignore_errors=True)  # tens of GB for a real LLVM; the install is what we keep
    reporter.step(f"LLVM {req.llvm_hash[:12]} built into {entry}")
    return entry
