"""Issue 38 (finding 8): the SBOM names a bundled ptxas like cuobjdump/nvdisasm (version, origin, sha256) and the
NVIDIA headers/CUPTI components by the version of the CUDA toolkit they came from, read at the edge from the
toolkit's version.json or its NVIDIA wheels' dist-info dirs (hostile: a malformed one is ignored, never a
traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.helpers import nvidia_facts, plan_for
from tritonbuild.wheel.sbom import Facts, Tool, sbom_json
from tritonbuild.wheel.sbom_write import _bundled_tool, _part_versions, toolkit_versions

SHA = "cd" * 32


def toolkit(base: Path, version_json: str | None = None, dists: tuple[str, ...] = ()) -> Path:
    (base / "bin").mkdir(parents=True)
    (base / "include").mkdir()
    (base / "bin" / "ptxas").write_bytes(Path("/bin/true").read_bytes())
    if version_json is not None:
        (base / "version.json").write_text(version_json)
    for d in dists:
        (base / "dist-info" / d).mkdir(parents=True)
    return base


def test_a_toolkits_version_json_or_dist_info_gives_its_parts_versions(tmp_path: Path) -> None:
    kit = toolkit(tmp_path / "cuda", json.dumps({"cuda": {"version": "12.8.1"}, "cuda_nvcc": {"version": "12.8.93"},
                                                 "cuda_cupti": {"version": "12.8.90"}}))
    root, found = toolkit_versions(str(kit / "bin" / "ptxas")) or ("", {})
    assert root == str(kit) and found == {"cuda": "12.8.1", "cuda_nvcc": "12.8.93", "cuda_cupti": "12.8.90"}
    tool = _bundled_tool(Tool("ptxas", str(kit / "bin" / "ptxas"), None), {"triton/backends/nvidia/bin/ptxas": SHA})
    assert (tool.sha256, tool.toolkit, tool.cuda) == (SHA, str(kit), "12.8.93")
    wheels = toolkit(tmp_path / "pipcuda", None, ("nvidia_cuda_nvcc-13.0.88.dist-info",
                                                  "nvidia_cuda_runtime-13.0.96.dist-info", "junk"))
    assert toolkit_versions(str(wheels / "include" / ".")) == (str(wheels), {"cuda_nvcc": "13.0.88",
                                                                            "cuda_runtime": "13.0.96"})


def test_a_malformed_version_json_is_ignored(tmp_path: Path) -> None:
    for i, text in enumerate(["{", "[" * 100_000, json.dumps({"cuda": {"version": "1; rm -rf /"}}), "[]",
                              json.dumps({"cuda": "12.8"}), " " * (2 << 20)]):
        kit = toolkit(tmp_path / str(i), text)
        assert toolkit_versions(str(kit / "bin" / "ptxas")) is None, text[:40]


def test_ptxas_and_the_toolkit_parts_get_version_origin_and_sha256(tree: Any, tmp_path: Path) -> None:
    root = tree()
    kit = toolkit(tmp_path / "cuda", json.dumps({"cuda": {"version": "12.8.1"}, "cuda_nvcc": {"version": "12.8.93"},
                                                 "cuda_cudart": {"version": "12.8.90"}}))
    ptxas = str(kit / "bin" / "ptxas")
    nv = nvidia_facts(root, str(kit / "include"), (("ptxas", ptxas, "CUDA toolkit"),))
    plan = plan_for(root, nvidia=nv)
    versions = dict(_part_versions(plan))
    assert versions["cuda-headers"] == "12.8.90" and versions["cupti-libs"] == "12.8.1"  # no cuda_cupti: the kit's
    tool = _bundled_tool(Tool("ptxas", ptxas, None), {"triton/backends/nvidia/bin/ptxas": SHA})
    text = sbom_json(plan, Facts(files=(), nvidia_tools=(tool,), nvidia_versions=_part_versions(plan)))
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    assert sbom_json(plan, Facts(files=(), nvidia_tools=(tool,), nvidia_versions=_part_versions(plan))) == text
    comps = {c["bom-ref"]: c for c in json.loads(text)["components"]}
    c = comps["nvidia-tool:ptxas"]
    props = {p["name"]: p["value"] for p in c["properties"]}
    assert c["version"] == "12.8.93" and c["hashes"] == [{"alg": "SHA-256", "content": SHA}]
    assert props["tritonbuild:origin"] == f"CUDA toolkit 12.8.93 at {kit}"
    assert comps["nvidia:cuda-headers"]["version"] == "12.8.90"
    repro = plan_for(root, {"reproducible": True}, {"SOURCE_DATE_EPOCH": "1767225600"}, nvidia=nv)
    doc = json.loads(sbom_json(repro, Facts(files=(), nvidia_tools=(tool,))))
    c = {c["bom-ref"]: c for c in doc["components"]}["nvidia-tool:ptxas"]
    assert {p["name"]: p["value"] for p in c["properties"]}["tritonbuild:origin"] == "CUDA toolkit 12.8.93"
    assert str(tmp_path) not in json.dumps(doc)  # no directory of the build machine in reproducible mode
