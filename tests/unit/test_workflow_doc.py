"""The shipped CI examples read as a release engineer needs them: manylinux images pinned by digest for x86_64 and
aarch64, every action pinned to a commit, a build job holding no credential, the provenance files uploaded beside
SHA256SUMS, attestation and publishing in later jobs gated on every build. (The schemas and zizmor run on the same
files in tests/integration/test_workflow_lint.py.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

DOCS = Path(__file__).resolve().parents[2] / "docs"
WORKFLOW = DOCS / "nightly-workflow.yml"
GITLAB = DOCS / "nightly-gitlab-ci.yml"
DIGEST = re.compile(r"quay\.io/pypa/manylinux_2_28_(x86_64|aarch64)@sha256:[0-9a-f]{64}")


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return list(job.get("steps", []))


def test_nightly_workflow_builds_every_python_in_manylinux_images_for_both_arches() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    job = doc["jobs"]["wheels"]
    include = job["strategy"]["matrix"]["include"]
    assert {row["arch"] for row in include} == {"x86_64", "aarch64"}
    assert all(DIGEST.fullmatch(row["image"]) and row["arch"] in row["image"] for row in include)
    assert job["container"] == "${{ matrix.image }}"
    assert job["env"]["TRITONBUILD_PLAT"] == "manylinux_2_28_${{ matrix.arch }}"
    runs = "\n".join(step.get("run", "") for step in _steps(job))
    assert runs.count("--python /opt/python/cp3") >= 8  # every Python built and imported in one job
    assert "tritonbuild build --recipe nightly --llvm download" in runs and "--repair" in runs
    assert "tritonbuild verify dist/*.whl" in runs
    caches = [s["with"] for s in _steps(job) if s.get("uses", "").startswith("actions/cache")]
    assert any(c["path"].endswith(".tritonbuild/llvm") and "steps.plan.outputs.llvm" in c["key"] for c in caches)
    assert any(c["path"].endswith(".sccache") for c in caches) and job["env"]["TRITONBUILD_COMPILER_CACHE"] == "sccache"
    upload = next(s["with"]["path"] for s in _steps(job) if s.get("uses", "").startswith("actions/upload-artifact"))
    assert "dist/*.provenance.json" in upload and "dist/SHA256SUMS" in upload and "dist/*.whl" in upload


def test_nightly_workflow_holds_credentials_only_where_needed_and_pins_every_action() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    jobs = doc["jobs"]
    assert doc["permissions"] == {} and jobs["wheels"]["permissions"] == {}
    assert jobs["attest"]["permissions"] == {"id-token": "write", "attestations": "write"}
    assert jobs["publish"]["permissions"] == {"id-token": "write"} and "environment" in jobs["publish"]
    assert set(jobs["publish"]["needs"]) == {"wheels", "attest"} and jobs["attest"]["needs"] == "wheels"
    attest = [s for s in _steps(jobs["attest"]) if s.get("uses", "").startswith("actions/attest-build-provenance")]
    assert attest and attest[0]["with"]["subject-path"] == "dist/*.whl"
    assert "sha256sum -c SHA256SUMS" in "\n".join(s.get("run", "") for s in _steps(jobs["attest"]))
    uses = [s["uses"] for job in jobs.values() for s in _steps(job) if "uses" in s]
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u) for u in uses), uses
    # no expression is pasted into a shell script (template injection): values reach scripts as env vars
    for job in jobs.values():
        for step in _steps(job):
            assert "${{" not in step.get("run", ""), step["run"]


def test_gitlab_example_has_the_same_jobs() -> None:
    doc = yaml.safe_load(GITLAB.read_text())
    assert doc["stages"] == ["build", "sign", "publish"]
    rows = doc["wheels"]["parallel"]["matrix"]
    assert {r["ARCH"] for r in rows} == {"x86_64", "aarch64"} and all(DIGEST.fullmatch(r["IMAGE"]) for r in rows)
    assert doc["wheels"]["variables"]["TRITONBUILD_PLAT"] == "manylinux_2_28_$ARCH"
    assert "dist/*.provenance.json" in doc["wheels"]["artifacts"]["paths"]
    assert doc["sign"]["needs"] == ["wheels"] and doc["publish"]["needs"] == ["sign"]
    assert "SIGSTORE_ID_TOKEN" in doc["sign"]["id_tokens"] and "id_tokens" not in doc["wheels"]
    script = "\n".join(doc["wheels"]["script"])
    assert "--repair" in script and "tritonbuild verify dist/*.whl" in script
