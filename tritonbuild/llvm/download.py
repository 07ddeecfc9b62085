"""Download Triton's prebuilt LLVM for a pin: stream, verify, extract safely, then publish atomically."""

from __future__ import annotations

import errno
import os
import shutil
import tarfile
import zlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path, PurePosixPath

from tritonbuild import http
from tritonbuild.diskspace import write_failed
from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.fileutil import confined, sha256_of
from tritonbuild.llvm import cache
from tritonbuild.reporter import NoBar, ProgressBar, Reporter
from tritonbuild.resolve.llvm_requirement import LLVMRequest, check_suffix, download_entry, llvm_dir

# The default mirror is the llvm_mirror setting's (tritonbuild.settings.model); the plan's request carries it.
# Prebuilt LLVMs hold only the host, NVPTX and AMDGPU targets.
LLVM_GIB = 3  # an archive (~0.5 GiB) and its extracted prefix (~2 GiB)


def url_for(req: LLVMRequest) -> str:
    assert req.archive
    return f"{req.mirror.rstrip('/')}/{req.archive}"


def fetch_archive(req: LLVMRequest, dest: Path, *, retries: int = http.RETRIES, timeout: float = http.TIMEOUT,
                  progress: Callable[[int, int | None], None] | None = None, log: Callable[[str], None] = print
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


# tarfile's extraction filters (PEP 706) came in 3.11.4; Debian 12's 3.11.2 has neither them nor their error
_FILTER_ERRORS: tuple[type[Exception], ...] = (tarfile.FilterError,) if hasattr(tarfile, "FilterError") else ()


def check_members(tar: tarfile.TarFile, target: Path, what: str = "the LLVM archive",
                  outcome: str = "nothing was installed") -> list[tarfile.TarInfo]:
    """Refuse absolute paths, '..', links that escape ``target``, and device/fifo entries (``what``: the archive,
    ``outcome``: what the refusal leaves, as the message says them)."""
    base = target.resolve()
    members = tar.getmembers()
    # links of the archive: the lexical checks below cannot see through them (Python before 3.11.4 has no "data"
    # filter to check each member as it is written), so a member below one, or a link through one, is refused
    links = {PurePosixPath(m.name) for m in members if m.issym() or m.islnk()}
    for m in members:
        name = PurePosixPath(m.name)
        problem = None
        if any(parent in links for parent in name.parents):
            problem = "lies below a link of the archive"
        elif m.issym() and _through_link(name.parent, m.linkname, links):
            problem = f"is a symlink through another link of the archive ({m.linkname})"
        elif name.is_absolute() or m.name.startswith("/"):
            problem = "is an absolute path"
        elif ".." in name.parts:
            problem = "contains '..'"
        elif m.ischr() or m.isblk() or m.isfifo() or m.isdev():
            problem = "is a device or fifo"
        elif m.issym():
            dest = (base / name.parent / m.linkname).resolve()
            if PurePosixPath(m.linkname).is_absolute() or not dest.is_relative_to(base):
                problem = f"is a symlink escaping the archive ({m.linkname})"
        elif m.islnk():
            dest = (base / m.linkname).resolve()
            if PurePosixPath(m.linkname).is_absolute() or ".." in PurePosixPath(m.linkname).parts \
                    or not dest.is_relative_to(base):
                problem = f"is a hardlink escaping the archive ({m.linkname})"
        if problem:
            raise UserError(f"Refusing to extract {what}: its entry {m.name!r} {problem}. The archive is "
                            f"not trustworthy; {outcome}.")
    return members


def _through_link(start: PurePosixPath, target: str, links: set[PurePosixPath]) -> bool:
    """Whether following ``target`` from ``start`` step by step passes a link of the archive."""
    cur = start
    for part in PurePosixPath(target).parts:
        cur = cur.parent if part == ".." else cur / part
        if cur in links:
            return True
    return False


def extract(archive: Path, staging: Path) -> Path:
    """Extract into ``staging``; return the prefix (the single top-level dir holding bin/, or staging). Every
    member is checked first, and tarfile's "data" filter checks each again as it is written (a link made by an
    earlier member cannot carry a later one outside); a refusal is a UserError and the caller drops staging."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            members = check_members(tar, staging)
            if hasattr(tarfile, "data_filter"):
                tar.extractall(staging, members=members, filter="data")
            else:  # pragma: no cover - Python without PEP 706 filters
                tar.extractall(staging, members=members)
    except _FILTER_ERRORS as exc:
        raise UserError(f"Refusing to extract the LLVM archive {archive.name}: {exc}. The archive is not "
                        "trustworthy; nothing was installed.") from None
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise UserError(f"The LLVM archive {archive.name} is corrupt ({exc}); nothing was installed. Check the "
                        "mirror.") from None
    tops = list(staging.iterdir())
    if len(tops) == 1 and tops[0].is_dir() and not tops[0].is_symlink() and not (staging / "bin").exists():
        return tops[0]
    return staging


def provide(req: LLVMRequest, *, reporter: Reporter | None = None, timeout: float = http.TIMEOUT,
            retries: int = http.RETRIES) -> Path:
    """Make the prebuilt LLVM for ``req`` available in the cache (download at most once) and return it."""
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
    log: Callable[[str], None] = (lambda m: reporter.note(m, topic="llvm")) if reporter else print
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


def _fetch_into(req: LLVMRequest, entry: Path, reporter: Reporter | None, timeout: float, retries: int,
                log: Callable[[str], None]) -> None:
    """Download, verify, extract and publish one entry under its lock."""
    with cache.entry_lock(entry):
        if cache.current(entry, req.sha256):  # another process finished while we waited
            return
        stale = cache.pin_conflict(entry, req.sha256)
        if stale:
            log(f"{entry.name}: {stale}")
        downloads = llvm_dir(req.cache_root) / ".downloads"
        archive = confined(downloads, f"{req.archive}.{os.getpid()}", what="the LLVM download")
        progress: AbstractContextManager[ProgressBar] = (
            reporter.progress(req.archive or "", transfer=True) if reporter else nullcontext(NoBar()))
        try:
            with progress as bar:
                fetch_archive(req, archive, retries=retries, timeout=timeout, progress=bar.update, log=log)
            digest = verify(req, archive, log)
            staging = cache.staging_dir(entry)
            try:
                prefix = extract(archive, staging)
                cache.commit(prefix, entry, {"llvm_hash": req.llvm_hash, "suffix": req.suffix,
                                             "build_number": req.build_number, "sha256": digest,
                                             "url": url_for(req), "provider": "download"}, replace=bool(stale))
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        finally:
            archive.unlink(missing_ok=True)

