"""system.probememo: a memo file in the cache dir is hostile input: whatever it holds (no JSON, another shape, too
large, a link, a fifo, deep nesting, values a check trips over) is ignored and written again, never trusted and never
an error; a key is the stat of the files it names (#45)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.system import probememo

KEY = {"files": [["/usr/bin/x", [1, 2, 3, 4, 5, 6]]]}
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=4), max_leaves=20)
ENTRY = st.fixed_dictionaries({"key": st.just(KEY) | JSON, "value": JSON})
MEMO = st.fixed_dictionaries({"version": st.just(1) | JSON, "entries": st.lists(ENTRY | JSON, max_size=20)})
CONTENT = (st.binary(max_size=200) | MEMO.map(lambda d: json.dumps(d).encode())
           | JSON.map(lambda d: json.dumps(d).encode()) | st.integers(1, 5000).map(lambda n: b"[" * n)
           | st.just(b" " * (probememo.MAX_BYTES + 1)))


def _check(value: object) -> bool:
    return isinstance(value, str) and value.startswith("V")  # the caller's check: V and anything


@settings(max_examples=150, deadline=None)
@given(CONTENT)
def test_a_hostile_memo_is_ignored_then_written_again(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp, probememo.kept_in(Path(tmp)):
        memo = Path(tmp) / "probes" / "ptxas.json"
        memo.parent.mkdir()
        memo.write_bytes(content)
        found = probememo.recall("ptxas", KEY, _check)  # never raises, gives only what the check takes
        assert found is None or _check(found)
        probememo.remember("ptxas", KEY, "V13.0.88")
        assert probememo.recall("ptxas", KEY, _check) == "V13.0.88"
        assert len(memo.read_bytes()) <= probememo.MAX_BYTES


def test_a_link_or_fifo_is_no_memo_and_a_full_memo_drops_its_oldest(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"version": 1, "entries": [{"key": KEY, "value": "V1"}]}))
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "ptxas.json").symlink_to(good)
    os.mkfifo(probes / "python.json")
    with probememo.kept_in(tmp_path):
        assert probememo.recall("ptxas", KEY, _check) is None  # a link is not followed, even to a sound memo
        assert probememo.recall("python", KEY, _check) is None  # a fifo is not waited on
        for n in range(probememo.MAX_ENTRIES + 3):
            probememo.remember("llvm-config", {"n": n}, f"V{n}")
        assert probememo.recall("llvm-config", {"n": 0}, _check) is None
        last = probememo.MAX_ENTRIES + 2
        assert probememo.recall("llvm-config", {"n": last}, _check) == f"V{last}"
    assert probememo.recall("llvm-config", {"n": 3}, _check) is None  # outside kept_in: no memo at all


def test_a_key_is_the_stat_of_its_files(tmp_path: Path) -> None:
    tool = tmp_path / "tool"
    tool.write_text("a")
    before = probememo.file_key(tool)
    assert probememo.file_key(tool) == before
    os.utime(tool, ns=(1, 1))  # touched (even back in time): another key
    assert probememo.file_key(tool) != before
    link = tmp_path / "link"
    link.symlink_to(tool)
    assert probememo.file_key(link) == probememo.file_key(tool)  # a link is the file it names
    assert probememo.file_key(tmp_path / "absent") == [str(tmp_path / "absent"), None]


def test_the_sboms_dpkg_answers_are_remembered_until_dpkgs_database_or_the_file_changes(tmp_path: Path,
                                                                                         monkeypatch) -> None:
    """gather.packages.packages_of: a rebuild's SBOM runs no dpkg-query while nothing was installed or removed;
    a new dpkg status file or a replaced file asks again; a hostile answer in the memo is asked again too."""
    from tritonbuild.gather import packages
    from tritonbuild.system.proc import Result

    status, lib = tmp_path / "status", tmp_path / "libz.so.1"
    status.write_text("Package: zlib1g\n")
    lib.write_bytes(b"\x7fELF")
    monkeypatch.setattr(packages, "DPKG_FILES", (str(status),))
    monkeypatch.setattr(packages, "distro", lambda: "debian")
    ran: list[str] = []

    def fake_run(cmd: list[str], **kw: object) -> Result:
        ran.append(cmd[1])
        out = f"zlib1g:amd64: {lib}\n" if cmd[1] == "-S" else "zlib1g:amd64\tzlib1g\t1:1.2.13\tamd64\n"
        return Result(tuple(cmd), 0, out, "")

    monkeypatch.setattr(packages.proc, "run", fake_run)
    want = {str(lib): packages.DebPackage("zlib1g", "1:1.2.13", "amd64", "debian")}
    with probememo.kept_in(tmp_path / "cache"):
        (tmp_path / "cache").mkdir()
        assert packages.packages_of([str(lib)]) == want and ran == ["-S", "-W"]
        assert packages.packages_of([str(lib)]) == want and ran == ["-S", "-W"]  # remembered
        status.write_text("Package: zlib1g\nPackage: another\n")  # dpkg installed something
        assert packages.packages_of([str(lib)]) == want and len(ran) == 4
        memo = tmp_path / "cache" / "probes" / "dpkg.json"
        data = json.loads(memo.read_text())
        data["entries"][-1]["value"] = {str(lib): ["x", "y", "z"]}  # three fields: not an answer
        memo.write_text(json.dumps(data))
        assert packages.packages_of([str(lib)]) == want and len(ran) == 6
    assert packages.packages_of([str(lib)]) == want and len(ran) == 8  # no cache dir: always asked


def test_the_compilers_version_is_remembered_until_the_compiler_changes(tmp_path: Path, monkeypatch) -> None:
    """gather.host.tool_version (the provenance's compiler line, asked on every build, a no-op's too): remembered
    under the compiler's stat; a replaced compiler, or a memo that lies in its shape, asks again."""
    from tritonbuild.gather import host
    from tritonbuild.system.proc import Result

    cc = tmp_path / "g++"
    cc.write_text("#!/bin/sh\n")
    ran: list[str] = []

    def fake_run(cmd: list[str], **kw: object) -> Result:
        ran.append(cmd[0])
        return Result(tuple(cmd), 0, f"g++ (Debian 12.2.0-14) 12.2.0 #{len(ran)}\nmore\n", "")

    monkeypatch.setattr(host, "run", fake_run)
    (tmp_path / "cache").mkdir()
    with probememo.kept_in(tmp_path / "cache"):
        host.tool_version.cache_clear()
        assert host.tool_version(str(cc)) == "g++ (Debian 12.2.0-14) 12.2.0 #1"
        host.tool_version.cache_clear()
        assert host.tool_version(str(cc)) == "g++ (Debian 12.2.0-14) 12.2.0 #1" and len(ran) == 1  # remembered
        cc.write_text("#!/bin/sh\n# another compiler\n")
        host.tool_version.cache_clear()
        assert host.tool_version(str(cc)).endswith("#2") and len(ran) == 2  # type: ignore[union-attr]
        memo = tmp_path / "cache" / "probes" / "compiler.json"
        data = json.loads(memo.read_text())
        data["entries"][-1]["value"] = "x\x1b[2J" * 100  # not a version line
        memo.write_text(json.dumps(data))
        host.tool_version.cache_clear()
        assert host.tool_version(str(cc)).endswith("#3")  # type: ignore[union-attr]
    host.tool_version.cache_clear()
