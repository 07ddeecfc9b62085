"""The README's main job with no network and no Triton checkout: `tritonbuild selftest`."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import flat, run_cli


def test_selftest_builds_imports_and_lowers_a_kernel_to_valid_spirv(tmp_path: Path) -> None:
    proc = run_cli("selftest", "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "dist"),
                   cwd=tmp_path, env={"CCACHE_DIR": str(tmp_path / "ccache")})
    out = flat(proc.stdout)
    assert "spirv: ttir,llir,spv:" in out and "bytes of SPIR-V, spirv-val: valid" in out, out[-2000:]
    assert "self-test passed" in out
    [wheel] = (tmp_path / "dist").glob("*.whl")
    assert wheel.name.startswith("triton-")
    # the spirv backend's configure-time download came from the self-test's local checkout (--dep)
    assert "spirv-kernel-abi" in out and "(at the pin)" in out
