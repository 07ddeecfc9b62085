"""Issue 44, the two findings of "a provenance chooses what code runs": ``tritonbuild rebuild`` without
``--trust-provenance`` configured another git clone that the provenance's source dependency named (its CMakeLists
ran a command), and cloned ``settings.source = file:///elsewhere`` into the cache. Both are exit 2 now, before
anything is cloned or configured, naming the field and --source. Real processes, a real git clone; no build."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import provenance_of_example
from tests.integration.conftest import flat, git_commit, run_cli

WHEEL = "triton-3.6.0-cp311-cp311-linux_x86_64.whl"


def _clone_that_touches(where: Path, marker: Path) -> str:
    """A git repository whose CMakeLists.txt writes ``marker`` when configured; its HEAD commit."""
    where.mkdir(parents=True)
    (where / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\nproject(evil NONE)\n"
                                          f'execute_process(COMMAND touch "{marker}")\n')
    (where / "setup.py").write_text("")
    return git_commit(where)


def _source_only(base: Path, commit: str) -> dict:
    """A real provenance with no plugin dir (the finding had none), at ``commit``."""
    data = provenance_of_example(base, commit)
    bd = data["predicate"]["buildDefinition"]
    bd["externalParameters"]["settings"]["plugin_dirs"] = {"value": [], "origin": "default"}
    bd["resolvedDependencies"] = [d for d in bd["resolvedDependencies"] if not d["name"].startswith("plugin:")]
    return data


def _run(tmp_path: Path, data: dict) -> tuple[int, str]:
    prov = tmp_path / "pv" / f"{WHEEL}.provenance.json"
    prov.parent.mkdir()
    prov.write_text(json.dumps(data))
    proc = run_cli("rebuild", str(prov), "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"),
                   cwd=tmp_path / "pv", check=False)
    assert "Traceback" not in proc.stderr and proc.stdout.count("\n") <= 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().split("\n\n")) == 1
    return proc.returncode, flat(proc.stderr)


def test_a_source_path_naming_another_clone_is_refused_and_never_configured(tmp_path: Path) -> None:
    marker = tmp_path / "configured.txt"
    evil = tmp_path / "other" / "triton"
    commit = _clone_that_touches(evil, marker)
    data = _source_only(tmp_path / "gen", commit)
    source = data["predicate"]["buildDefinition"]["resolvedDependencies"][0]
    assert source["name"] == "source"
    source["annotations"]["path"] = str(evil)
    source["uri"] = f"git+file://{evil}@{commit}"
    code, err = _run(tmp_path, data)
    assert code == 2, err
    assert f"resolvedDependencies['source'].annotations.path = '{evil}' (code: --source or --trust-provenance)" in err
    assert f"pass --source with a checkout at commit {commit}" in err.lower()
    assert not marker.exists() and not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_a_source_url_in_the_settings_is_refused_and_nothing_is_cloned(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    commit = _clone_that_touches(elsewhere, tmp_path / "configured.txt")
    data = _source_only(tmp_path / "gen", commit)
    data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["source"] = {
        "value": f"file://{elsewhere}", "origin": "cli -s/--source"}
    code, err = _run(tmp_path, data)
    assert code == 2, err
    assert f"settings.source.value = 'file://{elsewhere}' (code: --source or --trust-provenance)" in err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()  # no clone in any cache
    assert not (tmp_path / "configured.txt").exists()
