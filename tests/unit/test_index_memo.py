"""The index answer kept in the cache (``<cache>/nvidia/<project>.index.json``, issue 45): a warm plan takes it only
when it is exactly an answer of this index for this machine, within its size and count caps; anything else in that
file (hostile or corrupt) is ignored and the page is read again."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tritonbuild.nvidia import pypi
from tritonbuild.resolve.nvidia_parts import numeric

INDEX, PROJECT, MACHINE = "https://pypi.org/simple", "nvidia-cuda-nvdisasm", "x86_64"


def memo(cache: Path) -> Path:
    path = cache / "nvidia" / f"{PROJECT}.index.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def read(cache: Path) -> tuple[str, ...] | None:
    return pypi.remembered_versions(cache, INDEX, PROJECT, MACHINE)


def test_what_is_kept_is_read_back_only_for_its_index_and_machine(tmp_path: Path) -> None:
    assert read(tmp_path) is None
    pypi.remember_versions(tmp_path, INDEX, PROJECT, MACHINE, ("13.2.51", "13.0.20"))
    assert read(tmp_path) == ("13.0.20", "13.2.51")
    assert pypi.remembered_versions(tmp_path, "http://127.0.0.1:1/simple", PROJECT, MACHINE) is None
    assert pypi.remembered_versions(tmp_path, INDEX, PROJECT, "aarch64") is None


def test_a_link_an_oversized_or_overlong_answer_is_not_used(tmp_path: Path) -> None:
    pypi.remember_versions(tmp_path / "elsewhere", INDEX, PROJECT, MACHINE, ("13.2.51",))
    memo(tmp_path).symlink_to(memo(tmp_path / "elsewhere"))
    assert read(tmp_path) is None  # a link, even to a good answer
    memo(tmp_path).unlink()
    many = [f"13.{i}.0" for i in range(pypi.INDEX_MEMO_VERSIONS + 1)]
    memo(tmp_path).write_text(json.dumps({"index": INDEX, "machine": MACHINE, "versions": many}))
    assert read(tmp_path) is None
    memo(tmp_path).write_text(json.dumps({"index": INDEX, "machine": MACHINE, "versions": ["13.2.51"]})
                              + " " * pypi.INDEX_MEMO_LIMIT)
    assert read(tmp_path) is None
    os.mkfifo(memo(tmp_path).with_name("fifo"))
    memo(tmp_path).unlink()
    memo(tmp_path).with_name("fifo").rename(memo(tmp_path))
    start = time.monotonic()
    assert read(tmp_path) is None and time.monotonic() - start < 1  # a FIFO is not waited on


JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                       lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=10), c, max_size=5),
                       max_leaves=30)
ANSWERS = st.fixed_dictionaries({"index": st.sampled_from([INDEX, INDEX + "/", "http://x"]),
                                 "machine": st.sampled_from([MACHINE, "aarch64", ""]),
                                 "versions": st.lists(st.text(max_size=12) | st.sampled_from(["13.2.51", "13.0.20"]),
                                                      max_size=8) | JSONISH})


@settings(max_examples=150, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=2048) | ANSWERS.map(lambda d: json.dumps(d).encode())
       | JSONISH.map(lambda d: json.dumps(d).encode()))
@example(content=b"[" * 100_000)  # nested past the recursion limit
@example(content=json.dumps({"index": INDEX, "machine": MACHINE, "versions": ["13.2.51", "../../x"]}).encode())
@example(content=json.dumps({"index": INDEX, "machine": MACHINE, "versions": [None]}).encode())
def test_any_content_is_an_answer_of_numeric_versions_within_the_caps_or_ignored(tmp_path: Path,
                                                                                 content: bytes) -> None:
    memo(tmp_path).write_bytes(content)
    start = time.monotonic()
    got = read(tmp_path)
    assert time.monotonic() - start < 1
    if got is not None:
        data = json.loads(content)
        assert data["index"] == INDEX and data["machine"] == MACHINE and set(data) == {"index", "machine", "versions"}
        assert len(got) <= pypi.INDEX_MEMO_VERSIONS and all(numeric(v) for v in got)
        assert set(got) == set(data["versions"])


def test_a_cache_that_cannot_keep_the_answer_is_no_error(tmp_path: Path) -> None:
    (tmp_path / "nvidia").write_text("a file where the dir goes")
    pypi.remember_versions(tmp_path, INDEX, PROJECT, MACHINE, ("13.2.51",))  # OSError: the page is asked next time
    assert read(tmp_path) is None
