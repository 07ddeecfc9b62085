from __future__ import annotations

import base64
import csv
import hashlib
import io
import zipfile
from pathlib import Path

from tritonbuild.wheel import writer

DIST = "triton-3.6.0.dist-info"


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _last_wheel(path: Path, members: dict[str, bytes]) -> None:
    meta = {f"{DIST}/METADATA": b"Name: triton\nVersion: 3.6.0\n", f"{DIST}/WHEEL": b"Wheel-Version: 1.0\n"}
    rows = [[n, _hash(d), str(len(d))] for n, d in {**members, **meta}.items()]
    record = io.StringIO()
    csv.writer(record, lineterminator="\n").writerows([*rows, [f"{DIST}/RECORD", "", ""]])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in {**members, **meta, f"{DIST}/RECORD": record.getvalue().encode()}.items():
            zf.writestr(name, data)


def test_unchanged_members_are_copied_compressed_and_changed_ones_deflated(tmp_path: Path) -> None:
    same, old_lib = b"print('same')\n" * 100, b"\x7fELF old" * 1000
    last = tmp_path / "last.whl"
    _last_wheel(last, {"triton/__init__.py": same, "triton/_C/libtriton.so": old_lib,
                       "triton/gone.py": b"removed since\n"})
    prefix = tmp_path / "prefix"
    files = {"triton/__init__.py": same, "triton/_C/libtriton.so": b"\x7fELF new" * 1000,
             "triton/new.py": b"x = 1\n"}
    for name, data in files.items():
        (prefix / name).parent.mkdir(parents=True, exist_ok=True)
        (prefix / name).write_bytes(data)
    dest = tmp_path / "out.whl"
    counts = writer.write_wheel(last, prefix, [prefix / n for n in files], dest, 1)
    assert counts == {"copied": 1, "deflated": 2}
    with zipfile.ZipFile(dest) as zf, zipfile.ZipFile(last) as old:
        assert zf.testzip() is None
        names = set(zf.namelist())
        assert names == {*files, f"{DIST}/METADATA", f"{DIST}/WHEEL", f"{DIST}/RECORD"}  # gone.py is gone
        for name, data in files.items():
            assert zf.read(name) == data
        info = zf.getinfo("triton/__init__.py")
        assert (info.CRC, info.compress_size) == (old.getinfo("triton/__init__.py").CRC,
                                                  old.getinfo("triton/__init__.py").compress_size)
        rows = {r[0]: r for r in csv.reader(io.StringIO(zf.read(f"{DIST}/RECORD").decode())) if r}
        assert set(rows) == names
        for name in names - {f"{DIST}/RECORD"}:
            assert rows[name][1:] == [_hash(zf.read(name)), str(len(zf.read(name)))], name


def test_a_large_changed_member_is_deflated_in_parallel_chunks_into_one_valid_stream(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    monkeypatch.setattr(writer, "CHUNK", 64 << 10)  # a 1 MiB library makes 16 chunks
    lib = b"".join(hashlib.sha256(str(i % 5000).encode()).digest() * 4 for i in range(8192))  # compressible
    last = tmp_path / "last.whl"
    _last_wheel(last, {"triton/_C/libtriton.so": b"old"})
    prefix = tmp_path / "prefix"
    (prefix / "triton" / "_C").mkdir(parents=True)
    (prefix / "triton" / "_C" / "libtriton.so").write_bytes(lib)
    dest = tmp_path / "out.whl"
    writer.write_wheel(last, prefix, [prefix / "triton" / "_C" / "libtriton.so"], dest, 6)
    with zipfile.ZipFile(dest) as zf:
        assert zf.testzip() is None  # CRC checked against a full inflate of the concatenated chunks
        info = zf.getinfo("triton/_C/libtriton.so")
        assert zf.read(info) == lib and info.compress_type == zipfile.ZIP_DEFLATED
        assert info.compress_size < len(lib) // 2  # the chunks see the window before them
