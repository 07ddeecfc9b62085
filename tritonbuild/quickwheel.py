"""Rebuild the wheel after an edit without scikit-build-core's configure, fresh install and full re-zip (edge).

When the plan is the one the last wheel was built from (``republish.last``), ``build`` runs ninja, installs the
tritonbuild component with ``cmake --install`` into a prefix kept in the build dir (CMake copies only files whose
time changed; the bundle step runs as in every install) and writes the wheel from that prefix: a member whose bytes
are the last wheel's (same size and CRC-32) is copied still compressed, the others are deflated at the plan's zip
level, and the dist-info comes from the last wheel with a new RECORD. On d8da7c998 scikit-build-core's configure,
install and packaging were 2.5 + 1.9 + 5.5 s of a 33 s one-edit rebuild. Builds that repair with auditwheel or
must be reproducible (fixed zip metadata) take scikit-build-core's path.
"""

from __future__ import annotations

import csv
import io
import json
import os
import struct
import time
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from tritonbuild.fileutil import record_hash
from tritonbuild.plan import Plan
from tritonbuild.staging import cache_value, cmake_build_dir

PREFIX = "quick-prefix"
_LOCAL_HEADER = 30  # fixed part of a zip local file header
_DATA_DESCRIPTOR = 0x08


def usable(plan: Plan) -> bool:
    return plan.repair is None and not plan.reproducible


def prefix_of(plan: Plan) -> Path:
    return Path(plan.cmake.build_dir) / PREFIX


def commands(plan: Plan) -> list[list[str]] | None:
    """ninja for the plan's targets, then ``cmake --install`` of its component into the kept prefix; None when
    the build dir does not record its ninja and cmake (never configured)."""
    build = cmake_build_dir(plan)
    ninja, cmake = cache_value(build, "CMAKE_MAKE_PROGRAM"), cache_value(build, "CMAKE_COMMAND")
    if not ninja or not cmake:
        return None
    install = [cmake, "--install", str(build), "--component", plan.cmake.install_component,
               "--prefix", str(prefix_of(plan))]
    return [[ninja, "-C", str(build), f"-j{plan.toolchain.jobs}", *plan.cmake.build_targets],
            install + (["--strip"] if plan.strip else [])]


def _bundled(plan: Plan) -> list[str]:
    try:
        report = json.loads((Path(plan.cmake.build_dir) / "bundle.json").read_text())
    except (OSError, ValueError):
        return []
    return [str(b["name"]) for b in report.get("bundled", [])]


def _manifest(plan: Plan) -> list[Path]:
    manifest = cmake_build_dir(plan) / f"install_manifest_{plan.cmake.install_component}.txt"
    try:
        return [Path(line) for line in manifest.read_text().splitlines() if line.strip()]
    except OSError:
        return []


def forget_bundled(plan: Plan) -> None:
    """Remove what the last bundle step copied into the kept prefix's ``triton/_C`` (the files there that no
    install rule put there), so that this install's bundle step copies and reports them again: a library already
    in the tree would count as the tree's own and be left out of the wheel."""
    lib_dir = prefix_of(plan) / "triton" / "_C"
    installed = set(_manifest(plan))
    for path in lib_dir.iterdir() if lib_dir.is_dir() else ():
        if path.is_file() and path not in installed:
            path.unlink()


def installed_files(plan: Plan) -> list[Path]:
    """What the last install put in the prefix: CMake's manifest, and the libraries the bundle step copied."""
    prefix = prefix_of(plan)
    files = _manifest(plan)
    files += [prefix / "triton" / "_C" / name for name in _bundled(plan)]
    return sorted({f for f in files if f.is_file()})


def _raw(fp: IO[bytes], info: zipfile.ZipInfo) -> bytes:
    """A member's compressed bytes, read after its local header."""
    fp.seek(info.header_offset)
    header = fp.read(_LOCAL_HEADER)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    fp.seek(info.header_offset + _LOCAL_HEADER + name_len + extra_len)
    return fp.read(info.compress_size)


def _copy_compressed(out: zipfile.ZipFile, info: zipfile.ZipInfo, raw: bytes) -> None:
    """Append a member whose compressed bytes are known (zipfile has no public call for it)."""
    new = zipfile.ZipInfo(info.filename, info.date_time)
    new.compress_type, new.external_attr, new.create_system = info.compress_type, info.external_attr, \
        info.create_system
    new.CRC, new.compress_size, new.file_size = info.CRC, info.compress_size, info.file_size
    new.flag_bits = info.flag_bits & ~_DATA_DESCRIPTOR  # sizes are in the local header
    assert out.fp is not None
    new.header_offset = out.fp.tell()
    out.fp.write(new.FileHeader())
    out.fp.write(raw)
    out.filelist.append(new)
    out.NameToInfo[new.filename] = new
    out.start_dir = out.fp.tell()
    out._didModify = True  # type: ignore[attr-defined]  # write the central directory on close, like writestr


CHUNK = 8 << 20  # bytes deflated per task by deflate_parallel
_WINDOW = 32 << 10  # deflate's window: each chunk is primed with the 32 KiB before it


def _deflate_chunk(data: bytes, start: int, level: int) -> bytes:
    """One chunk of a raw deflate stream, pigz-style: primed with the preceding window, ended with a sync flush
    (byte-aligned, not final) unless it is the last, so that the chunks concatenate into one valid stream."""
    end = min(start + CHUNK, len(data))
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


def write_wheel(last: Path, prefix: Path, files: Iterable[Path], dest: Path, level: int) -> dict[str, int]:
    """The wheel at ``dest`` from ``files`` under ``prefix``, reusing ``last``'s members and dist-info; returns how
    many members were copied and deflated."""
    counts = {"copied": 0, "deflated": 0}
    with zipfile.ZipFile(last) as old, open(last, "rb") as raw_fp, zipfile.ZipFile(dest, "w") as out:
        dist_info = next(n.split("/", 1)[0] for n in old.namelist() if n.split("/", 1)[0].endswith(".dist-info"))
        old_rows = {r[0]: r for r in csv.reader(io.StringIO(old.read(f"{dist_info}/RECORD").decode())) if r}
        rows = []
        for path in files:
            name = path.relative_to(prefix).as_posix()
            data = path.read_bytes()
            info = old.NameToInfo.get(name)
            if info is not None and info.file_size == len(data) and zlib.crc32(data) == info.CRC \
                    and name in old_rows:
                _copy_compressed(out, info, _raw(raw_fp, info))
                rows.append(old_rows[name])
                counts["copied"] += 1
                continue
            st = path.stat()
            new = zipfile.ZipInfo(name, time.localtime(st.st_mtime)[:6])
            new.compress_type = zipfile.ZIP_DEFLATED
            new.external_attr = (st.st_mode & 0xFFFF) << 16
            if len(data) >= 2 * CHUNK and (os.cpu_count() or 1) > 1:
                new.CRC, new.file_size = zlib.crc32(data), len(data)
                raw = deflate_parallel(data, level)
                new.compress_size = len(raw)
                _copy_compressed(out, new, raw)
            else:
                out.writestr(new, data, compresslevel=level)
            rows.append(_record_row(name, data))
            counts["deflated"] += 1
        for info in old.infolist():
            if info.filename.startswith(f"{dist_info}/") and info.filename != f"{dist_info}/RECORD":
                _copy_compressed(out, info, _raw(raw_fp, info))
                rows.append(old_rows.get(info.filename) or _record_row(info.filename, old.read(info)))
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([*rows, [f"{dist_info}/RECORD", "", ""]])
        record = zipfile.ZipInfo(f"{dist_info}/RECORD", time.localtime()[:6])
        record.compress_type = zipfile.ZIP_DEFLATED
        record.external_attr = 0o644 << 16
        out.writestr(record, text.getvalue())
    return counts


def describe(counts: dict[str, Any]) -> str:
    return f"{counts['deflated']} members deflated, {counts['copied']} copied compressed from the last wheel"
