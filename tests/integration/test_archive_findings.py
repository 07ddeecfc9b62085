"""Issue 44's archive findings end to end, without building anything: an LLVM download's cache entry holds no mode
or owner the archive chose, an archive is an LLVM only when it has one (llvm-config that runs, MLIR's config),
a --wheelhouse tool wheel with a 1 GiB member of zeros is refused before it is written, and a hostile archive
costs little memory (peak RSS of a child, from wait4)."""

from __future__ import annotations

import io
import os
import platform
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.helpers import PlainReporter, claims, deflated, deflated_zeros, hand_zip, many_empty_members, sound
from tests.integration.llvm_fixtures import Server, prefix_files
from tritonbuild.errors import UserError
from tritonbuild.llvm import download
from tritonbuild.nvidia import pypi
from tritonbuild.resolve.llvm_requirement import LLVMRequest
from tritonbuild.resolve.nvidia_parts import WheelRef

H = "2eb709b95d8f521aa15401e159fac0729d56a677"
TOP = "llvm-2eb709b9-ubuntu-x64-1"
ARCHIVE = f"{TOP}.tar.gz"


# A child started by a small launcher, its peak RSS from wait4 (as test_hostile_wheels measures it: a child forked
# from a grown pytest worker would report the worker's peak)
_LAUNCHER = """import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
out = child.stdout.read()
_, status, usage = os.wait4(child.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss * 1024))
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def rss_of(argv: list[str], cwd: Path) -> tuple[int, str, int]:
    """Exit code, output and peak RSS (bytes) of ``argv``."""
    report = cwd / "rss.txt"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-c", _LAUNCHER, str(report), *argv], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return proc.returncode, proc.stdout.decode(errors="replace"), int(report.read_text())


def llvm_tar(entries: list[tuple[str, bytes, int, int, bytes]]) -> bytes:
    """A tar.gz of ``(name under TOP, data, mode, uid, type)`` entries."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data, mode, uid, kind in entries:
            info = tarfile.TarInfo(f"{TOP}/{name}" if name else TOP)
            info.type, info.mode, info.uid, info.gid = kind, mode, uid, uid
            if kind in (tarfile.LNKTYPE, tarfile.SYMTYPE):
                info.linkname = data.decode()
                data = b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buf.getvalue()


def provide(tmp_path: Path, data: bytes) -> Path:
    with Server({ARCHIVE: data}) as srv:
        req = LLVMRequest(llvm_hash=H, build_number=1, sha256={}, suffix="ubuntu-x64", targets=("X86",),
                          cache_root=tmp_path / "cache", mirror=f"{srv.url}/good", allow_unpinned=True)
        return download.provide(req, PlainReporter(io.StringIO()))


def entry(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "llvm" / TOP


def test_an_llvm_archives_modes_and_owners_never_reach_the_cache(tmp_path: Path) -> None:
    # issue 44: -rwsrwsrwx root bin/clang, a world-writable bin/llvm-config owned by uid 1234, a world-writable lib
    files = prefix_files()
    entries = [("", b"", 0o1777, 65534, tarfile.DIRTYPE), ("bin", b"", 0o1777, 1234, tarfile.DIRTYPE),
               ("lib", b"", 0o777, 65534, tarfile.DIRTYPE),
               ("bin/clang", b"\x7fELF", 0o6777, 0, tarfile.REGTYPE)]
    entries += [(rel, data, 0o6777 if rel == "bin/llvm-config" else 0o777 if mode & 0o111 else 0o666, 1234,
                 tarfile.REGTYPE) for rel, (data, mode) in files.items()]
    prefix = provide(tmp_path, llvm_tar(entries))
    assert prefix == entry(tmp_path) and (prefix / "bin" / "llvm-config").is_file()
    assert sound(prefix) == []  # no setuid/setgid/sticky, no group/world write, owner = who runs tritonbuild
    assert stat.S_IMODE((prefix / "bin" / "clang").stat().st_mode) == 0o755


@pytest.mark.parametrize(("case", "missing"), [
    ("a hardlink and nothing else", "it has no bin/llvm-config"),
    ("no MLIR", "it has no lib/cmake/mlir/MLIRConfig.cmake"),
    ("llvm-config fails", "its bin/llvm-config does not run"),
    ("llvm-config says no version", "its bin/llvm-config --version says hello world, not an LLVM version"),
    ("llvm-config is a link", "its bin/llvm-config is no regular file"),
])
def test_an_archive_is_an_llvm_only_when_it_has_one(tmp_path: Path, case: str, missing: str) -> None:
    # issue 44: an archive holding only llvm/a and a hardlink llvm/b was "LLVM 2eb709b95d8f ready", cached, reused
    good = [(rel, data, mode, 0, tarfile.REGTYPE) for rel, (data, mode) in prefix_files().items()]
    entries = {
        "a hardlink and nothing else": [("a", b"x", 0o644, 0, tarfile.REGTYPE),
                                        ("b", f"{TOP}/a".encode(), 0o644, 0, tarfile.LNKTYPE)],
        "no MLIR": [e for e in good if "mlir/" not in e[0]],
        "llvm-config fails": [e for e in good if e[0] != "bin/llvm-config"] +
                             [("bin/llvm-config", b"#!/bin/sh\nexit 3\n", 0o755, 0, tarfile.REGTYPE)],
        "llvm-config says no version": [e for e in good if e[0] != "bin/llvm-config"] +
                                       [("bin/llvm-config", b"#!/bin/sh\necho hello world\n", 0o755, 0,
                                         tarfile.REGTYPE)],
        "llvm-config is a link": [e for e in good if e[0] != "bin/llvm-config"] +
                                 [("bin/real-config", good[0][1], 0o755, 0, tarfile.REGTYPE),
                                  ("bin/llvm-config", b"real-config", 0o777, 0, tarfile.SYMTYPE)],
    }[case]
    data = llvm_tar(entries)
    with pytest.raises(UserError, match=f"The archive {ARCHIVE} is no LLVM") as err:
        provide(tmp_path, data)
    assert missing in str(err.value) and "Nothing was installed or cached" in str(err.value), str(err.value)
    assert not entry(tmp_path).exists()
    llvm = tmp_path / "cache" / "llvm"  # no entry, no staging dir left, no download kept: only the locks
    assert sorted(p.name for p in llvm.iterdir() if "lock" not in p.name) == [".downloads"]
    assert not any((llvm / ".downloads").iterdir())


def test_a_wheelhouse_tool_wheel_with_a_gib_of_zeros_is_refused_before_it_is_written(tmp_path: Path) -> None:
    # issue 44: a --wheelhouse cuobjdump wheel with a 1 GiB member of zeros (1 MB compressed) was unpacked and kept
    arch = platform.machine()
    house = tmp_path / "wheelhouse"
    house.mkdir()
    name = f"nvidia_cuda_cuobjdump-13.2.51-py3-none-manylinux2014_{arch}.whl"
    meta = b"Metadata-Version: 2.1\nName: nvidia-cuda-cuobjdump\nVersion: 13.2.51\n"
    hand_zip(house / name, [("nvidia_cuda_cuobjdump-13.2.51.dist-info/METADATA", *deflated(meta), 0o644),
                            ("nvidia/cu13/bin/cuobjdump", *deflated_zeros(1024), 1 << 30, 0o755)])
    assert (house / name).stat().st_size < 2 << 20
    cache = tmp_path / "cache"
    with pytest.raises(UserError, match=r"'nvidia/cu13/bin/cuobjdump' inflates 10\d\d times to 1024\.0 MiB") as err:
        pypi.provide(WheelRef("nvidia-cuda-cuobjdump", "13.2.51", ""), cache, index="http://127.0.0.1:1/simple",
                     machine=arch, offline=True, log=lambda m: None, wheelhouse=house)
    assert f"Refusing to unpack the wheel {house / name}" in str(err.value)
    written = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert written < 4 << 20 and not (cache / "nvidia" / "nvidia-cuda-cuobjdump-13.2.51").exists()


def test_a_zip_claiming_millions_of_members_costs_verify_little_memory(tmp_path: Path) -> None:
    # issue 44: verify of a 135 MB zip listing 2.5 M members: 1.29 GB RSS and 55 s before the refusal
    wheel = tmp_path / "triton-3.6.0-py3-none-any.whl"
    wheel.write_bytes(claims(2_500_000))
    rc, out, rss = rss_of([sys.executable, "-m", "tritonbuild", "verify", "--no-import", str(wheel)], tmp_path)
    assert rc == 1 and "Traceback" not in out and "it lists 2500000 members (at most 200000 are read)" in out, out
    assert rss < 150 << 20, rss


_EXTRACT = """import sys
from pathlib import Path
from tritonbuild.system import archive
from tritonbuild.errors import UserError
try:
    archive.extract_tar(Path(sys.argv[1]), Path(sys.argv[2]), "the archive", caps=archive.Caps(members=20000))
except UserError as exc:
    print(exc)
"""


def test_a_tar_of_many_members_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    # issue 44: a 10.7 MB tar.gz of 1.5 M empty members ran 300 s at 883 MB; here 150,000 members, the cap lowered
    import gzip

    path = tmp_path / "many.tar.gz"
    path.write_bytes(gzip.compress(many_empty_members(150_000), 1))
    rc, out, rss = rss_of([sys.executable, "-c", _EXTRACT, str(path), str(tmp_path / "out")], tmp_path)
    assert rc == 0 and "it has more than 20000 members (the rest were not read)" in out, out
    assert rss < 120 << 20, rss
