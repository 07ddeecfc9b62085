"""The one place that writes wheel archives and knows zipfile's internals (edge: files).

Two writers: ``write_wheel`` makes a quick rebuild's wheel from an install prefix, copying the last wheel's
unchanged members still compressed and deflating large changed ones on all cores; ``SKBUILD_RUNNER`` is the
script that runs scikit-build-core's ``build_wheel`` with the plan's deflate level (scikit-build-core has no
setting for it). zipfile has no public call to append a member whose compressed bytes are known, so
``_copy_compressed`` writes the local header itself and updates the archive's directory as ``writestr`` does.
"""

from __future__ import annotations

import contextlib
import csv
import inspect
import io
import json
import os
import struct
import time
import zipfile
import zlib
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

from tritonbuild.errors import UserError
from tritonbuild.system.fileutil import read_owned_json, record_hash, replace_with

_LOCAL_HEADER = 30  # fixed part of a zip local file header
_DATA_DESCRIPTOR = 0x08



def outside_links(roots: list[str]) -> list[str]:
    """Files under ``roots`` reached through a symlink whose target lies outside all of them (``link -> target``):
    a wheel must not carry them (a plugin's ``backend/leak.txt -> /etc/passwd`` would put that file's content into
    the published wheel). Self-contained: ``SKBUILD_RUNNER`` carries its source into the build's interpreter."""
    import os

    reals = [os.path.realpath(r) for r in roots if os.path.isdir(r)]
    top = os.path.commonpath(reals) if reals else ""
    bad = []
    for root in reals:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                real = os.path.realpath(path)
                if os.path.islink(path) and os.path.isfile(real) and os.path.commonpath([top, real]) != top:  # noqa: PTH113, PTH114
                    bad.append(f"{path} -> {real}")
    return sorted(bad)


_REFUSAL = ("tritonbuild: refusing to write the wheel: these files of the staged tree are symlinks to files outside "
            "it, whose content would go into the wheel: {}. Remove each link from the source or plugin (or replace "
            "it with a copy) and build again.")

# scikit-build-core deflates at zlib's default level and has no setting for it: the runner gives zipfile the
# plan's level (a dev build of a 400 MB libtriton spends most of its packaging time compressing). Before the
# wheel is written it checks the staged tree for symlinks that lead outside it (``outside_links``): exit 2.
SKBUILD_RUNNER = (
    "import sys, zipfile\n"
    "level = int(sys.argv[2])\n"
    "_writestr = zipfile.ZipFile.writestr\n"
    "def writestr(self, zinfo, data, compress_type=None, compresslevel=None):\n"
    "    return _writestr(self, zinfo, data, compress_type, level if compresslevel is None else compresslevel)\n"
    "zipfile.ZipFile.writestr = writestr\n"
    + inspect.getsource(outside_links) +
    "def _guard(build):\n"
    "    def guarded(self, wheel_dirs, *args, **kwargs):\n"
    "        bad = outside_links([str(p) for p in wheel_dirs.values()])\n"
    "        if bad:\n"
    f"            print({_REFUSAL!r}.format('; '.join(bad)), file=sys.stderr, flush=True)\n"
    "            import atexit, os\n"
    "            path = str(getattr(self, 'wheelpath', ''))\n"
    "            atexit.register(lambda: path and os.path.exists(path) and os.unlink(path))  # the half-written wheel\n"
    "            sys.exit(2)\n"
    "        return build(self, wheel_dirs, *args, **kwargs)\n"
    "    return guarded\n"
    "try:\n"
    "    from scikit_build_core.build import _wheelfile\n"
    "    _wheelfile.WheelWriter.build = _guard(_wheelfile.WheelWriter.build)\n"
    "except (ImportError, AttributeError):\n"
    "    print('tritonbuild: cannot check the staged tree for outside symlinks (scikit-build-core changed)', "
    "file=sys.stderr)\n"
    "from scikit_build_core.build import build_wheel\n"
    "name = build_wheel(sys.argv[1])\n"
    "print('tritonbuild-wheel:', name, flush=True)\n"
)


def _data_offset(fp: IO[bytes], info: zipfile.ZipInfo) -> int:
    """Where a member's compressed bytes start: after its local header."""
    fp.seek(info.header_offset)
    header = fp.read(_LOCAL_HEADER)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return int(info.header_offset + _LOCAL_HEADER + name_len + extra_len)


class Span:
    """A member's compressed bytes in another open archive, copied by the kernel (``copy_file_range``) rather than
    read into memory and written: a quick rebuild copies every unchanged member, 150 MB of package data included."""

    def __init__(self, fp: IO[bytes], info: zipfile.ZipInfo) -> None:
        self.fp, self.start, self.size = fp, _data_offset(fp, info), info.compress_size

    def write_to(self, out: IO[bytes]) -> None:
        out.flush()
        at, done = out.tell(), 0
        try:
            while done < self.size:
                n = os.copy_file_range(self.fp.fileno(), out.fileno(), self.size - done, self.start + done, at + done)
                if n <= 0:
                    break
                done += n
        except OSError:  # no copy_file_range here (another file system, an old kernel): read and write
            pass
        out.seek(at + done)
        if done < self.size:
            self.fp.seek(self.start + done)
            out.write(self.fp.read(self.size - done))


def _copy_compressed(out: zipfile.ZipFile, info: zipfile.ZipInfo, raw: bytes | Span) -> None:
    """Append a member whose compressed bytes are known (zipfile has no public call for it)."""
    new = zipfile.ZipInfo(info.filename, info.date_time)
    new.compress_type, new.external_attr, new.create_system = info.compress_type, info.external_attr, \
        info.create_system
    new.CRC, new.compress_size, new.file_size = info.CRC, info.compress_size, info.file_size
    new.flag_bits = info.flag_bits & ~_DATA_DESCRIPTOR  # sizes are in the local header
    assert out.fp is not None
    new.header_offset = out.fp.tell()
    out.fp.write(new.FileHeader())
    if isinstance(raw, Span):
        raw.write_to(out.fp)
    else:
        out.fp.write(raw)
    out.filelist.append(new)
    out.NameToInfo[new.filename] = new
    out.start_dir = out.fp.tell()
    out._didModify = True  # type: ignore[attr-defined]  # write the central directory on close, like writestr


CHUNK = 2 << 20  # bytes deflated per task by deflate_parallel (fixed: the stream must not depend on the cores)
_WINDOW = 32 << 10  # deflate's window: each chunk is primed with the 32 KiB before it


def _deflate_chunk(data: bytes, start: int, level: int, whole: bool = False) -> bytes:
    """One chunk of a raw deflate stream, pigz-style: primed with the preceding window, ended with a sync flush
    (byte-aligned, not final) unless it is the last, so that the chunks concatenate into one valid stream
    (``whole``: all of ``data`` as one chunk)."""
    end = len(data) if whole else min(start + CHUNK, len(data))
    zdict = data[max(0, start - _WINDOW):start]
    c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, zdict) if zdict else \
        zlib.compressobj(level, zlib.DEFLATED, -15, 9)
    body = c.compress(data[start:end])
    return body + c.flush(zlib.Z_FINISH if end == len(data) else zlib.Z_SYNC_FLUSH)


def deflate_parallel(data: bytes, level: int) -> bytes:
    """``data`` as one raw deflate stream, its chunks compressed on all cores (zlib releases the GIL): the one
    member a quick rebuild changes is usually libtriton, and deflating it alone was most of the packaging."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        return b"".join(pool.map(lambda start: _deflate_chunk(data, start, level), range(0, len(data), CHUNK)))


def _record_row(name: str, data: bytes) -> list[str]:
    return [name, f"sha256={record_hash(data)}", str(len(data))]


def dist_info_dir(zf: zipfile.ZipFile) -> str:
    return next(n.split("/", 1)[0] for n in zf.namelist() if n.split("/", 1)[0].endswith(".dist-info"))


def new_member(name: str, date_time: tuple[int, int, int, int, int, int]) -> zipfile.ZipInfo:
    """A member ``writestr`` deflates, as a regular file of mode 0644."""
    info = zipfile.ZipInfo(name, date_time)
    info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
    return info


def record_rows(zf: zipfile.ZipFile, dist_info: str) -> list[list[str]]:
    return [r for r in csv.reader(io.StringIO(zf.read(f"{dist_info}/RECORD").decode())) if r]


def _stat_key(path: Path) -> str:
    """What identifies the file's content as it is now without reading it: device, inode, size and mtime. Not
    ctime: ``cmake --install`` sets an up-to-date file's mode again on every run. A file whose content changed
    under the same mtime and size is one that ``cmake --install`` itself takes for up to date and does not copy."""
    st = path.lstat()
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


SUMS_LIMIT = 16 << 20  # bytes: a sums file larger than this is not read (a real one is ~100 bytes a member)


def read_sums(path: Path | None) -> dict[str, tuple[str, int, int]]:
    """The CRC-32 and size of each prefix file as a stat key found them (``_stat_key``), kept by the last
    ``write_wheel``; {} for anything but this user's regular file, writable by no one else, of one shape. An entry
    is used only when it names the file's stat key now and the last wheel's member's CRC-32 and size: one that
    does is trusted as the build dir is (like the last wheel and the prefix it sits beside)."""
    data = read_owned_json(path, SUMS_LIMIT) if path is not None else None
    if not isinstance(data, dict):
        return {}
    return {k: (v[0], v[1], v[2]) for k, v in data.items() if isinstance(v, list) and len(v) == 3
            and isinstance(v[0], str) and all(isinstance(x, int) and not isinstance(x, bool) for x in v[1:])}


def _reuse_or_deflate(out: zipfile.ZipFile, old: zipfile.ZipFile, raw_fp: IO[bytes], old_rows: dict[str, list[str]],
                      prefix: Path, path: Path, level: int, known: dict[str, tuple[str, int, int]],
                      sums: dict[str, tuple[str, int, int]]) -> tuple[list[str], bool]:
    """Write one member: the last wheel's compressed bytes when its content is the same (the CRC-32 and size the
    file had under the same stat key in ``known``, else read and computed), else deflated anew. Returns its RECORD
    row and whether it was copied; ``sums`` gets the file's stat key, CRC-32 and size."""
    name = path.relative_to(prefix).as_posix()
    key, info, was = _stat_key(path), old.NameToInfo.get(name), known.get(name)
    if info is not None and (name not in old_rows or _inflated(info)):
        info = None  # nothing to reuse: no row for it, or written again stored
    if info is not None and was is not None and was[0] == key and (info.CRC, info.file_size) == was[1:]:
        sums[name] = was
        _copy_compressed(out, info, Span(raw_fp, info))
        return old_rows[name], True
    data = path.read_bytes()
    crc = zlib.crc32(data)
    sums[name] = (key, crc, len(data))
    if info is not None and info.file_size == len(data) and crc == info.CRC:
        _copy_compressed(out, info, Span(raw_fp, info))
        return old_rows[name], True
    st = path.stat()
    new = zipfile.ZipInfo(name, time.localtime(st.st_mtime)[:6])
    new.external_attr = (st.st_mode & 0xFFFF) << 16
    new.CRC, new.file_size = crc, len(data)
    raw = deflate_parallel(data, level) if len(data) >= 2 * CHUNK and (os.cpu_count() or 1) > 1 else \
        _deflate_chunk(data, 0, level, whole=True)
    stored = len(raw) >= len(data)  # deflate does not shrink it (compressed package data): stored, read as it is
    new.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    new.compress_size = len(data) if stored else len(raw)
    _copy_compressed(out, new, data if stored else raw)
    return _record_row(name, data), False


def _inflated(info: zipfile.ZipInfo) -> bool:
    """A deflated member that deflate made no smaller: written again, stored (every reader of the wheel, its RECORD
    check first, then inflates it for nothing)."""
    return info.compress_type == zipfile.ZIP_DEFLATED and info.compress_size >= info.file_size > 0


def write_wheel(last: Path, prefix: Path, files: Iterable[Path], dest: Path, level: int,
                leave_out: Collection[str] = (), sums_file: Path | None = None,
                anew: Mapping[str, bytes] = MappingProxyType({})) -> dict[str, int]:
    """The wheel at ``dest`` from ``files`` under ``prefix``, reusing ``last``'s members and dist-info but the
    dist-info files named in ``leave_out`` (relative to it, a name ending in ``/`` a whole dir: what the caller
    writes anew, the SBOM) and those ``anew`` gives (relative name: content; the license files); RECORD is the
    last member. ``sums_file`` keeps each file's CRC-32 under its stat key, so an unchanged file (150 MB of
    package data) is not read again by the next quick rebuild. Returns how many members were copied and
    deflated."""
    counts = {"copied": 0, "deflated": 0}
    files = list(files)
    bad = outside_links([str(prefix)]) + [f"{f} -> {f.resolve()}" for f in files
                                          if not f.resolve().is_relative_to(prefix.resolve())]
    if bad:
        raise UserError(_REFUSAL.format("; ".join(sorted(set(bad))[:5])).removeprefix("tritonbuild: "))
    known = read_sums(sums_file)
    sums: dict[str, tuple[str, int, int]] = {}
    with zipfile.ZipFile(last) as old, open(last, "rb") as raw_fp, zipfile.ZipFile(dest, "w") as out:
        dist_info = dist_info_dir(old)
        old_rows = {r[0]: r for r in record_rows(old, dist_info)}
        rows = []
        for path in files:
            row, copied = _reuse_or_deflate(out, old, raw_fp, old_rows, prefix, path, level, known, sums)
            rows.append(row)
            counts["copied" if copied else "deflated"] += 1
        for info in old.infolist():
            inside = info.filename.removeprefix(f"{dist_info}/")
            left = inside in leave_out or inside in anew or any(d.endswith("/") and inside.startswith(d)
                                                                for d in leave_out)
            if inside != info.filename and inside != "RECORD" and not left:
                _copy_compressed(out, info, Span(raw_fp, info))
                rows.append(old_rows.get(info.filename) or _record_row(info.filename, old.read(info)))
        for inside, data in anew.items():
            out.writestr(new_member(f"{dist_info}/{inside}", time.localtime()[:6]), data)
            rows.append(_record_row(f"{dist_info}/{inside}", data))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([*rows, [f"{dist_info}/RECORD", "", ""]])
        out.writestr(new_member(f"{dist_info}/RECORD", time.localtime()[:6]), text.getvalue())
    _write_sums(sums_file, sums)
    return counts


def _write_sums(path: Path | None, sums: Mapping[str, tuple[str, int, int]]) -> None:
    if path is None:
        return
    with contextlib.suppress(OSError):  # a full disk: the next rebuild reads the files again
        replace_with(path, json.dumps({k: list(v) for k, v in sums.items()}, sort_keys=True))


def describe(counts: dict[str, Any]) -> str:
    return f"{counts['deflated']} members deflated, {counts['copied']} copied compressed from the last wheel"
