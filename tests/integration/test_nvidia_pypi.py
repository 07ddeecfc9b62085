"""No CUDA toolkit: the CUDA and CUPTI files come from NVIDIA's wheels on a package index (a real HTTP server on
127.0.0.1 serving a PEP 503 index), fetched once into the cache, verified, and usable offline afterwards."""

from __future__ import annotations

import hashlib
import json
import platform
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import NVIDIA_TOOL_PROJECTS, WHEEL_ONLY, one_of, serve, tool_wheel
from tests.integration.conftest import plan_json, run_cli
from tritonbuild import example

ARCH = platform.machine()
WHEELS = {  # the example tree pins cudart/cudacrt 13.1.80 and cupti 12.8.90, like upstream d8da7c998
    "nvidia-cuda-runtime": ("13.1.80", {"nvidia/cu13/include/cuda.h":
                                        '#pragma once\n#include "crt/host_defines.h"\n#define CUDA_VERSION 13010\n',
                                        "nvidia/cu13/include/cuda_runtime.h": "#pragma once\n"}),
    "nvidia-cuda-crt": ("13.1.80", {"nvidia/cu13/include/crt/host_defines.h": "#pragma once\n"}),
    "nvidia-cuda-cupti-cu12": ("12.8.90", {
        "nvidia/cuda_cupti/include/cupti.h": "#pragma once\n#include <cuda.h>\n#include <cupti_version.h>\n",
        "nvidia/cuda_cupti/include/cupti_version.h": "#pragma once\n#define CUPTI_API_VERSION 120890\n",
        "nvidia/cuda_cupti/lib/libcupti.so.12": example.stand_in_library()}),  # only ELF libraries are bundled
}


def make_index(root: Path, tamper: str | None = None) -> None:
    for tool, project in NVIDIA_TOOL_PROJECTS.items():
        wheel = tool_wheel(root / "files", tool, "13.2.51")
        page = root / "simple" / project / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        page.write_text(f'<html><body><a href="../../files/{wheel.name}#sha256={digest}">{wheel.name}</a></body>'
                        "</html>\n")
    for project, (version, files) in WHEELS.items():
        name = f"{project.replace('-', '_')}-{version}-py3-none-manylinux2014_{ARCH}.manylinux_2_17_{ARCH}.whl"
        wheel = root / "files" / name
        wheel.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel, "w") as zf:
            for path, text in files.items():
                zf.writestr(path, text)
            zf.writestr(f"{project.replace('-', '_')}-{version}.dist-info/METADATA",
                        f"Name: {project}\nVersion: {version}\n")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if project == tamper:
            digest = "0" * 64
        page = root / "simple" / project / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f'<html><body><a href="../../files/{name}#sha256={digest}">{name}</a></body></html>\n')


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "index"
    make_index(root)
    with serve(root) as url:
        yield root, url


def test_wheels_from_the_index_fill_backends_nvidia_and_then_work_offline(index: tuple[Path, str],
                                                                           tmp_path: Path) -> None:
    root, url = index
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    pins = tree / "cmake" / "nvidia-toolchain-version.json"  # a CUDA 13 ptxas: its cuobjdump/nvdisasm have wheels
    pins.write_text(json.dumps({**json.loads(pins.read_text()), "ptxas": "13.0.88"}))
    no_cuda = tmp_path / "no-cuda"
    no_cuda.mkdir()
    env = {"CUDA_HOME": str(no_cuda), "TRITONBUILD_PYPI_INDEX": url, "PATH": "/usr/bin:/bin",
           **WHEEL_ONLY}
    args = ["--source", str(tree), "--cache-dir", str(tmp_path / "cache")]
    plan = plan_json(*args, cwd=tmp_path, env=env)
    parts = {p["name"]: p for p in plan["nvidia"]}
    assert parts["cuda-headers"]["wheels"] == ["nvidia-cuda-runtime==13.1.80", "nvidia-cuda-crt==13.1.80"]
    assert parts["cupti-libs"]["wheels"] == ["nvidia-cuda-cupti-cu12==12.8.90"]
    # the pin 13.1.80 is not on the index: the lowest version >= the ptxas pin (no ptxas here to ask)
    assert parts["cuobjdump"]["wheels"] == ["nvidia-cuda-cuobjdump==13.2.51"]
    assert parts["nvdisasm"]["wheels"] == ["nvidia-cuda-nvdisasm==13.2.51"]
    assert plan["toolchain"]["proton"] is True  # CUPTI can be fetched: proton on, like setup.py
    assert plan["cmake"]["defines"] and dict(plan["cmake"]["defines"])["TRITONBUILD_CUPTI_FROM_STAGE"] == "ON"

    proc = run_cli("build", "--json", *args, "--out", str(tmp_path / "dist"), cwd=tmp_path, env=env)
    result = one_of(proc.stdout, "wheels")
    with zipfile.ZipFile(result["wheel"]) as zf:
        names = set(zf.namelist())
        nv = "triton/backends/nvidia/"
        assert {f"{nv}include/cuda.h", f"{nv}include/crt/host_defines.h", f"{nv}include/cupti.h",
                f"{nv}include/cupti_version.h", f"{nv}lib/cupti/libcupti.so.12"} <= names
        assert f"{nv}include/cuda_runtime.h" not in names  # in the wheel, but nothing includes it
        for tool in ("cuobjdump", "nvdisasm"):  # Triton's SASS disassembly finds them here (test_disasm.py)
            assert zf.read(f"{nv}bin/{tool}") == Path("/bin/true").read_bytes()
            assert zf.getinfo(f"{nv}bin/{tool}").external_attr >> 16 & 0o111
        sbom = json.loads(zf.read(next(n for n in names if n.endswith("sboms/tritonbuild.cdx.json"))))
    comp = next(c for c in sbom["components"] if c["bom-ref"] == "nvidia-tool:cuobjdump")
    wheel_sha = hashlib.sha256(next((root / "files").glob("nvidia_cuda_cuobjdump-*.whl")).read_bytes()).hexdigest()
    assert comp["version"] == "13.2.51" and comp["purl"] == "pkg:pypi/nvidia-cuda-cuobjdump@13.2.51"
    props = {p["name"]: p["value"] for p in comp["properties"]}
    assert props["tritonbuild:origin"] == "PyPI nvidia-cuda-cuobjdump==13.2.51"
    assert props["tritonbuild:wheel-sha256"] == wheel_sha
    cached = tmp_path / "cache" / "nvidia" / "nvidia-cuda-runtime-13.1.80"
    assert json.loads((cached / ".complete").read_text())["sha256"]

    # the same command again (#45): the wheels the first build downloaded are in the cache now, and the plan is the
    # same as when they were still to fetch, so nothing is configured, compiled or packaged: the wheel is published
    # again
    second = one_of(run_cli("build", "--json", *args, "--out", str(tmp_path / "dist"), cwd=tmp_path,
                            env=env).stdout, "wheels")
    assert (second["strategy"], second["republished"]) == ("republish", True), second
    assert second["timings"] == {"republish": second["seconds"]} and second["sha256"] == result["sha256"]
    assert second["build_dir"] == result["build_dir"]

    # offline from here on: the cache serves; the server is not asked again
    (root / "simple").rename(root / "gone")
    again = plan_json(*args, "--offline", cwd=tmp_path, env=env)
    assert all(not p["wheels"] for p in again["nvidia"]) and again["toolchain"]["proton"] is True
    # the same tools from the same paths in the cache: the defines, hence the build dir, do not change
    assert dict(again["cmake"]["defines"])["TRITONBUILD_NVIDIA_TOOLS"] == \
        dict(plan["cmake"]["defines"])["TRITONBUILD_NVIDIA_TOOLS"]
    assert plan_json(*args, cwd=tmp_path, env=env)["key"] == plan["key"]
    fresh = plan_json("--source", str(tree), "--cache-dir", str(tmp_path / "empty-cache"), "--offline",
                      cwd=tmp_path, env=env)
    assert fresh["toolchain"]["proton"] is False  # nothing to build proton against: off, with the reason
    assert any("nvidia-cuda-cupti-cu12==12.8.90 from PyPI is not cached" in n for n in fresh["notes"])
    assert any("cannot launch kernels on NVIDIA GPUs" in w and "TRITON_CUDART_PATH" in w for w in fresh["warnings"])


def test_a_wheel_that_does_not_match_the_index_hash_is_refused(tmp_path: Path) -> None:
    from tritonbuild.errors import UserError
    from tritonbuild.nvidia import pypi
    from tritonbuild.resolve.nvidia_parts import pypi_wheel

    root = tmp_path / "index"
    make_index(root, tamper="nvidia-cuda-runtime")
    ref = pypi_wheel("cudart", "13.1.80")
    assert ref is not None
    with serve(root) as url, pytest.raises(UserError, match="does not match the index's sha256"):
        pypi.provide(ref, tmp_path / "cache", index=url, machine=ARCH, offline=False, log=lambda m: None)
    assert not (tmp_path / "cache" / "nvidia" / "nvidia-cuda-runtime-13.1.80").exists()
    assert not any((tmp_path / "cache" / "nvidia" / ".downloads").iterdir())


def test_a_wheel_over_the_download_cap_is_stopped_and_nothing_is_cached(tmp_path: Path) -> None:
    """#44: the limits the plan's settings give (``stage.http_limits(settings)``) reach the wheel's download:
    a wheel larger than http_max_bytes is refused before its body, and nothing of it is left."""
    from tritonbuild.nvidia import pypi
    from tritonbuild.resolve.nvidia_parts import pypi_wheel
    from tritonbuild.system.http import Limits, Stopped

    root = tmp_path / "index"
    make_index(root)
    ref = pypi_wheel("cudart", "13.1.80")
    assert ref is not None
    refusal = r"the server declares \d+ bytes \(Content-Length\), over the cap of 400 bytes that TRITONBUILD_HTTP_MAX"
    with serve(root) as url, pytest.raises(Stopped, match=refusal):
        pypi.provide(ref, tmp_path / "cache", index=url, machine=ARCH, offline=False, log=lambda m: None,
                     limits=Limits(max_bytes=400))  # the page (~300 bytes) passes, the wheel does not
    assert not (tmp_path / "cache" / "nvidia" / "nvidia-cuda-runtime-13.1.80").exists()
    assert not any((tmp_path / "cache" / "nvidia" / ".downloads").iterdir())
