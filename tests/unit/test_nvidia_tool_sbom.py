"""Issue 38: a cuobjdump/nvdisasm bundled from NVIDIA's wheel is named in the SBOM by its PyPI package and the
wheel's sha256 (read at the edge from the cache entry's marker), once: as its nvidia-tool component."""

from __future__ import annotations

import json
from pathlib import Path

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.helpers import nvidia_facts, plan_for
from tritonbuild.nvidia.pypi import wheel_origin
from tritonbuild.resolve.nvidia_parts import ToolOffer
from tritonbuild.wheel.sbom import Facts, Tool, sbom_json

SHA = "ab" * 32


def test_a_tool_from_nvidias_wheel_is_its_pypi_package_with_the_wheels_sha256(tree, tmp_path: Path) -> None:
    root = tree()
    entry = tmp_path / "cache" / "nvidia" / "nvidia-cuda-cuobjdump-13.2.51"
    tool = entry / "nvidia" / "cu13" / "bin" / "cuobjdump"
    tool.parent.mkdir(parents=True)
    tool.write_bytes(Path("/bin/true").read_bytes())
    assert wheel_origin(str(tool)) is None  # not unpacked completely: no origin to claim
    (entry / ".complete").write_text(json.dumps({"url": "https://pypi.example/x.whl", "sha256": SHA, "wheel": "x"}))
    origin = wheel_origin(str(tool))
    assert origin == {"spec": "nvidia-cuda-cuobjdump==13.2.51", "sha256": SHA, "url": "https://pypi.example/x.whl",
                      "wheel": "x"}
    assert wheel_origin("/usr/local/cuda/bin/cuobjdump") is None

    offer = ToolOffer("cuobjdump", str(tmp_path / "cache" / "nvidia"), cached=("13.2.51",))
    nv = nvidia_facts(root, "/usr/local/cuda/include", (("ptxas", "/opt/cuda/bin/ptxas", "/opt/cuda/bin/ptxas"),),
                      ptxas_version="13.0.88", tool_offers={"cuobjdump": offer})
    plan = plan_for(root, nvidia=nv)
    assert plan.cmake.define("TRITONBUILD_NVIDIA_TOOLS") == f"ptxas=/opt/cuda/bin/ptxas;cuobjdump={tool}"
    facts = Facts(files=(), nvidia_tools=(Tool("cuobjdump", str(tool), None, wheel=origin["spec"],
                                               wheel_sha256=origin["sha256"]),))
    text = sbom_json(plan, facts)
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    comps = {c["bom-ref"]: c for c in json.loads(text)["components"]}
    c = comps["nvidia-tool:cuobjdump"]
    assert c["version"] == "13.2.51" and c["purl"] == "pkg:pypi/nvidia-cuda-cuobjdump@13.2.51"
    props = {p["name"]: p["value"] for p in c["properties"]}
    assert props["tritonbuild:origin"] == "PyPI nvidia-cuda-cuobjdump==13.2.51"
    assert props["tritonbuild:wheel-sha256"] == SHA
    assert "nvidia:cuobjdump" not in comps  # not twice
