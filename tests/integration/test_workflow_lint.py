"""The shipped CI examples pass the linters a CI engineer runs on them: check-jsonschema's built-in GitHub workflow
and GitLab CI schemas, and zizmor (unpinned actions or images, credentials persisted through artifacts, broad
permissions, template injection) with its pedantic persona."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(("doc", "schema"), [("nightly-workflow.yml", "vendor.github-workflows"),
                                              ("nightly-gitlab-ci.yml", "vendor.gitlab-ci")])
def test_ci_examples_match_their_schemas(doc: str, schema: str) -> None:
    run = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", schema, str(DOCS / doc)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_zizmor_finds_nothing_in_the_github_workflow() -> None:
    run = subprocess.run([str(BIN / "zizmor"), "--offline", "--persona=pedantic", "--no-progress",
                          str(DOCS / "nightly-workflow.yml")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "No findings" in run.stdout + run.stderr, run.stdout + run.stderr
