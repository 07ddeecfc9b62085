"""bench/gpu_suite.py's report logic (pure) on junit XML shaped as pytest writes it: a file that cannot be
imported is one testcase with classname "" and an error "collection failure". Real pytest runs of both sides are
in tests/integration/test_gpu_suite.py."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import load_bench

suite = load_bench("gpu_suite")

OFFICIAL = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1">
<testcase classname="" name="unit.language.test_warp_specialization" time="0.000">
<error message="collection failure">ImportError: cannot import name 'is_hopper_or_newer' from
'triton._internal_testing'</error></testcase>
<testcase classname="unit.language.test_matmul" name="test_op[128-128-64]" time="1.2"/>
<testcase classname="unit.language.test_matmul" name="test_op[64-64-32]" time="1.0"/>
<testcase classname="unit.language.test_matmul" name="test_fp8" time="0.1">
<failure message="AssertionError: both">...</failure></testcase>
<testcase classname="unit.language.test_matmul" name="test_skip" time="0.0"><skipped message="no"/></testcase>
</testsuite></testsuites>"""

OURS = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="3">
<testcase classname="unit.language.test_warp_specialization" name="test_ws_matmul[True-True-True-4-2-128-256-128]"
 time="3.1"><failure message="AssertionError: Tensor-likes are not close! nan">...</failure></testcase>
<testcase classname="unit.language.test_warp_specialization" name="test_ws_basic" time="0.4"/>
<testcase classname="unit.language.test_matmul" name="test_op[128-128-64]" time="1.3">
<failure message="OutOfResources: out of resource: shared memory, Required: 328248">...</failure></testcase>
<testcase classname="unit.language.test_matmul" name="test_op[64-64-32]" time="1.0"/>
<testcase classname="unit.language.test_matmul" name="test_fp8" time="0.1">
<failure message="AssertionError: both">...</failure></testcase>
<testcase classname="unit.language.test_matmul" name="test_skip" time="0.0"><skipped message="no"/></testcase>
</testsuite></testsuites>"""


def parsed(tmp_path: Path, text: str, name: str) -> dict[str, dict[str, str]]:
    (tmp_path / name).write_text(text)
    return dict(suite.junit(tmp_path / name))


def test_a_collection_error_is_a_file_not_a_failed_test(tmp_path: Path) -> None:
    official = parsed(tmp_path, OFFICIAL, "official.xml")
    entry = official["unit.language.test_warp_specialization"]
    assert entry["status"] == suite.COLLECTION and "is_hopper_or_newer" in entry["message"]
    assert official["unit.language.test_matmul::test_fp8"]["status"] == "failed"
    assert official["unit.language.test_matmul::test_skip"]["status"] == "skipped"
    assert suite.junit(tmp_path / "missing.xml") == {}  # a side stopped before pytest wrote it


def test_only_ours_failed_is_kept_apart_from_what_the_official_wheel_cannot_import(tmp_path: Path) -> None:
    groups = suite.compare(parsed(tmp_path, OURS, "ours.xml"), parsed(tmp_path, OFFICIAL, "official.xml"))
    assert [g["test"] for g in groups["only ours failed"]] == ["unit.language.test_matmul::test_op[128-128-64]"]
    cannot = groups["official cannot import"]["unit.language.test_warp_specialization"]
    assert (cannot["passed"], cannot["failed"]) == (1, 1) and "is_hopper_or_newer" in cannot["official error"]
    assert cannot["ours failed"][0]["error"].endswith("nan")
    assert groups["only one side ran"] == [] and groups["ours cannot import"] == []
    report = suite.summary(groups, {"chunk": "x"})
    assert report["ok"] is False  # the OutOfResources failure is ours alone
    assert report["counts"]["both failed"] == 1 and report["counts"]["both skipped"] == 1


def test_a_file_only_ours_cannot_import_fails_the_run(tmp_path: Path) -> None:
    # the sides swapped: now ours cannot import the file the official wheel runs
    groups = suite.compare(parsed(tmp_path, OFFICIAL, "o.xml"), parsed(tmp_path, OURS, "p.xml"))
    assert [f["file"] for f in groups["ours cannot import"]] == ["unit.language.test_warp_specialization"]
    assert groups["official cannot import"] == {} and groups["only one side ran"] == []
    assert suite.summary(groups, {})["ok"] is False


def test_the_default_run_covers_what_users_run_in_commands_of_ten_minutes() -> None:
    paths = {p for chunk in suite.CHUNKS.values() for p in chunk[0]}
    assert paths == {"unit/language/test_core.py", "unit/language/test_matmul.py",
                     "unit/language/test_warp_specialization.py", "gluon"}
    assert not [p for p in paths if "test_debug" in p] and "debug" in suite.APART
    shards = sorted(c[1] for name, c in suite.CHUNKS.items() if name.startswith("core-"))
    assert shards == ["1/4", "2/4", "3/4", "4/4"]
    args = suite.argparse.Namespace(timeout=120, workers=16, k=None, side_timeout=250)
    argv = suite.pytest_argv("python", *suite.CHUNKS["core-2of4"], Path("x.xml"), Path("t"), args)
    assert "--shard=2/4" in argv and "--ignore-glob=*/test_debug.py" in argv
    assert "--continue-on-collection-errors" in argv  # else pytest stops at the first file it cannot import
    assert argv[-1] == "unit/language/test_core.py"
    assert 2 * args.side_timeout + 60 < 600  # both sides and the installs inside one command


def test_a_later_run_that_imports_a_file_replaces_its_collection_error() -> None:
    # a shard ran without a module gluon/test_frontend.py imports; a later run with it in the bundle ran the file
    ours = {"gluon.test_frontend": {"status": suite.COLLECTION, "message": "No module named 'expecttest'",
                                    "time": "0"},
            "gluon.test_core::test_a": {"status": "passed", "message": "", "time": "1"}}
    suite.merge(ours, {"gluon.test_frontend::test_x": {"status": "passed", "message": "", "time": "1"},
                       "gluon.test_frontend.TestY::test_z": {"status": "failed", "message": "x", "time": "1"}})
    assert sorted(ours) == ["gluon.test_core::test_a", "gluon.test_frontend.TestY::test_z",
                            "gluon.test_frontend::test_x"]
    suite.merge(ours, {"unit.language.test_core": {"status": suite.COLLECTION, "message": "m", "time": "0"}})
    assert ours["unit.language.test_core"]["status"] == suite.COLLECTION  # a new error is kept
