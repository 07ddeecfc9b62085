"""The provenance pins the NVIDIA tools the wheel carries (#38): a build of the example tree whose cuobjdump and
nvdisasm are unpacked, offline, from NVIDIA's wheels in a --wheelhouse (shaped as test_nvidia_tool_wheels makes
them: a real ELF executable as nvidia/cu13/bin/<tool>) lists each tool wheel in ``resolvedDependencies`` with its
version and sha256, and each bundled tool (ptxas too) with the sha256 of the file the wheel carries."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

from tests.helpers import NVIDIA_TOOL_PROJECTS, WHEEL_ONLY, fake_ptxas, one_of, tool_wheel
from tests.integration.conftest import git_commit, run_cli
from tritonbuild import example
from tritonbuild.wheel import attestation

PROJECTS = NVIDIA_TOOL_PROJECTS


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_tool_wheels_and_bundled_tools_are_resolved_dependencies(tmp_path: Path) -> None:
    house = tmp_path / "wheelhouse"
    wheels = {tool: tool_wheel(house, tool, "13.2.51") for tool in PROJECTS}
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    git_commit(tree)
    ptxas = fake_ptxas(tmp_path / "bin" / "ptxas", "13.0.88")
    env = {"CUDA_HOME": str(example.write_cuda_stub(tmp_path / "cuda")), "PATH": "/usr/bin:/bin",
           "TRITON_PTXAS_PATH": str(ptxas), **WHEEL_ONLY}
    proc = run_cli("build", "--json", "--source", str(tree), "--backends", "nvidia;amd", "--offline", "--wheelhouse",
                   str(house), "--cuda-tools-from", "pypi", "--jobs", "2", "--cache-dir", str(tmp_path / "cache"),
                   "--out", str(tmp_path / "dist"), cwd=tmp_path, env=env)
    wheel = Path(one_of(proc.stdout, "wheels")["wheel"])
    data = json.loads(wheel.with_name(attestation.file_name(wheel.name)).read_text())
    attestation.check_predicate(data["predicate"])  # still SLSA Provenance v1
    deps = {d["name"]: d for d in data["predicate"]["buildDefinition"]["resolvedDependencies"]}
    with zipfile.ZipFile(wheel) as zf:
        carried = {n.rsplit("/", 1)[-1]: _sha(zf.read(n)) for n in zf.namelist()
                   if n.startswith("triton/backends/nvidia/bin/")}
    assert set(carried) >= {"ptxas", "cuobjdump", "nvdisasm"}
    for tool, path in wheels.items():
        project = PROJECTS[tool]
        pinned = deps[f"pypi:{project}"]
        assert pinned["uri"] == f"pkg:pypi/{project}@13.2.51"
        assert pinned["digest"] == {"sha256": _sha(path.read_bytes())}  # the wheel file that was unpacked
        assert deps[f"nvidia-tool:{tool}"]["digest"] == {"sha256": carried[tool]}  # the bytes the wheel carries
        assert deps[f"nvidia-tool:{tool}"]["annotations"]["wheel"] == f"{project}==13.2.51"
    assert deps["nvidia-tool:ptxas"]["digest"] == {"sha256": carried["ptxas"]}
    assert deps["nvidia-tool:ptxas"]["uri"] == f"file://{ptxas}"
    assert "noDigest" in deps["llvm"]["annotations"] or deps["llvm"].get("digest")  # a digest, or why none
    assert any(name.startswith("nvidia:") for name in deps)  # the headers and CUPTI, with where they came from
