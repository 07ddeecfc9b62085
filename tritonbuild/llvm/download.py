"""Download Triton's prebuilt LLVM for a pin: stream, verify, extract safely, then publish atomically."""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.llvm import cache
from tritonbuild.printable import printable
from tritonbuild.reporter import Reporter
from tritonbuild.resolve.llvm_requirement import LLVMRequest, download_entry, llvm_dir
from tritonbuild.settings.model import check_suffix
from tritonbuild.system import http
from tritonbuild.system.archive import Caps, extract_tar
from tritonbuild.system.diskspace import write_failed
from tritonbuild.system.fileutil import confined, sha256_of
from tritonbuild.system.proc import run

# The default mirror is the llvm_mirror setting's (tritonbuild.settings.model); the plan's request carries it.
# Prebuilt LLVMs hold only the host, NVPTX and AMDGPU targets.
LLVM_GIB = 3  # an archive (~0.5 GiB) and its extracted prefix (~2 GiB)


def url_for(req: LLVMRequest) -> str:
    assert req.archive
    return f"{req.mirror.rstrip('/')}/{req.archive}"


def fetch_archive(req: LLVMRequest, dest: Path, *, retries: int = http.RETRIES, timeout: float = http.TIMEOUT,
                  progress: Callable[[int, int | None], None] | None = None, log: Callable[[str], None]
                  ) -> Path:
    """Stream the archive to ``dest.part`` with bounded retries, then rename it to ``dest``."""
    url = url_for(req)
    try:
        limits = http.Limits(retries=retries, timeout=timeout, deadline=req.deadline, min_rate=req.min_rate,
                             max_bytes=req.max_bytes)
        return http.fetch(url, dest, limits=limits, progress=progress, log=log,
                          hint="Check the network or the mirror (--llvm-mirror / TRITONBUILD_LLVM_MIRROR), or use "
                               "--llvm system / PREFIX.")
    except http.NotFound as exc:
        raise UserError(
            f"There is no prebuilt LLVM {req.archive} at {url} (HTTP {exc.code}). The pin may be newer "
            "than the published builds, or the mirror lacks it: use --llvm system, --llvm PREFIX, or "
            "`tritonbuild llvm build` to build it from source."
        ) from None


def verify(req: LLVMRequest, archive: Path, log: Callable[[str], None]) -> str:
    actual = sha256_of(archive)
    expected = req.sha256.get(req.suffix or "")
    if expected:
        if actual != expected:
            archive.unlink(missing_ok=True)
            raise UserError(
                f"The downloaded {req.archive} does not match the pin's sha256 for {req.suffix}: expected "
                f"{expected}, got {actual}. The file was deleted. Check the mirror; do not use this archive."
            )
        return actual
    if not req.allow_unpinned:
        archive.unlink(missing_ok=True)
        raise UserError(
            f"The pin has no sha256 for {req.archive} (cmake/llvm-hash.txt pins carry no checksums), so the "
            "download cannot be verified. Pass --allow-unpinned to accept it (its sha256 is logged), or use "
            "--llvm system / PREFIX."
        )
    log(f"accepted unpinned archive {req.archive} with sha256 {actual} (--allow-unpinned)")
    return actual


LLVM_CAPS = Caps(total=16 << 30)  # an LLVM prefix is ~2 GiB in ~10,000 files
CONFIG_TIMEOUT = 60  # seconds llvm-config --version may take (it answers at once)
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?(git|rc\d*)?")


def extract(archive: Path, staging: Path) -> Path:
    """Extract into ``staging`` through the one extractor (``tritonbuild.system.archive``: its own member filter and
    caps, the same on every Python); return the prefix (the single top-level dir holding bin/, or staging). A
    refusal is a UserError and the caller drops staging."""
    extract_tar(archive, staging, f"the LLVM archive {archive.name}", caps=LLVM_CAPS,
                outcome="nothing was installed", fix="Check the mirror.")
    tops = list(staging.iterdir())
    if len(tops) == 1 and tops[0].is_dir() and not tops[0].is_symlink() and not (staging / "bin").exists():
        return tops[0]
    return staging


def check_prefix(prefix: Path, name: str) -> str:
    """An archive is an LLVM only when it has one: ``bin/llvm-config``, a regular executable file of the prefix
    that runs and reports a version, and MLIR's CMake config. Returns the version; a UserError naming what is
    missing otherwise (the caller then caches nothing)."""
    config, mlir = prefix / "bin" / "llvm-config", prefix / "lib" / "cmake" / "mlir" / "MLIRConfig.cmake"
    problem = _regular(config, executable=True) or _regular(mlir, executable=False)
    version = ""
    if problem is None:
        proc = run([str(config), "--version"], timeout=CONFIG_TIMEOUT)
        version = proc.stdout.strip()
        if not proc.ok:
            tail = proc.output.splitlines()[-1] if proc.output else f"exit code {proc.returncode}"
            problem = f"its bin/llvm-config does not run ({printable(tail[:200])})"
        elif not _VERSION.fullmatch(version):
            said = printable(version[:200] or "(nothing)")
            problem = f"its bin/llvm-config --version says {said}, not an LLVM version"
    if problem:
        raise UserError(f"The archive {name} is no LLVM: {problem}. An LLVM prefix has bin/llvm-config (which "
                        "runs and reports its version) and lib/cmake/mlir/MLIRConfig.cmake. Nothing was installed "
                        "or cached; check the mirror, or use --llvm system / PREFIX.")
    return version


def _regular(path: Path, *, executable: bool) -> str | None:
    rel = "/".join(path.parts[-2:]) if path.name == "llvm-config" else "lib/cmake/mlir/MLIRConfig.cmake"
    try:
        mode = path.lstat().st_mode
    except OSError:
        return f"it has no {rel}"
    if not stat.S_ISREG(mode):
        return f"its {rel} is no regular file (a link, a directory or a special file)"
    if executable and not mode & 0o100:
        return f"its {rel} is not executable"
    return None


def provide(req: LLVMRequest, reporter: Reporter, *, timeout: float = http.TIMEOUT,
            retries: int = http.RETRIES) -> Path:
    """Make the prebuilt LLVM for ``req`` available in the cache (download at most once) and return it; its notes
    and progress go to ``reporter``."""
    if req.offline:
        raise UserError(f"Offline (TRITON_OFFLINE_BUILD/--offline): the prebuilt LLVM {req.archive} is not in the "
                        f"cache ({llvm_dir(req.cache_root)}). Fetch it on a connected machine or pass "
                        "--llvm PREFIX.")
    if not req.archive:
        raise UserError("No prebuilt LLVM exists for this host (unknown platform suffix); set "
                        "TRITON_LLVM_SYSTEM_SUFFIX, or use --llvm system / PREFIX / source.")
    entry = _entry(req)
    if cache.current(entry, req.sha256):
        return entry
    def log(message: str) -> None:
        reporter.note(message, topic="llvm")

    try:
        _fetch_into(req, entry, reporter, timeout, retries, log)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EROFS):
            raise
        raise EnvironmentProblem(
            f"{write_failed(exc, entry.parent)} A prebuilt LLVM needs about "
            f"{LLVM_GIB} GiB in {entry.parent} (the archive and its extracted prefix). Free space there or point "
            "--cache-dir at a larger disk; nothing was added to the cache, other entries are untouched, and the "
            "next run fetches again.") from None
    log(f"LLVM {req.llvm_hash[:12]} ready at {entry}")
    return entry


def _entry(req: LLVMRequest) -> Path:
    """The cache entry for ``req``, checked to stay inside the LLVM cache (its name comes from the pin and the
    environment: defence in depth behind the plan's own check of the suffix)."""
    check_suffix(req.suffix or "", "the platform suffix")
    assert req.archive
    entry = confined(llvm_dir(req.cache_root), req.archive.removesuffix(".tar.gz"), what="the LLVM cache entry")
    assert entry == download_entry(req)
    return entry


def _fetch_into(req: LLVMRequest, entry: Path, reporter: Reporter, timeout: float, retries: int,
                log: Callable[[str], None]) -> None:
    """Download, verify, extract and publish one entry under its lock."""
    with cache.making(entry, log):
        if cache.current(entry, req.sha256):  # another process finished while we waited
            return
        stale = cache.pin_conflict(entry, req.sha256)
        if stale:
            log(f"{entry.name}: {stale}")
        downloads = llvm_dir(req.cache_root) / ".downloads"
        archive = confined(downloads, f"{req.archive}.{os.getpid()}", what="the LLVM download")
        try:
            with reporter.progress(req.archive or "", transfer=True) as bar:
                fetch_archive(req, archive, retries=retries, timeout=timeout, progress=bar.update, log=log)
            digest = verify(req, archive, log)
            staging = cache.staging_dir(entry)
            try:
                prefix = extract(archive, staging)
                check_prefix(prefix, req.archive or archive.name)
                cache.commit(prefix, entry, {"llvm_hash": req.llvm_hash, "suffix": req.suffix,
                                             "build_number": req.build_number, "sha256": digest,
                                             "url": url_for(req), "provider": "download"}, replace=bool(stale))
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        finally:
            archive.unlink(missing_ok=True)

