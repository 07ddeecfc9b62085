"""Reading a wheel someone else made without trusting it (edge): ``verify`` and ``compare`` open wheels here.

A wheel is a zip archive whose headers can lie. Opening one checks, before anything is read, that it is a zip
at all, that its member count and the sizes its central directory declares stay under the one extractor's caps
(``tritonbuild.system.archive.zip_census``: read before ``zipfile`` parses the directory, so a zip claiming millions of
members costs a few reads), and that every member name is a relative path inside the archive (no ``..``, no
absolute path, no backslash, NUL or drive letter, no link, no name twice); reading then streams in blocks and
counts, so a member that inflates past what its header said (or past a cap) stops there. Members are extracted
only into a given directory, one regular file at a time.
Anything wrong is a ``BadWheel``: a finding about the wheel (exit code 1), never a traceback.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from tritonbuild.errors import TritonBuildError, UserError
from tritonbuild.system import archive
from tritonbuild.system.archive import Caps
from tritonbuild.system.archive import mib as mib

CAPS = Caps()  # the one extractor's: 200,000 members (the official 3.6.0 wheel has 410), 16 GiB in all, 8 GiB a
# member (the official libtriton.so: 396 MiB; debug builds: more), 100 times a member over 1 MiB (official: 14)
MAX_MEMBER = CAPS.member
MAX_TEXT = 16 << 20  # a member read into memory (RECORD, METADATA, entry_points.txt, _build_info.json)
BLOCK = 1 << 20
# what a broken or hostile archive raises from zipfile, zlib and the decompressors
READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, ValueError,
               NotImplementedError, RuntimeError, IndexError, KeyError)


class BadWheel(TritonBuildError):
    """The wheel is malformed or hostile: a finding about the file, not a wrong flag (exit code 1)."""

    exit_code = 1


def name_problem(name: str) -> str | None:
    """Why ``name`` (a member or a RECORD path) could land outside the directory a wheel is unpacked into or is
    unsafe to print (a control character), or None when it is a plain relative path: the one extractor's rule."""
    why = archive.name_problem(name)
    return f"it {why}" if why else None


def _header_problems(zf: zipfile.ZipFile) -> list[str]:
    """What is wrong with the members' names and kinds (the count and sizes passed ``archive.zip_census``)."""
    infos = zf.infolist()
    out: list[str] = []
    for info in infos:
        why = name_problem(info.orig_filename)
        if why:
            out.append(f"member {info.orig_filename!r} is unsafe: {why}")
        elif stat.S_ISLNK(info.external_attr >> 16):
            out.append(f"member {info.filename!r} is a symbolic link (a wheel holds regular files)")
    out += [f"member {n!r} is in the archive {k} times" for n, k in Counter(i.filename for i in infos).items()
            if k > 1]
    return out


def open_wheel(path: Path) -> zipfile.ZipFile:
    """``path`` opened as a zip archive whose headers passed the checks above. A path that is missing or not a
    regular file is the user's mistake (``UserError``); a file that is not a safe zip is a ``BadWheel``."""
    if not path.exists():
        raise UserError(f"{path} does not exist. Give the path of a .whl file.")
    if not path.is_file():
        raise UserError(f"{path} is not a regular file (a directory or a device?). Give the path of a .whl file.")
    try:  # the count and sizes from the end record and central directory, before zipfile parses and lists them
        archive.zip_census(path, CAPS)
        zf = zipfile.ZipFile(path)
    except archive.Refused as exc:
        raise BadWheel(str(exc)) from None
    except READ_ERRORS as exc:
        raise BadWheel(f"not a zip archive, or a truncated one ({_one_line(exc)})") from None
    problems = _header_problems(zf)
    if problems:
        zf.close()
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise BadWheel("; ".join(problems[:3]) + more)
    return zf


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def blocks(zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int = MAX_MEMBER) -> Iterator[bytes]:
    """The member's bytes in blocks; ``BadWheel`` when it is broken, or yields more than its header declares or
    ``cap`` allows (counted while reading: headers can lie)."""
    if info.file_size > cap:
        raise BadWheel(f"{info.filename} is {mib(info.file_size)} uncompressed (at most {mib(cap)} is read)")
    limit, seen = min(cap, info.file_size), 0
    try:
        with zf.open(info) as f:
            while block := f.read(BLOCK):
                seen += len(block)
                if seen > limit:
                    raise BadWheel(f"{info.filename} inflates past the {limit} bytes its header declares")
                yield block
    except READ_ERRORS as exc:
        raise BadWheel(f"{info.filename} cannot be read ({_one_line(exc)})") from None


def read_text(zf: zipfile.ZipFile, name: str, cap: int = MAX_TEXT) -> str:
    """A small text member as UTF-8; ``BadWheel`` when it is too big, broken or not UTF-8."""
    data = b"".join(blocks(zf, zf.getinfo(name), cap))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise BadWheel(f"{name} is not UTF-8 text (line {line}: {exc.reason})") from None


def digest(zf: zipfile.ZipFile, info: zipfile.ZipInfo, algo: str) -> tuple[bytes, int]:
    """The member's ``algo`` digest and size, streamed."""
    h, size = hashlib.new(algo), 0
    for block in blocks(zf, info):
        h.update(block)
        size += len(block)
    return h.digest(), size


def head(zf: zipfile.ZipFile, info: zipfile.ZipInfo, n: int = 4) -> bytes:
    """The member's first ``n`` bytes (its magic number)."""
    try:
        with zf.open(info) as f:
            return f.read(n)
    except READ_ERRORS as exc:
        raise BadWheel(f"{info.filename} cannot be read ({_one_line(exc)})") from None


def extract(zf: zipfile.ZipFile, info: zipfile.ZipInfo, root: Path) -> Path:
    """The member written as a new regular file under ``root`` (never through a link, never outside it)."""
    why = name_problem(info.orig_filename)
    if why:
        raise BadWheel(f"member {info.orig_filename!r} is unsafe: {why}")
    target = root.joinpath(*info.filename.split("/"))
    if not target.resolve().is_relative_to(root.resolve()):
        raise BadWheel(f"member {info.filename!r} would land outside {root}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755)
    except OSError as exc:  # a member named like a file's child, or the disk
        raise BadWheel(f"member {info.filename!r} cannot be written to {root} ({_one_line(exc)})") from None
    with os.fdopen(fd, "wb") as out:
        for block in blocks(zf, info):
            out.write(block)
    return target
