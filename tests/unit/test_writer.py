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


def test_an_unchanged_file_is_not_read_again_and_a_changed_or_lying_entry_is(tmp_path: Path, monkeypatch) -> None:
    """The sums file keeps each prefix file's CRC-32 under its stat key: the next quick rebuild copies an unchanged
    member without reading the file; an edit (new stat) or an entry that does not match the last wheel reads it."""
    data, lib = b"\x00data" * 50_000, b"\x7fELF" * 1000
    last, prefix, sums = tmp_path / "last.whl", tmp_path / "prefix", tmp_path / "sums.json"
    _last_wheel(last, {"triton/data.bin": data, "triton/_C/libtriton.so": lib})
    for name, body in {"triton/data.bin": data, "triton/_C/libtriton.so": lib}.items():
        (prefix / name).parent.mkdir(parents=True, exist_ok=True)
        (prefix / name).write_bytes(body)
    files = [prefix / "triton/data.bin", prefix / "triton/_C/libtriton.so"]
    assert writer.write_wheel(last, prefix, files, tmp_path / "a.whl", 1, sums_file=sums) == {"copied": 2,
                                                                                          "deflated": 0}
    read: list[str] = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: (read.append(self.name), real(self))[1])
    (prefix / "triton/_C/libtriton.so").write_bytes(b"\x7fELF new" * 1000)
    counts = writer.write_wheel(tmp_path / "a.whl", prefix, files, tmp_path / "b.whl", 1, sums_file=sums)
    assert counts == {"copied": 1, "deflated": 1} and read == ["libtriton.so"]  # data.bin copied unread
    with zipfile.ZipFile(tmp_path / "b.whl") as zf:
        assert zf.read("triton/data.bin") == data and zf.read("triton/_C/libtriton.so") == b"\x7fELF new" * 1000
    # a lying entry (the build dir's content is hostile): right stat key, a CRC the last wheel does not have
    import json
    entries = json.loads(sums.read_text())
    entries["triton/data.bin"][1] ^= 1
    sums.write_text(json.dumps(entries))
    read.clear()
    writer.write_wheel(tmp_path / "b.whl", prefix, files, tmp_path / "c.whl", 1, sums_file=sums)
    assert "data.bin" in read
    for junk in ("[]", "{", '{"triton/data.bin": [1, 2, 3]}', "x" * 10):
        sums.write_text(junk)
        assert writer.read_sums(sums) == {}
    sums.write_text(json.dumps(entries))
    assert writer.read_sums(sums)
    sums.chmod(0o666)  # writable by others: not this user's alone
    assert writer.read_sums(sums) == {}
    sums.unlink()
    sums.symlink_to(tmp_path / "a.whl")
    assert writer.read_sums(sums) == {}


def test_whatever_the_sums_file_holds_the_wheel_holds_the_prefix_files(tmp_path_factory) -> None:
    """Hostile sums files (generated JSON and bytes, up to 4 KiB, 200 cases, with the files' real stat keys and the
    last wheel's real CRCs among the values): the wheel's members are always the prefix's files, byte for byte, and
    the sums file written after is well-formed. (An entry naming the stat key, CRC and size exactly is trusted as
    the build dir is: sizes equal to the last wheel's members are not generated.)"""
    import json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    base = tmp_path_factory.mktemp("sums")
    data = {"triton/a.bin": b"a" * 5000, "triton/b.py": b"x = 2\n"}
    last = base / "last.whl"
    _last_wheel(last, {"triton/a.bin": b"b" * 5000, "triton/b.py": b"x = 1\n"})  # both changed since
    prefix = base / "prefix"
    for name, body in data.items():
        (prefix / name).parent.mkdir(parents=True, exist_ok=True)
        (prefix / name).write_bytes(body)
    keys = {n: writer._stat_key(prefix / n) for n in data}
    old_crc = {n: zipfile.ZipFile(last).getinfo(n).CRC for n in data}
    sizes = st.integers(-2**40, 2**40).filter(lambda n: n not in (5000, 6))  # the last wheel's: see above
    scalar = st.one_of(sizes, st.text(max_size=20), st.sampled_from([*keys.values()]),
                       st.sampled_from([*old_crc.values()]), st.booleans(), st.none())
    entry = st.lists(scalar, max_size=4)
    doc = st.one_of(st.dictionaries(st.sampled_from([*data, "x"]), entry, max_size=3).map(json.dumps),
                    st.binary(max_size=4096).map(lambda b: b.decode("latin-1")))

    @settings(max_examples=200, deadline=2000)
    @given(doc)
    def check(text: str) -> None:
        sums = base / "sums.json"
        sums.write_text(text)
        dest = base / "out.whl"
        writer.write_wheel(last, prefix, [prefix / n for n in data], dest, 1, sums_file=sums)
        with zipfile.ZipFile(dest) as zf:
            assert {n: zf.read(n) for n in data} == data
        assert set(writer.read_sums(sums)) == set(data)

    check()


def test_the_sums_file_is_replaced_never_written_through_a_link(tmp_path: Path) -> None:
    """Review 49: the sums file's temporary went through a link planted at its (predictable) name. The write goes
    to a new file created exclusively, renamed over the path: a link at the path is replaced, its target kept."""
    from tritonbuild.system.fileutil import replace_with

    target, sums = tmp_path / "victim", tmp_path / "quick-prefix.sums.json"
    target.write_text("kept")
    sums.symlink_to(target)
    writer._write_sums(sums, {"triton/a.py": ("1:2:3:4", 5, 6)})
    assert target.read_text() == "kept" and not sums.is_symlink()
    assert writer.read_sums(sums) == {"triton/a.py": ("1:2:3:4", 5, 6)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quick-prefix.sums.json", "victim"]  # no temporary left
    replace_with(tmp_path / "x.json", "{}")
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    import os

    old = os.umask(0)
    os.umask(old)
    return old


def test_a_member_deflate_does_not_shrink_is_stored_and_then_copied_as_stored(tmp_path: Path) -> None:
    """Compressed package data (150 MB in the loop's benchmark) deflated by scikit-build-core grows: every reader
    inflates it for nothing (the build's RECORD check first: 0.23 s of 0.36 s per 150 MB). The quick writer stores
    it once, then copies the stored member; a member that deflate shrinks stays deflated."""
    import os

    noise, text = os.urandom(300_000), b"x = 1\n" * 50_000
    last, prefix = tmp_path / "last.whl", tmp_path / "prefix"
    _last_wheel(last, {"triton/noise.bin": noise, "triton/big.py": text})
    for name, body in {"triton/noise.bin": noise, "triton/big.py": text}.items():
        (prefix / name).parent.mkdir(parents=True, exist_ok=True)
        (prefix / name).write_bytes(body)
    files = [prefix / "triton/noise.bin", prefix / "triton/big.py"]
    with zipfile.ZipFile(last) as zf:
        assert zf.getinfo("triton/noise.bin").compress_size >= len(noise)  # deflated, and larger for it
    assert writer.write_wheel(last, prefix, files, tmp_path / "a.whl", 6) == {"copied": 1, "deflated": 1}
    assert writer.write_wheel(tmp_path / "a.whl", prefix, files, tmp_path / "b.whl", 6) == {"copied": 2,
                                                                                       "deflated": 0}
    for wheel in ("a.whl", "b.whl"):
        with zipfile.ZipFile(tmp_path / wheel) as zf:
            assert zf.testzip() is None
            assert zf.getinfo("triton/noise.bin").compress_type == zipfile.ZIP_STORED
            assert zf.getinfo("triton/big.py").compress_type == zipfile.ZIP_DEFLATED
            assert zf.read("triton/noise.bin") == noise and zf.read("triton/big.py") == text
            rows = {r[0]: r for r in csv.reader(io.StringIO(zf.read(f"{DIST}/RECORD").decode())) if r}
            assert rows["triton/noise.bin"][1:] == [_hash(noise), str(len(noise))]
