"""Issue 38 (finding 2): verify reads the provenance file beside a wheel as hostile input. Any JSON (or bytes) in
its place, or in its subject, is a worded problem or a (name, sha256) pair, never an exception."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.wheel.attestation import BUILD_TYPE, BUILDER_ID, PREDICATE_TYPE
from tritonbuild.wheel.checks.provenance_file import _subject

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=4), max_leaves=20)


def statement(subject: Any) -> dict[str, Any]:
    return {"_type": "https://in-toto.io/Statement/v1", "subject": subject, "predicateType": PREDICATE_TYPE,
            "predicate": {"buildDefinition": {"buildType": BUILD_TYPE, "externalParameters": {}},
                          "runDetails": {"builder": {"id": BUILDER_ID}}}}


def test_a_good_statement_gives_its_subject() -> None:
    good = statement([{"name": "triton-3.6.0-cp311-cp311-linux_x86_64.whl", "digest": {"sha256": "ab" * 32}}])
    assert _subject(json.dumps(good).encode()) == ("triton-3.6.0-cp311-cp311-linux_x86_64.whl", "ab" * 32)
    two = statement([{"name": "a.whl", "digest": {"sha256": "ab" * 32}}] * 2)
    assert "2 subjects" in str(_subject(json.dumps(two).encode()))


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_any_json_is_a_problem_or_a_subject(doc: Any) -> None:
    found = _subject(json.dumps(doc).encode())
    assert isinstance(found, str) or (isinstance(found, tuple) and all(isinstance(x, str) for x in found))


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_any_subject_is_a_problem_or_a_subject(subject: Any) -> None:
    found = _subject(json.dumps(statement(subject)).encode())
    assert isinstance(found, str) or (isinstance(found, tuple) and all(isinstance(x, str) for x in found))


@given(st.binary(max_size=64))
def test_any_bytes_are_a_problem(data: bytes) -> None:
    assert isinstance(_subject(data), str | tuple)
