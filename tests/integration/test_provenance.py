"""Build provenance next to each wheel (an in-toto statement, SLSA Provenance v1) and ``tritonbuild rebuild`` of it
(#38): the example tree built with the nightly recipe (reproducible), rebuilt from its provenance in another cache
byte for byte, rebuilt from an edited provenance to a different wheel (exit 1, naming the setting), and a malformed
provenance refused (exit 2, one paragraph)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format
from in_toto_attestation.v1 import statement

from tests.helpers import NO_CANARY, one_of, shared_ccache
from tests.integration.conftest import flat, git_commit, run_cli
from tritonbuild import example
from tritonbuild.wheel import attestation

DATE = "2026-01-29T21:43:54+00:00"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("provenance")
    tree = example.write_tree(base / "src" / "triton")
    git_commit(tree, env={"GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE})
    env = {"CCACHE_DIR": shared_ccache(), **NO_CANARY}  # the wheel and its rebuilds; the canary adds nothing to them
    # Debian's LLVM is not the example's pin: the nightly recipe refuses that unless told it is accepted
    proc = run_cli("build", "--recipe", "nightly", "--no-require-pinned-llvm", "--source", str(tree), "--json",
                   "--cache-dir", str(base / "cache"), "--out", str(base / "dist"), cwd=base, env=env)
    result = one_of(proc.stdout, "wheels")
    wheel = Path(result["wheel"])
    return {"base": base, "env": env, "result": result, "wheel": wheel, "tree": tree,
            "provenance": wheel.with_name(wheel.name + ".provenance.json")}


def test_provenance_is_published_listed_and_validates(built: dict) -> None:
    wheel, prov = built["wheel"], built["provenance"]
    data = json.loads(prov.read_text())
    stmt = statement.Statement.copy_from_pb(json_format.ParseDict(data, statement.Statement([], "", {}).pb))
    stmt.validate()
    attestation.check_predicate(data["predicate"])
    assert data["subject"] == [{"name": wheel.name, "digest": {"sha256": _sha(wheel)}}]
    assert _sha(wheel) == built["result"]["sha256"]
    settings = data["predicate"]["buildDefinition"]["externalParameters"]["settings"]
    assert settings["reproducible"] == {"value": True, "origin": "recipe nightly"}
    assert '"value": 8' in prov.read_text() and settings["unity_build"]["value"] == 8  # an integer, not 8.0
    assert isinstance(settings["zip_level"]["value"], int) and isinstance(settings["canary_budget"]["value"], float)
    deps = {d["name"]: d for d in data["predicate"]["buildDefinition"]["resolvedDependencies"]}
    assert deps["source"]["digest"]["gitCommit"] == built["result"]["provenance"]["source"]["commit"]
    sums = (wheel.parent / "SHA256SUMS").read_text().splitlines()
    assert sums == [f"{_sha(wheel)}  {wheel.name}", f"{_sha(prov)}  {prov.name}"]
    manifest = json.loads((wheel.parent / (wheel.name[:-4] + ".manifest.json")).read_text())
    assert manifest["attestation"] == {"file": prov.name, "sha256": _sha(prov)}
    assert built["result"]["attestation"] == manifest["attestation"]  # build --json says the same


def test_rebuild_from_the_provenance_is_byte_identical(built: dict) -> None:
    base = built["base"]
    proc = run_cli("rebuild", str(built["provenance"]), "--source", str(built["tree"]), "--out", str(base / "rebuilt"),
                   "--cache-dir", str(base / "cache2"), cwd=base, env=built["env"])
    out = flat(proc.stdout)
    assert "identical: yes" in out and f"sha256 {built['result']['sha256']}" in out
    again = base / "rebuilt" / built["wheel"].name
    assert again.read_bytes() == built["wheel"].read_bytes()
    assert Path(str(again) + ".provenance.json").is_file()  # the rebuild publishes its own provenance


def test_rebuild_of_an_edited_setting_differs_and_names_it(built: dict) -> None:
    base = built["base"]
    edited = base / "edited"
    edited.mkdir()
    shutil.copy(built["wheel"], edited / built["wheel"].name)  # the subject, for the member diff
    data = json.loads(built["provenance"].read_text())
    data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["build_type"] = {
        "value": "Release", "origin": "cli --build-type"}
    prov = edited / built["provenance"].name
    prov.write_text(json.dumps(data))
    proc = run_cli("rebuild", str(prov), "--source", str(built["tree"]), "--out", str(base / "rebuilt-edited"),
                   "--cache-dir", str(base / "cache2"), cwd=base, env=built["env"], check=False)
    out = flat(proc.stdout)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"identical: no, sha256 {built['result']['sha256']} in the provenance" in out
    assert ("build info: toolchain.build_type: 'TritonRelBuildWithAsserts' in the subject, 'Release' in the "
            "rebuild (set by build_type)") in out
    assert "members: triton/_C/libtriton.so: differs" in out


def test_a_malformed_provenance_is_exit_2_with_one_paragraph(tmp_path: Path) -> None:
    bad = tmp_path / "x.whl.provenance.json"
    bad.write_text('{"_type": "https://in-toto.io/Statement/v1", "subject": []}')
    proc = run_cli("rebuild", str(bad), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().split("\n\n")) == 1
    assert flat(proc.stderr).startswith(f"error: The provenance {bad} is not one tritonbuild can rebuild from")
    assert not (tmp_path / "rebuilt").exists()  # nothing was made
    missing = run_cli("rebuild", str(tmp_path / "none.json"), cwd=tmp_path, check=False)
    assert missing.returncode == 2 and "does not exist" in flat(missing.stderr)


def test_rebuild_from_a_checkout_at_another_commit_is_refused_before_any_work(built: dict, tmp_path: Path) -> None:
    other = example.write_tree(tmp_path / "triton")
    commit = git_commit(other)  # the same files, committed now: another commit
    proc = run_cli("rebuild", str(built["provenance"]), "--source", str(other), "--out", str(tmp_path / "out"),
                   "--cache-dir", str(built["base"] / "cache2"), cwd=tmp_path, env=built["env"], check=False)
    err = flat(proc.stderr)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"is at commit {commit}, but the provenance's wheel was built from" in err and "Nothing was built" in err
    assert not (tmp_path / "out").exists()


def _tampered(built: dict, where: Path, edit: dict[str, object], python: str | None = None) -> Path:
    """The built provenance with settings replaced (and its interpreter path), written to ``where``."""
    data = json.loads(built["provenance"].read_text())
    ext = data["predicate"]["buildDefinition"]["externalParameters"]
    ext["settings"].update({k: {"value": v, "origin": "cli"} for k, v in edit.items()})
    if python:
        ext["python"]["path"] = python
    where.mkdir(parents=True, exist_ok=True)
    prov = where / built["provenance"].name
    prov.write_text(json.dumps(data))
    return prov


def _evil(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The reviewer's evil.cmake and evil.sh (#38): each writes a marker file when run."""
    marker = tmp_path / "pwned.txt"
    cmake = tmp_path / "evil.cmake"
    cmake.write_text(f'file(WRITE "{marker}" "pwned")\n')
    sh = tmp_path / "evil.sh"
    sh.write_text(f'#!/bin/sh\necho PWNED "$@" >> {marker}\nexec "$@"\n')
    sh.chmod(0o755)
    return marker, cmake, sh


@pytest.mark.parametrize("setting", ["cmake_args -P", "cmake_args launcher", "plugin_dirs", "llvm_mirror"])
def test_a_provenance_that_runs_or_reaches_is_refused_before_any_work(built: dict, tmp_path: Path,
                                                                      setting: str) -> None:
    marker, cmake, sh = _evil(tmp_path)
    value = {"cmake_args -P": ["-P", str(cmake)], "cmake_args launcher": [f"-DCMAKE_CXX_COMPILER_LAUNCHER={sh}"],
             "plugin_dirs": [str(tmp_path)], "llvm_mirror": "https://evil.example.com/llvm"}[setting]
    name = setting.split()[0]
    prov = _tampered(built, tmp_path / "pv", {name: value})
    proc = run_cli("rebuild", str(prov), "--source", str(built["tree"]), "--out", str(tmp_path / "out"), "--cache-dir",
                   str(tmp_path / "cache"), cwd=tmp_path, env=built["env"], check=False)
    err = flat(proc.stderr)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().split("\n\n")) == 1 and "Nothing was cloned, fetched, configured or built" in err
    assert f"settings.{name}.value = {value!r}" in err and "--trust-provenance" in err
    assert not marker.exists() and not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_rebuild_from_another_cwd_never_runs_the_provenance_python_and_lists_trusted_settings(
        built: dict, tmp_path: Path) -> None:
    marker, _, sh = _evil(tmp_path)
    data = json.loads(built["provenance"].read_text())
    typed = data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["source"]["value"]
    assert Path(typed).is_absolute()  # then made relative, as typed in the build's own directory
    relative = str(Path(typed).relative_to(built["base"]))
    prov = _tampered(built, tmp_path / "pv", {"source": relative, "cmake_args": ["-DTRITONBUILD_UNUSED_38=1"]},
                     python=str(sh))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    refused = run_cli("rebuild", str(prov), "--out", str(tmp_path / "out"), cwd=elsewhere, env=built["env"],
                      check=False)
    assert refused.returncode == 2 and "cmake_args.value = ['-DTRITONBUILD_UNUSED_38=1']" in flat(refused.stderr)
    proc = run_cli("rebuild", str(prov), "--trust-provenance", "--out", str(tmp_path / "out"), "--cache-dir",
                   str(built["base"] / "cache2"), cwd=elsewhere, env=built["env"], check=False)
    out = flat(proc.stdout)
    # the extra -D changes the plan's fingerprint in _build_info.json: another wheel (exit 1), but not a setting
    # difference, since the rebuild took cmake_args from the provenance
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "identical: no" in out and "settings: cmake_args" not in out
    assert "taken from the provenance: cmake_args = ['-DTRITONBUILD_UNUSED_38=1']" in out
    assert f"source: {typed} (from the provenance), commit" in out  # the recorded path, not cwd/relative
    assert f"from this machine: python = {sys.executable} (cp" in out and f"provenance's {sh} is never run" in out
    assert "from this machine, at their defaults as in the provenance:" in out
    assert not marker.exists()  # the provenance's interpreter was never run
    assert list((tmp_path / "out").glob("*.whl"))


def test_every_key_path_of_a_built_provenance_is_classified(built: dict) -> None:
    """#44: the provenance a real build published has no field the table (provenance_fields.FIELDS) lacks."""
    from tritonbuild.wheel import provenance_fields

    data = json.loads(built["provenance"].read_text())
    assert provenance_fields.unclassified(data) == []
    assert all(provenance_fields.classify(row) for row, _, _ in provenance_fields.key_paths(data))
