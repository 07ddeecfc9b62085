"""wheel.ptxas_memo: ptxas's kept answers are hostile input (whatever a ``.entry`` file holds, only an entry the memo
wrote itself is ever given back, byte for byte), and only a ptxas run whose every input is in the key is answered
from them (#45: the compile check of a quick rebuild no longer runs ptxas on PTX it assembled before)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.wheel import ptxas_memo

KEY = "ab" * 32
STREAMS = st.tuples(st.binary(max_size=300), st.binary(max_size=50), st.binary(max_size=50))
HEADER = st.fixed_dictionaries({"out": st.integers(-5, 400), "stdout": st.integers(-5, 60),
                                "stderr": st.integers(-5, 60), "sha256": st.text(max_size=70)})
HOSTILE = (st.binary(max_size=600)
           | st.tuples(HEADER, st.binary(max_size=500)).map(lambda t: json.dumps(t[0]).encode() + b"\n" + t[1])
           | st.integers(1, 3000).map(lambda n: b"[" * n + b"\n")
           | st.just(b'{"out": 1e999, "stdout": 0, "stderr": 0, "sha256": ""}\n'))


@settings(max_examples=200, deadline=None)
@given(HOSTILE, STREAMS)
def test_a_hostile_entry_is_a_miss_and_a_kept_one_comes_back_whole(content: bytes, streams: tuple) -> None:
    with tempfile.TemporaryDirectory() as memo:
        Path(memo, f"{KEY}.entry").write_bytes(content)
        got = ptxas_memo.read_entry(memo, KEY)  # never raises
        if got is not None:  # only a well-formed entry whose bytes match its own sha256
            head = json.loads(content.split(b"\n", 1)[0])
            assert b"".join(got) == content.split(b"\n", 1)[1] and len(got[0]) == head["out"]
        ptxas_memo.write_entry(memo, KEY, *streams)
        assert ptxas_memo.read_entry(memo, KEY) == streams
        with open(Path(memo, f"{KEY}.entry"), "r+b") as f:  # one byte changed: not given back
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
            f.seek(-1, os.SEEK_END)
            f.write(bytes([last[0] ^ 1]))
        assert ptxas_memo.read_entry(memo, KEY) is None


def test_a_link_a_fifo_a_shared_or_oversized_entry_is_a_miss(tmp_path: Path) -> None:
    good = tmp_path / "good"
    good.mkdir()
    ptxas_memo.write_entry(str(good), KEY, b"cubin", b"", b"log")
    memo = tmp_path / "memo"
    memo.mkdir()
    (memo / f"{KEY}.entry").symlink_to(good / f"{KEY}.entry")
    assert ptxas_memo.read_entry(str(memo), KEY) is None  # a link is not followed, even to a sound entry
    os.mkfifo(memo / f"{'cd' * 32}.entry")
    assert ptxas_memo.read_entry(str(memo), "cd" * 32) is None  # a fifo is not waited on
    (good / f"{KEY}.entry").chmod(0o666)
    assert ptxas_memo.read_entry(str(good), KEY) is None  # writable by others: anyone could have planted it
    (good / f"{KEY}.entry").chmod(0o644)
    assert ptxas_memo.read_entry(str(good), KEY) == (b"cubin", b"", b"log")
    big = b"x" * (ptxas_memo.ENTRY_LIMIT + 1)
    ptxas_memo.write_entry(str(good), "ef" * 32, big, b"", b"")
    assert not (good / f"{'ef' * 32}.entry").exists()  # too large to keep


ARGS = st.lists(st.sampled_from(["-v", "-lineinfo", "--fmad=false", "--gpu-name=sm_90a", "-o", "OUT", "IN",
                                 "OTHER", "/etc/passwd", "-O0"]), max_size=8)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["ptxas", "ptxas-blackwell", "nvdisasm", "sh"]), ARGS)
def test_only_a_run_whose_every_input_is_in_the_key_is_answered(tool: str, args: list) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp, tool)
        exe.write_text("#!/bin/sh\n")
        Path(tmp, "in.ptx").write_text(".version 8.0\n")
        Path(tmp, "other.ptx").write_text(".version 8.1\n")
        names = {"IN": str(Path(tmp, "in.ptx")), "OTHER": str(Path(tmp, "other.ptx")), "OUT": str(Path(tmp, "o"))}
        argv = [str(exe), *(names.get(a, a) for a in args)]
        found = ptxas_memo.key_of(argv)
        if found is not None:
            at = args.index("-o")
            rest = [*args[:at], *args[at + 2:]]
            assert tool.startswith("ptxas") and args.count("-o") == 1 and rest.count("IN") + rest.count("OTHER") == 1
            assert args[at + 1] not in rest  # never written over its own input (another .ptx may be the output)
            # no argument but the .ptx and the output names a path (the output is where ptxas itself would write)
            assert "/etc/passwd" not in rest and found[2] == argv[argv.index("-o") + 1]


def test_prune_keeps_the_most_recently_used_within_its_budget(tmp_path: Path) -> None:
    for n in range(6):
        ptxas_memo.write_entry(str(tmp_path), f"{n:064x}", b"c" * 1000, b"", b"")
        os.utime(tmp_path / f"{n:064x}.entry", (1000 + n, 1000 + n))
    (tmp_path / "keep.txt").write_text("not the memo's")
    ptxas_memo.prune(str(tmp_path), keep=3500)
    assert sorted(p.name[-7:] for p in tmp_path.glob("*.entry")) == ["3.entry", "4.entry", "5.entry"]
    assert (tmp_path / "keep.txt").exists()


def test_a_call_the_memo_cannot_take_goes_to_ptxas_never_raising(tmp_path: Path) -> None:
    """What ptxas would report (an output it cannot write, an argument no file system takes) is ptxas's to report:
    the memo neither raises an OSError into Triton's compile nor answers (found in review 50)."""
    exe = tmp_path / "ptxas"
    exe.write_text("#!/bin/sh\n")
    ptx = tmp_path / "k.ptx"
    ptx.write_text(".version 8.0\n")
    memo = tmp_path / "memo"
    memo.mkdir(mode=0o700)
    assert ptxas_memo.key_of([str(exe), "--opt=" + "x" * 300, str(ptx), "-o", str(tmp_path / "k.o")]) is None
    argv = [str(exe), "-v", str(ptx), "-o", str(tmp_path / "nodir" / "k.o")]
    found = ptxas_memo.key_of(argv)
    assert found is not None
    ptxas_memo.write_entry(str(memo), found[0], b"cubin", b"", b"")

    def real_run(*args: object, **kwargs: object) -> object:
        raise AssertionError("answer runs ptxas only on a miss")

    kwargs = {"check": True, "close_fds": False, "stderr": subprocess.DEVNULL}
    assert ptxas_memo.answer(str(memo), real_run, argv, (), kwargs) is None  # the caller runs ptxas itself
