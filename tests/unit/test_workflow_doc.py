from __future__ import annotations

from pathlib import Path

import yaml

WORKFLOW = Path(__file__).resolve().parents[2] / "docs" / "nightly-workflow.yml"


def test_nightly_workflow_example_is_valid() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    job = doc["jobs"]["wheels"]
    matrix = job["strategy"]["matrix"]
    assert len(matrix["backends"]) >= 2 and "python" not in matrix  # every Python in one job: build once
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert runs.count("--python 3.") >= 2
    assert "tritonbuild build --recipe nightly" in runs and "tritonbuild verify" in runs
    caches = [s for s in job["steps"] if s.get("uses", "").startswith("actions/cache")]
    assert any(".tritonbuild/llvm" in s["with"]["path"] and "llvm" in s["with"]["key"] for s in caches)
    assert True in doc or "on" in doc  # YAML 1.1 reads the bare key `on` as True
    # the fleet shares a remote compile cache: sccache on the GitHub Actions cache
    assert "--compiler-cache sccache" in runs and job["env"]["SCCACHE_GHA_ENABLED"] == "true"
    assert any(s.get("uses", "").startswith("mozilla-actions/sccache-action") for s in job["steps"])
