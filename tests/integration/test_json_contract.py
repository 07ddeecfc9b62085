"""The one JSON contract (#46), end to end through the command line and without a build: a refused run answers in
JSON on stdout with its exit code, lists stay lists at one element, status times carry their zone, verify and
doctor speak JSON. ``run_cli`` holds every ``--json`` output to its command's shipped schema."""

from __future__ import annotations

import datetime
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import json_out, make_wheel
from tests.integration.conftest import LLVM, flat, run_cli


def plan_args(root: Path, tmp_path: Path) -> list[str]:
    return ["--source", str(root), "--llvm", str(LLVM), "--offline", "--cache-dir", str(tmp_path / "cache")]


@pytest.mark.parametrize(("args", "words"), [
    (["plan", "--json", "--jobs", "abc"], "'abc' is not a whole number written in ASCII"),  # click's usage error
    (["plan", "--jobs", "abc", "--json"], "'abc' is not a whole number written in ASCII"),  # --json after the bad value
    (["plan", "--json", "--no-such-flag"], "No such option"),
    (["plan", "--json", "--source", "{tmp}/missing"], "does not exist"),  # tritonbuild's own refusal
    (["llvm", "status", "--json", "--source", "{tmp}/missing"], "does not exist"),
    (["verify", "--json"], "Missing argument"),
])
def test_a_refused_json_run_prints_the_error_envelope_with_its_exit_code(tmp_path: Path, args: list[str],
                                                                         words: str) -> None:
    proc = run_cli(*(a.replace("{tmp}", str(tmp_path)) for a in args), cwd=tmp_path, check=False)
    assert proc.returncode == 2, proc.stderr
    data = json_out(proc.stdout, 2)  # valid against the error schema, exit 2 as the process's
    assert data["error"]["kind"] == "bad input" and words in data["error"]["message"]
    assert data["command"] == ("llvm status" if args[0] == "llvm" else args[0])
    assert words in flat(proc.stderr) and "Traceback" not in proc.stderr  # a person still reads it on stderr


def test_without_json_a_refusal_prints_nothing_on_stdout(tmp_path: Path) -> None:
    proc = run_cli("plan", "--jobs", "abc", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and proc.stdout == ""


def test_one_python_is_a_list_of_one_plan_and_two_a_list_of_two(tree, tmp_path: Path) -> None:
    args = plan_args(tree(), tmp_path)
    one = json_out(run_cli("plan", "--json", *args, cwd=tmp_path).stdout)
    assert one["command"] == "plan" and len(one["plans"]) == 1 and one["plans"][0]["schema"] == one["schema"]
    two = json_out(run_cli("plan", "--json", *args, "--python", sys.executable, "--python", sys.executable,
                           cwd=tmp_path).stdout)
    assert isinstance(two["plans"], list) and len(two["plans"]) >= 1
    assert {p["key"] for p in two["plans"]} == {one["plans"][0]["key"]}


def test_status_times_are_iso_8601_in_utc(tmp_path: Path) -> None:
    build = tmp_path / "cache" / "build" / "0123456789abcdef"
    build.mkdir(parents=True)
    (build / "plan.json").write_text('{"key": "0123456789abcdef"}')  # a build dir tritonbuild made: its plan
    (build / "build.log").write_text("done\n")
    os.utime(build / "build.log", (1767225600, 1767225600))  # 2026-01-01 00:00 UTC
    data = json_out(run_cli("status", "--json", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path).stdout)
    [row] = data["build_dirs"]
    assert row["last_build"] == "2026-01-01T00:00:00+00:00" and data["cache_copies"] == []
    local = datetime.datetime.fromtimestamp(1767225600).strftime("%Y-%m-%d %H:%M")
    assert local in run_cli("status", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path).stdout  # people: local
    empty = json_out(run_cli("status", "--json", "--cache-dir", str(tmp_path / "none"), cwd=tmp_path).stdout)
    assert empty["build_dirs"] == [] and empty["cache_copies"] == []


def test_verify_json_gives_each_wheels_findings_and_its_exit_code(tmp_path: Path) -> None:
    files = {"triton/__init__.py": b"x = 1\n"}
    good = make_wheel(tmp_path / "triton-3.6.0-py3-none-any.whl", files)
    (tmp_path / "bad").mkdir()
    bad = make_wheel(tmp_path / "bad" / good.name, files, record="triton/__init__.py,sha256=x,1\n")
    proc = run_cli("verify", "--json", "--no-import", str(good), cwd=tmp_path, check=False)
    [wheel] = json_out(proc.stdout, proc.returncode)["wheels"]
    assert wheel["wheel"] == str(good) and wheel["python"] is None
    assert "RECORD" in {f["check"] for f in wheel["findings"]} and wheel["ok"] == (proc.returncode == 0)
    both = run_cli("verify", "--json", "--no-import", str(good), str(bad), cwd=tmp_path, check=False)
    data = json_out(both.stdout, 1)
    assert [w["wheel"] for w in data["wheels"]] == [str(good), str(bad)] and data["wheels"][1]["ok"] is False
    assert any(f["status"] == "fail" for f in data["wheels"][1]["findings"])


def test_doctor_json_lists_its_rows(tmp_path: Path) -> None:
    data = json_out(run_cli("doctor", "--json", cwd=tmp_path).stdout)
    names = [r["name"] for r in data["rows"]]
    assert "cmake" in names and "Python" in names


def test_backends_json_is_one_object_with_a_list_of_backends(tree, tmp_path: Path) -> None:
    data = json_out(run_cli("backends", "--json", "--source", str(tree()), cwd=tmp_path).stdout)
    assert data["command"] == "backends" and isinstance(data["warnings"], list)
    assert {"nvidia", "amd"} <= {b["name"] for b in data["backends"]}
