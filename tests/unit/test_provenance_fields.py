"""Issue 44: a provenance is data, never a locator of code. Every field tritonbuild writes is classified in
``tritonbuild.wheel.provenance_fields.FIELDS`` (a field without a row fails here), each row is tested for what
``rebuild`` does with it, and generated hostile provenances given to ``tritonbuild rebuild`` end in exit 2 before any
program runs (this directory's conftest makes every subprocess an error), with nothing made outside the test's dir."""

from __future__ import annotations

import copy
import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import provenance_of_example
from tritonbuild.cli.main import main
from tritonbuild.errors import UserError
from tritonbuild.gather.request import flag_settings
from tritonbuild.settings.model import SPEC_BY_NAME
from tritonbuild.wheel import attestation, rebuild_rules
from tritonbuild.wheel import provenance_fields as fields

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SHA = "ab" * 32
WHEEL = "triton-3.6.0-cp311-cp311-linux_x86_64.whl"
MARK = "hostile-marker-44"


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = provenance_of_example(tmp_path_factory.mktemp("prov"), COMMIT)
    warm = tmp_path_factory.mktemp("warm")  # the CLI's lazy imports (rich, protobuf) once, before any timing
    (warm / "p.json").write_text(json.dumps(data))
    assert _rebuild(warm / "p.json", warm)[0] == 2
    return data


def test_every_key_path_of_a_real_provenance_is_classified(real: dict[str, Any]) -> None:
    rows = {fields.classify(row) for row, _, _ in fields.key_paths(real)}
    assert fields.unclassified(real) == [] and None not in rows
    families = {r.path.split("[", 1)[1].split("]")[0] for r in rows if r is not None and "[" in r.path}
    # the families this provenance holds: each resolvedDependencies kind the writer makes
    assert {"source", "plugin:*", "llvm", "patch:*", "nvidia-tool:*", "pypi:*", "tool:c++", "tool:python"} <= families


def test_a_field_the_table_does_not_know_is_refused(real: dict[str, Any], tmp_path: Path) -> None:
    data = copy.deepcopy(real)
    data["predicate"]["buildDefinition"]["resolvedDependencies"][0]["annotations"]["sourceDir"] = "/elsewhere"
    data["predicate"]["buildDefinition"]["internalParameters"]["cmake"] = "/evil"
    assert fields.unclassified(data) == [
        "'predicate.buildDefinition.internalParameters.cmake'",
        "\"predicate.buildDefinition.resolvedDependencies['source'].annotations.sourceDir\""]
    prov = tmp_path / f"{WHEEL}.provenance.json"
    prov.write_text(json.dumps(data))
    with pytest.raises(UserError, match="has fields tritonbuild never writes"):
        rebuild_rules.read(prov)


@pytest.mark.parametrize("row", fields.FIELDS, ids=lambda f: f.path.removeprefix("predicate.buildDefinition."))
def test_a_field_that_locates_code_or_reaches_a_host_is_never_taken_as_data(row: fields.Field) -> None:
    """The table's own rule, row by row: only data is taken; a trusted row names what would supply it."""
    assert row.use in ("trusted", "never") if row.kind != "data" else row.use in ("taken", "compared", "never")
    if row.use == "trusted":
        assert row.kind != "data" and row.flag in ("", *fields.REBUILD_FLAGS.values())
    name = row.path.removeprefix(fields.SETTINGS + ".").removesuffix(".value")
    if name in SPEC_BY_NAME and SPEC_BY_NAME[name].trust:
        assert row.kind == {"runs": "code", "reaches": "host"}[SPEC_BY_NAME[name].trust]


def _hostile(row: fields.Field) -> object:
    """A value for the row that its setting's own rule accepts (so only the table decides), carrying MARK."""
    name = row.path.removeprefix(fields.SETTINGS + ".").removesuffix(".value")
    spec = SPEC_BY_NAME.get(name)
    if spec is None:
        return f"/tmp/{MARK}"
    for value in (f"/tmp/{MARK}", f"https://{MARK}.example/x", [f"/tmp/{MARK}"], [f"-DX={MARK}"], "sccache"):
        try:
            spec.check(value, "test")
        except UserError:
            continue
        return value
    return spec.default


def _put(data: dict[str, Any], row: fields.Field, value: object) -> None:
    """``value`` at the row's path in ``data`` (a dependency of the row's family is made when there is none)."""
    path = row.path.removesuffix(".**") + (".x" if row.path.endswith(".**") else "")
    if path.startswith(fields.SETTINGS + "."):
        name = path[len(fields.SETTINGS) + 1:].split(".")[0]
        if name != "*":
            data["predicate"]["buildDefinition"]["externalParameters"]["settings"][name] = {
                "value": value, "origin": "cli"}
        return
    node: Any = data
    head, _, rest = path.partition("[")
    if rest:
        family, _, tail = rest.partition("].")
        deps = data["predicate"]["buildDefinition"]["resolvedDependencies"]
        name = family.replace("*", "evil")
        node = next((d for d in deps if d["name"] == name), None)
        if node is None:
            node = {"name": name, "uri": "file:///x"}
            deps.append(node)
        path = tail
    elif head != path:
        return
    *parents, leaf = path.split(".")
    for key in parents:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node
    if isinstance(node, dict):
        node[leaf] = value


@pytest.mark.parametrize("row", [f for f in fields.FIELDS if f.kind != "data"],
                         ids=lambda f: f.path.removeprefix("predicate.buildDefinition."))
def test_each_code_or_host_field_is_refused_or_never_read(real: dict[str, Any], row: fields.Field) -> None:
    """A hostile value at the row's field: a trusted one is named in the refusal with the flag that supplies it;
    a never-read one reaches nothing the rebuild runs, even with --trust-provenance."""
    data = copy.deepcopy(real)
    value = _hostile(row)
    _put(data, row, value)
    try:
        claim = attestation.parse(json.dumps(data).encode(), "p.json")
    except UserError:
        assert row.use == "never"  # e.g. a URL where only a path is read: refused as malformed, never used
        return
    found = fields.refusals(data, frozenset())
    named = [(p, v) for p, v, f in found if f is row]
    if row.use == "trusted":
        assert (next(p for p, v in named if v == value)).startswith("predicate.")
        text = str(fields.refusal("p.json", found, COMMIT))
        assert f"= {value!r}" in text and f"{row.flag + ' or ' if row.flag else ''}--trust-provenance" in text
        assert fields.refusals(data, frozenset({row.flag})) == [r for r in found if r[2].flag != row.flag] or \
            not row.flag
        kw, _ = attestation.rebuild_request(claim, source="/src", python=None, cache_dir=None, out="o",
                                            flags=flag_settings())
        assert MARK not in json.dumps(kw)  # untrusted: never taken
        return
    assert named == []
    kw, _ = attestation.rebuild_request(claim, source="/src", python=None, cache_dir=None, out="o",
                                        flags=flag_settings(), trust=True)
    assert MARK not in json.dumps(kw)


def test_the_source_is_never_taken_from_the_provenance_without_trust(real: dict[str, Any]) -> None:
    claim = attestation.parse(json.dumps(real).encode(), "p.json")
    with pytest.raises(UserError, match=f"Pass --source with a checkout at commit {COMMIT}"):
        rebuild_rules.source(claim, None, trust=False)
    assert rebuild_rules.source(claim, "/mine", trust=False) == "/mine"
    paths = [p for p, _, f in fields.refusals(real, frozenset()) if f.flag == "--source"]
    assert paths == ["predicate.buildDefinition.resolvedDependencies['source'].annotations.path"]
    assert [p for p, _, f in fields.refusals(real, frozenset({"--source", "--plugin-dir"}))] == []


def test_a_recorded_relative_plugin_dir_resolves_to_the_recorded_absolute_path(real: dict[str, Any]) -> None:
    """#46: a trusted rebuild takes ``../shared`` as the path the same provenance recorded, not cwd/../shared."""
    data = copy.deepcopy(real)
    recorded = next(d for d in data["predicate"]["buildDefinition"]["resolvedDependencies"]
                    if d["name"] == "plugin:shared")["annotations"]["path"]
    data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["plugin_dirs"]["value"] = ["../shared"]
    claim = attestation.parse(json.dumps(data).encode(), "p.json")
    assert rebuild_rules.plugin_dirs(claim) == (recorded,)
    data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["plugin_dirs"]["value"] = ["../other"]
    with pytest.raises(UserError, match="no recorded plugin path ends with it"):
        rebuild_rules.plugin_dirs(attestation.parse(json.dumps(data).encode(), "p.json"))


def test_plugin_dirs_given_replace_the_recorded_ones_one_for_one(real: dict[str, Any]) -> None:
    """A provenance with two plugin dirs rebuilt with one --plugin-dir dropped the second without a word (review):
    another count is refused before any work."""
    data = copy.deepcopy(real)
    data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["plugin_dirs"]["value"] = ["/a", "/b"]
    claim = attestation.parse(json.dumps(data).encode(), "p.json")
    with pytest.raises(UserError, match=r"had 2 plugin dir\(s\) \('/a', '/b'\) and --plugin-dir gave 1"):
        rebuild_rules.check_plugin_count(claim, ("/mine",))
    rebuild_rules.check_plugin_count(claim, ("/x", "/y"))
    rebuild_rules.check_plugin_count(claim, ())  # none given: the trusted path or the refusal decides


def test_a_wheel_built_without_reproducible_is_said_to_promise_no_byte_identity(real: dict[str, Any],
                                                                                  tmp_path: Path) -> None:
    """#46: the note comes first, names what can differ, and only for a wheel built without --reproducible."""
    claim = attestation.parse(json.dumps(real).encode(), "p.json")
    note = rebuild_rules.not_promised(claim)
    assert note is not None and "byte identity was never promised" in note and "plan_key" in note
    assert "SBOM" in note and "zip members' dates" in note
    data = copy.deepcopy(real)
    data["predicate"]["buildDefinition"]["externalParameters"]["settings"]["reproducible"]["value"] = True
    assert rebuild_rules.not_promised(attestation.parse(json.dumps(data).encode(), "p.json")) is None
    # the CLI says it before anything else, here before the refusal of a source at another path
    prov = tmp_path / f"{WHEEL}.provenance.json"
    prov.write_text(json.dumps(real))
    code, out, err = _rebuild(prov, tmp_path, "--source", str(tmp_path / "nowhere"), "--plugin-dir", "/nowhere")
    assert code == 2 and " ".join(out.split()).startswith(f"note: {WHEEL} was built without --reproducible: byte "
                                                          "identity was never promised for it")
    assert "error:" in err and "Traceback" not in err


def _rebuild(prov: Path, where: Path, *args: str) -> tuple[int, str, str]:
    """``tritonbuild rebuild`` in this process (so the conftest's subprocess guard holds): exit code, out, err."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        main(["rebuild", str(prov), "--out", str(where / "out"), "--cache-dir", str(where / "cache"), *args])
    return int(exc.value.code or 0), out.getvalue(), err.getvalue()


TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["", "/", "..", "../../etc", "file:///elsewhere", "https://evil.example/x.git", "git@evil:x", "ssh://h/x",
     "-oProxyCommand=x", "ext::sh -c touch", "\n", "\x00", "\u202e", "a" * 5000, "$(touch x)"])
LEAF = (st.none() | st.booleans() | st.integers() | st.floats() | TEXT
        | st.sampled_from([10 ** 400, -(2 ** 63), float("nan"), float("inf")]))
JSONS = st.recursive(LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                     max_leaves=12)


def _mutated(real: dict[str, Any], edits: list[tuple[int, object]]) -> bytes:
    data = copy.deepcopy(real)
    for index, value in edits:
        _put(data, fields.FIELDS[index % len(fields.FIELDS)], value)
    text = json.dumps(data, allow_nan=True)
    return text.encode()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, 10 ** 6), JSONS), min_size=1, max_size=6),
       wrap=st.sampled_from(["json", "bytes", "nested"]))
def test_hostile_provenances_end_in_exit_2_before_any_program_runs(real: dict[str, Any], tmp_path_factory:
                                                                   pytest.TempPathFactory, edits: list[tuple[int,
                                                                                                             object]],
                                                                   wrap: str) -> None:
    where = tmp_path_factory.mktemp("hostile")
    prov = where / f"{WHEEL}.provenance.json"
    body = _mutated(real, edits)
    if wrap == "bytes":
        body = body[: len(body) // 2] + b"\xff\x00" + body[len(body) // 2:]
    elif wrap == "nested":
        body = b'{"_type": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    prov.write_bytes(body)
    tracemalloc.start()
    started = time.monotonic()
    try:
        code, out, err = _rebuild(prov, where)  # no --source: a well-formed one is refused for its source
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert code == 2 and "Traceback" not in out + err, out + err
    assert time.monotonic() - started < 15 and peak < 300 << 20  # seconds on a loaded 2-core machine
    assert sorted(p.name for p in where.iterdir()) == [prov.name]  # no out dir, no cache, no clone


def test_every_code_locating_field_set_at_once_is_one_paragraph_naming_each(real: dict[str, Any],
                                                                               tmp_path: Path) -> None:
    data = copy.deepcopy(real)
    trusted = [f for f in fields.FIELDS if f.use == "trusted"]
    for row in trusted:
        _put(data, row, _hostile(row))
    prov = tmp_path / f"{WHEEL}.provenance.json"
    prov.write_text(json.dumps(data))
    code, out, err = _rebuild(prov, tmp_path)
    text = " ".join(err.split())
    assert code == 2 and out.count("\n") <= 2 and "Traceback" not in err
    assert len(err.strip().split("\n\n")) == 1 and "Nothing was cloned, fetched, configured or built" in text
    for row in trusted:
        assert row.path.split("[")[0].removeprefix("predicate.buildDefinition.") in text.replace(
            "predicate.buildDefinition.", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == [prov.name]


def test_a_huge_or_key_heavy_provenance_is_refused_in_bounded_time(tmp_path: Path) -> None:
    prov = tmp_path / f"{WHEEL}.provenance.json"
    keys = b"{" + b",".join(b'"k%d":0' % i for i in range(400000))[: attestation.MAX_BYTES - 20] + b"}"
    for body in (keys[: keys.rindex(b",")] + b"}", b" " * (attestation.MAX_BYTES + 1),
                 b'{"a": 1, "a": NaN}', b"[" * 200000):
        prov.write_bytes(body)
        started = time.monotonic()
        code, _, err = _rebuild(prov, tmp_path)
        assert code == 2 and "Traceback" not in err and time.monotonic() - started < 10
