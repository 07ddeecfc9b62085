"""bench/gpu_suite.py's report logic, on junit XML that real pytest runs write (no GPU: the tests are small files
here; one side's helper module is missing, as the official wheel lacks a tree's newer triton._internal_testing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import load_bench

ROOT = Path(__file__).resolve().parents[2]


suite = load_bench("gpu_suite")

CORE = "from helper_new import value\n\n\ndef test_add():\n    assert value() == 1\n\n\ndef test_nan():\n" \
       "    assert value() == 2\n"
MATMUL = "import os\n\n\ndef test_fp16():\n    assert os.environ['SIDE'] == 'official'\n\n\ndef test_bf16():\n" \
         "    pass\n\n\ndef test_fp8():\n    assert False, 'both'\n"
GLUON = "import helper_ours_lacks\n\n\ndef test_layout():\n    pass\n"


def tree(base: Path) -> Path:
    """python/test as the bundle has it: unit/language/test_core.py needs a helper only one side has."""
    (base / "test" / "unit" / "language").mkdir(parents=True)
    (base / "test" / "gluon").mkdir()
    (base / "test" / "unit" / "language" / "test_core.py").write_text(CORE)
    (base / "test" / "unit" / "language" / "test_matmul.py").write_text(MATMUL)
    (base / "test" / "unit" / "language" / "test_debug.py").write_text("def test_assert():\n    assert False\n")
    (base / "test" / "gluon" / "test_layouts.py").write_text(GLUON)
    for side, helpers in (("ours", {"helper_new": "def value():\n    return 1\n"}),
                          ("official", {"helper_ours_lacks": ""})):
        (base / side).mkdir()
        for name, text in helpers.items():
            (base / side / f"{name}.py").write_text(text)
    return base / "test"


def run_side(base: Path, side: str, *extra: str) -> dict[str, dict[str, str]]:
    xml = base / f"{side}.xml"
    env = {**os.environ, "PYTHONPATH": str(base / side), "SIDE": side}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}",
                    f"--rootdir={base / 'test'}", "--ignore-glob=*/test_debug.py", "--continue-on-collection-errors",
                    *extra, "unit", "gluon"],
                   cwd=base / "test", env=env, capture_output=True, text=True, check=False, timeout=120)
    return dict(suite.junit(xml))


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, str]]]:
    base = tmp_path_factory.mktemp("suite")
    tree(base)
    return {"ours": run_side(base, "ours"), "official": run_side(base, "official")}


def test_junit_names_a_file_that_cannot_be_imported(sides: dict) -> None:
    official, ours = sides["official"], sides["ours"]
    assert official["unit.language.test_core"]["status"] == suite.COLLECTION
    assert "helper_new" in official["unit.language.test_core"]["message"]
    assert ours["unit.language.test_core::test_add"]["status"] == "passed"
    assert ours["unit.language.test_core::test_nan"]["status"] == "failed"
    assert ours["gluon.test_layouts"]["status"] == suite.COLLECTION
    assert not [t for t in ours if "test_debug" in t]  # left apart


def test_fails_only_with_ours_is_apart_from_files_the_official_wheel_cannot_import(sides: dict) -> None:
    groups = suite.compare(sides["ours"], sides["official"])
    assert [g["test"] for g in groups["only ours failed"]] == ["unit.language.test_matmul::test_fp16"]
    assert [g["test"] for g in groups["both failed"]] == ["unit.language.test_matmul::test_fp8"]
    assert groups["both passed"] == ["unit.language.test_matmul::test_bf16"]
    cannot = groups["official cannot import"]["unit.language.test_core"]
    assert (cannot["passed"], cannot["failed"]) == (1, 1)
    assert [f["test"] for f in cannot["ours failed"]] == ["unit.language.test_core::test_nan"]
    assert [f["file"] for f in groups["ours cannot import"]] == ["gluon.test_layouts"]
    assert groups["only one side ran"] == []  # the tests of an unimportable file are not "one side ran"
    report = suite.summary(groups, {})
    assert report["ok"] is False and report["counts"]["official cannot import"] == 1
    assert [f["test"] for f in report["fails only with ours"]] == ["unit.language.test_matmul::test_fp16"]


def test_a_run_where_ours_only_fails_what_official_cannot_import_is_ok(sides: dict) -> None:
    ours = {k: v for k, v in sides["ours"].items() if "gluon" not in k and "test_fp16" not in k}
    official = {k: v for k, v in sides["official"].items() if "gluon" not in k and "test_fp16" not in k}
    report = suite.summary(suite.compare(ours, official), {})
    assert report["ok"] is True and report["fails only with ours"] == []
    assert report["official cannot import"]["unit.language.test_core"]["failed"] == 1


def test_shards_split_the_tests_without_overlap(tmp_path: Path) -> None:
    base = tmp_path
    tree(base)
    (base / "plugin").mkdir()
    (base / "plugin" / "_gpu_suite_shard.py").write_text(suite.SHARD_PLUGIN)
    parts = []
    for index in (1, 2):
        env_path = f"{base / 'ours'}{os.pathsep}{base / 'plugin'}"
        xml = base / f"shard{index}.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "_gpu_suite_shard",
                        f"--shard={index}/2", f"--junitxml={xml}", "--ignore-glob=*/test_debug.py",
                        "unit/language/test_matmul.py", "unit/language/test_core.py"],
                       cwd=base / "test", env={**os.environ, "PYTHONPATH": env_path, "SIDE": "ours"},
                       capture_output=True, text=True, check=False, timeout=120)
        parts.append(set(suite.junit(xml)))
    assert parts[0] and parts[1] and not parts[0] & parts[1]
    assert len(parts[0] | parts[1]) == 5  # test_core's 2 and test_matmul's 3


def test_report_merges_the_chunks_files(tmp_path: Path, sides: dict) -> None:
    core = {k: v for k, v in sides["ours"].items() if "test_core" in k}
    matmul = {k: v for k, v in sides["ours"].items() if "test_matmul" in k}
    (tmp_path / "core-1of4.json").write_text(json.dumps({"chunk": "core-1of4", "sides": {
        "official": {"tests": {"unit.language.test_core": sides["official"]["unit.language.test_core"]}},
        "ours": {"tests": core}}}))
    # a chunk stopped at the command's limit after its official side: what ran is still there
    (tmp_path / "matmul.json").write_text(json.dumps({"chunk": "matmul", "sides": {
        "official": {"tests": {k: v for k, v in sides["official"].items() if "test_matmul" in k}}}}))
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_suite.py"), "report", str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=60)
    result = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert result["chunks"] == {"core-1of4": ["official", "ours"], "matmul": ["official"]}
    assert result["official cannot import"]["unit.language.test_core"]["passed"] == 1
    assert len(result["only one side ran"]) == 3 and not matmul.keys() & {r["test"] for r in result["both failed"]}


SLOW = "import time\n\n\ndef test_quick():\n    pass\n\n\ndef test_wrong():\n    assert 1 == 2\n\n\n" \
       "def test_slow():\n    time.sleep(60)\n"


def test_a_side_stopped_at_its_limit_still_reports_what_ran(tmp_path: Path) -> None:
    # the real side(): pytest with pytest-timeout and the stream plugin; the side's limit ends it in test_slow
    bundle = tmp_path / "bundle"
    (bundle / "test" / "gluon").mkdir(parents=True)
    (bundle / "test" / "gluon" / "test_slow.py").write_text(SLOW)
    (bundle / "test" / "gluon" / "test_broken.py").write_text("import helper_nobody_has\n")
    work = tmp_path / "work"
    (work / "plugin").mkdir(parents=True)
    (work / "plugin" / "_gpu_suite_stream.py").write_text(suite.STREAM_PLUGIN)
    args = suite.argparse.Namespace(bundle=str(bundle), timeout=120, workers=1, k=None, torch_check=False)
    result = suite.side("ours", sys.executable, [], (("gluon",), None, False), args, work, limit=8)
    assert result["complete"] is False and result["summary"] == "stopped after 8 s"
    assert result["tests"] == {
        "gluon.test_broken": {"status": suite.COLLECTION, "message": result["tests"]["gluon.test_broken"]["message"],
                              "time": "0"},
        "gluon.test_slow::test_quick": {"status": "passed", "message": "",
                                        "time": result["tests"]["gluon.test_slow::test_quick"]["time"]},
        "gluon.test_slow::test_wrong": {"status": "failed",
                                        "message": result["tests"]["gluon.test_slow::test_wrong"]["message"],
                                        "time": result["tests"]["gluon.test_slow::test_wrong"]["time"]}}
    assert "helper_nobody_has" in result["tests"]["gluon.test_broken"]["message"]
    assert "assert 1 == 2" in result["tests"]["gluon.test_slow::test_wrong"]["message"]


def test_streamed_ids_are_junits_ids(tmp_path: Path) -> None:
    # a side that ends on its own: junit XML and the stream name every test the same way, so either can fill in
    bundle = tmp_path / "bundle"
    tree(bundle)
    (bundle / "test" / "unit" / "language" / "test_classes.py").write_text(
        "import pytest\n\n\nclass TestLayout:\n    @pytest.mark.parametrize('n', [1, 2])\n"
        "    def test_n(self, n):\n        assert n == 1\n")
    work = tmp_path / "work"
    (work / "plugin").mkdir(parents=True)
    (work / "plugin" / "_gpu_suite_stream.py").write_text(suite.STREAM_PLUGIN)
    args = suite.argparse.Namespace(bundle=str(bundle), timeout=120, workers=1, k=None, torch_check=False)
    result = suite.side("ours", sys.executable, [bundle / "ours"], (("unit", "gluon"), None, False), args, work,
                        limit=120)
    assert result["complete"] is True
    streamed = suite.streamed(work / "ours.jsonl")
    assert streamed.keys() == suite.junit(work / "ours.xml").keys()
    assert {k: v["status"] for k, v in streamed.items() if "test_classes" in k} == {
        "unit.language.test_classes.TestLayout::test_n[1]": "passed",
        "unit.language.test_classes.TestLayout::test_n[2]": "failed"}


def test_ours_gets_what_the_official_side_left_of_the_command() -> None:
    args = suite.argparse.Namespace(side_timeout=250, budget=560)
    assert suite.side_limit("official", args, 10) == 250
    assert suite.side_limit("ours", args, 70) == 490  # the official wheel could not import most files
    assert suite.side_limit("ours", args, 400) == 250  # never less than its own share
