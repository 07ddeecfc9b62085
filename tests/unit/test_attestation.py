"""The build provenance (tritonbuild.wheel.attestation): the in-toto statement made from a real plan of the example
tree validates with the library's own validation, round-trips through ``parse``, and a hostile or edited file is
refused with one paragraph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from in_toto_attestation.v1 import statement

from tests.helpers import plan_for, provenance_of_example
from tritonbuild.errors import UserError
from tritonbuild.gather.request import flag_settings
from tritonbuild.resolve.source import GitState
from tritonbuild.wheel import attestation

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SHA = "ab" * 32
INFO = {"toolchain": {"compiler": "g++ (Debian 14.2.0) 14.2.0"}}


def made(tree, **cli: object) -> tuple[object, dict]:
    plan = plan_for(tree(), cli={"ccache_remote": "redis://user:hunter2@cache:6379", **cli},
                    git=GitState(COMMIT, False, "main", 1769723034))
    stmt = attestation.make(plan, "triton-3.6.0-cp311-cp311-linux_x86_64.whl", SHA, INFO, finished=1769723100.0,
                            seconds=60.0)
    return plan, json.loads(attestation.to_json(stmt))


def test_statement_validates_and_says_what_was_built(tree) -> None:
    plan, data = made(tree, build_type="Release")
    again = statement.Statement.copy_from_pb(json_format.ParseDict(data, statement.Statement([], "", {}).pb))
    again.validate()  # the library's validation of the file's JSON
    attestation.check_predicate(data["predicate"])
    assert data["_type"] == "https://in-toto.io/Statement/v1"
    assert data["predicateType"] == "https://slsa.dev/provenance/v1"
    assert data["subject"] == [{"name": "triton-3.6.0-cp311-cp311-linux_x86_64.whl", "digest": {"sha256": SHA}}]
    bd = data["predicate"]["buildDefinition"]
    assert bd["buildType"] == attestation.BUILD_TYPE
    assert bd["externalParameters"]["settings"]["build_type"] == {"value": "Release", "origin": "cli --build-type"}
    assert "hunter2" not in json.dumps(data)  # the secret is redacted as Plan.to_dict does
    assert bd["internalParameters"]["planFingerprint"] == plan.fingerprint  # type: ignore[attr-defined]
    deps = {d["name"]: d for d in bd["resolvedDependencies"]}
    assert deps["source"]["digest"] == {"gitCommit": COMMIT} and deps["source"]["uri"].endswith("@" + COMMIT)
    assert deps["llvm"]["annotations"]["version"] == "22.1.8"
    assert deps["tool:c++"]["annotations"]["version"] == INFO["toolchain"]["compiler"]
    meta = data["predicate"]["runDetails"]["metadata"]
    assert meta["startedOn"] == "2026-01-29T21:44:00Z" and meta["finishedOn"] == "2026-01-29T21:45:00Z"
    assert meta["invocationId"] == made(tree, build_type="Release")[1]["predicate"]["runDetails"]["metadata"][
        "invocationId"]  # deterministic: the same plan, wheel and times give the same id


def test_parse_reads_back_the_settings_and_rebuild_request_passes_them_as_flags(tree) -> None:
    _, data = made(tree, build_type="Release", zip_level=3, llvm_mirror="https://me:s3cret@mirror.example/llvm")
    claim = attestation.parse(json.dumps(data).encode(), "p.json")
    assert claim.sha256 == SHA and claim.commit == COMMIT and claim.settings["zip_level"] == 3  # an int again
    kw, notes = attestation.rebuild_request(claim, source=claim.source, python=None, cache_dir=None, out="o",
                                            flags=flag_settings())
    assert kw["build_type"] == "Release" and kw["zip_level"] == 3 and kw["source"] == claim.source
    assert kw["python"] == () and "ref" not in kw  # the provenance's interpreter is never given; a local checkout:
    # its commit is checked later
    assert attestation.rebuild_request(claim, source="/src", python="/x/python3.11", cache_dir=None, out="o",
                                       flags=flag_settings())[0]["python"] == ("/x/python3.11",)
    assert "ccache_remote" not in kw and "jobs" not in kw  # this machine's: not what was built
    assert "llvm_mirror" not in kw and notes == ["llvm_mirror was redacted in the provenance: this machine's "
                                                 "value is used"]
    url, _ = attestation.rebuild_request(claim, source="https://github.com/triton-lang/triton.git", python=None,
                                         cache_dir=None, out="o", flags=flag_settings())
    assert url["ref"] == COMMIT  # a git URL is checked out at the claimed commit


def test_setting_and_dependency_differences_name_what_changed(tree) -> None:
    plan, data = made(tree)
    claim = attestation.parse(json.dumps(data).encode(), "p.json")
    assert attestation.setting_differences(claim, plan.settings) == []  # type: ignore[attr-defined]
    other = plan_for(tree("other"), cli={"version_suffix": "+x"}, git=GitState(COMMIT, False, "main", 1))
    diffs = attestation.setting_differences(claim, other.settings)
    assert len(diffs) == 1 and diffs[0].startswith("version_suffix: None (default) in the provenance, '+x'")
    ours = dict(claim.dependencies, llvm={**claim.dependencies["llvm"], "annotations": {"version": "21.1.0"}})
    assert attestation.dependency_differences(claim, ours) == [
        "llvm annotations.version: '22.1.8' in the provenance, '21.1.0' here"]
    found = attestation.build_info_differences({"toolchain": {"build_type": "Release"}},
                                               {"toolchain": {"build_type": "Debug"}})
    assert found == ["toolchain.build_type: 'Release' in the subject, 'Debug' in the rebuild (set by build_type)"]


def _edited(data: dict, path: list[object], value: object) -> bytes:
    node = json.loads(json.dumps(data))
    target = node
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return json.dumps(node).encode()


@pytest.mark.parametrize(("how", "says"), [
    ("not-utf8", "invalid start byte"),
    ("nan", "NaN is not JSON"),
    ("duplicate", "appears twice"),
    ("list", "not a JSON object"),
    ("type", "not an in-toto Statement"),
    ("predicate", "predicateType"),
    ("unknown-field", "not SLSA Provenance v1"),
    ("setting", "does not have"),
    ("value", "must be a whole number"),
    ("subject", "not a wheel file name"),
    ("deep", "maximum recursion depth"),
])
def test_a_malformed_provenance_is_one_paragraph(tree, how: str, says: str) -> None:
    _, data = made(tree)
    settings = ["predicate", "buildDefinition", "externalParameters", "settings"]
    raw = {
        "not-utf8": b"\xff" + json.dumps(data).encode(),
        "nan": json.dumps(data).replace('"buildType"', '"x": NaN, "buildType"', 1).encode(),
        "duplicate": json.dumps(data).replace('"_type"', '"_type": "x", "_type"', 1).encode(),
        "list": b"[]",
        "type": _edited(data, ["subject"], "x"),
        "predicate": _edited(data, ["predicateType"], "https://slsa.dev/provenance/v0.2"),
        "unknown-field": _edited(data, ["predicate", "buildDefinition", "surprise"], 1),
        "setting": _edited(data, [*settings, "no_such"], {"value": 1, "origin": "cli"}),
        "value": _edited(data, [*settings, "zip_level"], {"value": "nine", "origin": "cli"}),
        "subject": _edited(data, ["subject", 0, "name"], "../evil.whl"),
        "deep": b"[" * 100_000 + b"]" * 100_000,
    }[how]
    with pytest.raises(UserError) as exc:
        attestation.parse(raw, "p.json")
    text = str(exc.value)
    assert text.startswith("The provenance p.json is not one tritonbuild can rebuild from") and says in text
    assert "\n" not in text


def test_an_oversized_provenance_is_refused_before_parsing() -> None:
    with pytest.raises(UserError, match="over 4 MiB"):
        attestation.parse(b" " * (attestation.MAX_BYTES + 1), "big.json")


def test_file_name_is_the_wheel_name_then_provenance_json(tmp_path: Path) -> None:
    assert attestation.file_name("triton-3.6.0-cp311-cp311-linux_x86_64.whl") == (
        "triton-3.6.0-cp311-cp311-linux_x86_64.whl.provenance.json")


def test_settings_that_run_or_reach_are_named_and_refused_unless_trusted(tree) -> None:
    from tritonbuild.wheel import provenance_fields as fields

    _, data = made(tree, cmake_args=["-DCMAKE_CXX_COMPILER_LAUNCHER=/tmp/evil.sh"],
                   llvm_mirror="https://evil.example/llvm", zip_level=3)
    settings = data["predicate"]["buildDefinition"]["externalParameters"]["settings"]
    settings["distcc"] = {"value": "evil.example.com/8", "origin": "cli --distcc"}
    settings["ptxas"] = {"value": "/tmp/evil.sh", "origin": "env TRITON_PTXAS_PATH"}
    claim = attestation.parse(json.dumps(data).encode(), "p.json")
    found = [(p.rsplit(".", 2)[-2], v) for p, v, _ in fields.refusals(data, frozenset({"--source"}))]
    # distcc (a build machine's) and ptxas (no flag: the environment's) are this machine's, never taken; zip_level
    # neither runs nor reaches; the source is --source here
    assert found == [("cmake_args", ["-DCMAKE_CXX_COMPILER_LAUNCHER=/tmp/evil.sh"]),
                     ("llvm_mirror", "https://evil.example/llvm")]
    assert {"distcc", "ptxas", "jobs", "pypi_index"} <= set(attestation.taken_from_machine(flag_settings()))
    text = str(fields.refusal("p.json", fields.refusals(data, frozenset({"--source"})), COMMIT))
    assert "settings.llvm_mirror.value = 'https://evil.example/llvm' (host: --trust-provenance)" in text
    assert "settings.cmake_args.value = ['-DCMAKE_CXX_COMPILER_LAUNCHER=/tmp/evil.sh'] (code: --trust-provenance)" \
        in text and "\n" not in text
    kw, _ = attestation.rebuild_request(claim, source="/src", python=None, cache_dir=None, out="o",
                                        flags=flag_settings())
    assert "distcc" not in kw and "ptxas" not in kw  # never taken from the provenance
    assert kw["cmake_args"] == () and kw["zip_level"] == 3  # untrusted: the default, typed (no env overrides it)
    trusted, _ = attestation.rebuild_request(claim, source="/src", python=None, cache_dir=None, out="o",
                                             flags=flag_settings(), trust=True)
    assert trusted["cmake_args"] == ("-DCMAKE_CXX_COMPILER_LAUNCHER=/tmp/evil.sh",)


def test_every_setting_that_names_a_program_or_host_is_classified() -> None:
    from tritonbuild.settings.model import SPEC_BY_NAME

    runs = {"cmake_args", "patches", "plugin_dirs", "deps", "llvm", "llvm_src", "ptxas", "cuobjdump", "nvdisasm",
            "compiler_cache", "wheelhouse"}
    reaches = {"llvm_mirror", "distcc", "ccache_remote", "pypi_index"}
    assert {n for n in runs if SPEC_BY_NAME[n].trust != "runs"} == set()
    assert {n for n in reaches if SPEC_BY_NAME[n].trust != "reaches"} == set()
    assert SPEC_BY_NAME["zip_level"].trust == "" and SPEC_BY_NAME["build_type"].trust == ""


def test_whole_numbers_stay_integers_and_float_settings_stay_floats(tree) -> None:
    _, data = made(tree, jobs=1, zip_level=6)
    settings = data["predicate"]["buildDefinition"]["externalParameters"]["settings"]
    assert settings["jobs"]["value"] == 1 and isinstance(settings["jobs"]["value"], int)
    assert isinstance(settings["zip_level"]["value"], int) and isinstance(settings["unity_build"]["value"], int)
    assert isinstance(settings["canary_budget"]["value"], float)  # a float setting keeps its kind
    assert attestation.parse(json.dumps(data).encode(), "p.json").settings["jobs"] == 1


def test_a_setting_newer_than_the_provenance_is_not_a_difference(tree) -> None:
    plan, data = made(tree)
    del data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["canary_budget"]
    claim = attestation.parse(json.dumps(data).encode(), "p.json")
    assert attestation.setting_differences(claim, plan.settings) == []  # type: ignore[attr-defined]
    assert attestation.new_settings(claim, plan.settings) == [  # type: ignore[attr-defined]
        "canary_budget: new since the provenance, 120.0 (default) used"]


def test_the_source_is_the_recorded_absolute_path_not_the_typed_relative_one(tree) -> None:
    _, data = made(tree)
    bd = data["predicate"]["buildDefinition"]
    bd["externalParameters"]["settings"]["source"] = {"value": "exg/triton", "origin": "cli -s/--source"}
    deps = {d["name"]: d for d in bd["resolvedDependencies"]}
    recorded = deps["source"]["annotations"]["path"]
    assert recorded.startswith("/")
    assert attestation.parse(json.dumps(data).encode(), "p.json").source == recorded


def test_a_source_without_git_is_a_file_uri_not_git(tree) -> None:
    plan = plan_for(tree(), git=None)
    deps = {d.name: d for d in attestation.dependencies(plan, INFO)}
    assert deps["source"].uri == f"file://{plan.source.root}" and not deps["source"].digest
    assert "not a git checkout" in deps["source"].annotations["rebuild"]  # said in the provenance itself
    assert deps["llvm"].annotations["noDigest"] == attestation.NO_LLVM_DIGEST  # an installed prefix: no digest


def test_the_llvm_archive_is_named_only_when_the_llvm_came_from_it(tree) -> None:
    # review: a system LLVM's dependency said archive llvm-2eb709b9-ubuntu-x64.tar.gz, the pin's name
    import dataclasses

    plan = plan_for(tree(), git=None)
    name = "llvm-2eb709b9-ubuntu-x64.tar.gz"
    cases = [("system", "/usr/lib/llvm-22", None), ("prefix", "/opt/llvm", None), ("download", None, name),
             ("cached", f"/c/llvm/{name.removesuffix('.tar.gz')}", name), ("cached", "/c/llvm/built-abc", None)]
    for strategy, prefix, said in cases:
        llvm = dataclasses.replace(plan.llvm, strategy=strategy, prefix=prefix, archive=name)
        deps = {d.name: d for d in attestation.dependencies(dataclasses.replace(plan, llvm=llvm), INFO)}
        notes = deps["llvm"].annotations
        assert (notes["archive"] if "archive" in notes else None) == said, (strategy, prefix)  # noqa: SIM401 (a protobuf Struct: no .get)


def test_build_type_and_builder_are_the_ones_docs_build_type_md_defines(tmp_path: Path) -> None:
    """The build type's URI is defined in this repository (docs/build-type.md), and the doc names every parameter
    the writer emits: a key added to externalParameters or internalParameters without its meaning fails here."""
    from tritonbuild import __version__

    doc = (Path(__file__).resolve().parents[2] / "docs" / "build-type.md").read_text()
    assert doc.startswith(f"# tritonbuild's build type: `{attestation.BUILD_TYPE}`")
    assert attestation.BUILD_TYPE.endswith("/v1") and f"| `{attestation.BUILD_TYPE}` |" in doc
    builder = f"pkg:pypi/tritonbuild@{__version__}"
    assert builder == attestation.BUILDER_ID and "`pkg:pypi/tritonbuild@VERSION`" in doc
    pred = provenance_of_example(tmp_path)["predicate"]  # every dependency kind the writer makes
    assert pred["buildDefinition"]["buildType"] == attestation.BUILD_TYPE
    assert pred["runDetails"]["builder"]["id"] == attestation.BUILDER_ID
    bd = pred["buildDefinition"]
    for part in ("externalParameters", "internalParameters"):
        assert f"## {part}" in doc
        missing = [k for k in bd[part] if f"| `{k}` |" not in doc]
        assert not missing, f"docs/build-type.md does not say what {part}.{missing} means"
    assert all(f"`{k}`" in doc for k in bd["externalParameters"]["python"])
    assert {e["origin"].split()[0] for e in bd["externalParameters"]["settings"].values()} <= {"default", "cli"}
    assert all(f"`{w}" in doc for w in ("default`", "cli -b/--backends`", "env NAME`", "recipe NAME`"))
    names = {d["name"].split(":")[0] for d in bd["resolvedDependencies"]}
    assert all(f"`{n}" in doc for n in names), names
