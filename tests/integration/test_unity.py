"""Unity builds (--unity-build, --unity-exclude, the targets learned per commit) on the example tree with real
cmake, ninja, gcc and LLVM 22 (a file of its own so the test run spreads them over its workers)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers import WHEEL_ONLY, one_of
from tests.integration.conftest import flat, plan_json, run_cli
from tritonbuild import example


def test_unity_builds_join_sources_except_the_excluded_targets(tmp_path: Path) -> None:
    """--unity-build N: CMake joins N sources of a target into one translation unit; --unity-exclude keeps a
    target file by file (one whose files clash when joined), and the plan says so."""
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    args = ["--source", str(tree), "--backends", "nvidia;amd", "--unity-build", "4", "--unity-exclude", "proton",
            "--cache-dir", str(tmp_path / "cache")]
    plan = plan_json(*args, cwd=tmp_path)
    assert plan["toolchain"]["unity_batch"] == 4 and plan["toolchain"]["unity_exclude"] == ["proton"]
    assert dict(plan["cmake"]["defines"])["TRITONBUILD_UNITY_BATCH"] == "4"
    shown = run_cli("plan", *args, cwd=tmp_path).stdout
    assert "unity builds of 4 (not proton)" in flat(shown)
    result = one_of(run_cli("build", "--json", *args, "--out", str(tmp_path / "dist"), cwd=tmp_path,
                            env={**WHEEL_ONLY}).stdout, "wheels")
    cmake = Path(result["build_dir"]) / "cmake"
    unity = {p.parent.parent.name for p in cmake.rglob("unity_*_cxx.cxx")}
    assert {"triton.dir", "TritonAMD.dir"} <= unity and "proton.dir" not in unity, unity
    assert (cmake / "third_party/proton/CMakeFiles/proton.dir").is_dir()


def test_unity_builds_learn_the_targets_that_clash_joined_once_per_commit(tmp_path: Path) -> None:
    """Like real proton, the example's proton has two files with file-local helpers of one name: joined, they
    fail. Without --unity-exclude the build fails that round, learns the target, builds it file by file and makes
    the wheel; another build dir of the same tree starts from what was learned and fails nothing."""
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    args = ["--source", str(tree), "--backends", "nvidia;amd", "--unity-build", "4",
            "--cache-dir", str(tmp_path / "cache")]
    env = {**WHEEL_ONLY}
    first = run_cli("build", *args, "--out", str(tmp_path / "dist"), cwd=tmp_path, env=env)
    assert "proton failed to compile joined" in flat(first.stdout + first.stderr)
    result = json.loads(next((tmp_path / "dist").glob("*.manifest.json")).read_text())
    build_dir = Path(next((tmp_path / "cache" / "build").iterdir()))
    log = (build_dir / "build.log").read_text()
    assert re.search(r"FAILED: .*proton\.dir/Unity/unity_0_cxx\.cxx\.o", log), log[-3000:]
    assert "redefinition of" in log and "versionOf" in log
    assert [ln for ln in (build_dir / "unity-learned.txt").read_text().splitlines() if not ln.startswith("#")] \
        == ["proton"]
    cmake = build_dir / "cmake"
    assert not list((cmake / "third_party/proton/CMakeFiles/proton.dir").rglob("unity_*.o"))  # file by file
    assert list((cmake / "third_party/proton/CMakeFiles/proton.dir").rglob("RoctracerProfiler.cpp.o"))
    assert {p.parent.parent.name for p in cmake.rglob("unity_*_cxx.cxx")} >= {"triton.dir", "TritonAMD.dir"}
    assert result["unity_learned"] == ["proton"]
    rounds = result["where_time_went"]["runs"]  # the failed round's time is shown, not hidden behind the last
    assert len(rounds) == 2 and all(r["edges"] > 0 for r in rounds), rounds
    assert result["where_time_went"]["wall_seconds"] == rounds[-1]["wall_seconds"]
    summary = flat(first.stdout.replace("\u2502", " "))  # the summary table's wrapped cell, its borders out
    assert f"of 2 Ninja runs: {rounds[0]['wall_seconds']:.1f} s + " in summary, summary
    # another build dir of the same tree (another define): starts from the learned list, nothing fails
    again = one_of(run_cli("build", "--json", *args, "--cmake-arg", "-DTB_ANOTHER_DIR=1",
                           "--out", str(tmp_path / "dist2"), cwd=tmp_path, env=env).stdout, "wheels")
    assert again["build_dir"] != str(build_dir) and again["unity_learned"] == []
    assert "FAILED" not in Path(again["log"]).read_text() and "runs" not in again["where_time_went"]
