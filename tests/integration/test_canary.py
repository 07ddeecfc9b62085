"""The canary compile through the real CLI (#36): real cmake and g++ against Debian's LLVM 22, on the example tree
with a header written for an older LLVM (``old_override``: an override of RewritePattern::match, which LLVM 21
removed). ``check-llvm`` names the cause once, with its unit count and an example; ``build`` stops before its full
build; ``--canary off`` builds, and fails in the compiler."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import one_of
from tritonbuild import example

from .conftest import LLVM, flat, run_cli

ARGS = ("--llvm", str(LLVM), "--backends", "nvidia", "--no-proton", "--offline")
CAUSE = "triton::FoldCorePattern::match() const' marked 'override', but does not override"


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("canary")
    return {"base": base, "broken": example.write_tree(base / "broken" / "triton", old_override=True),
            "plain": example.write_tree(base / "plain" / "triton"),
            "both": example.write_tree(base / "both" / "triton", old_override=True, old_includes=True),
            "host": example.write_tree(base / "host" / "triton", old_host_features=True)}


def _cli(trees: dict[str, Path], command: str, tree: str, *extra: str, cache: str = "cache") -> tuple[int, str, str]:
    base = trees["base"]
    proc = run_cli(command, "--source", str(trees[tree]), *ARGS, "--cache-dir", str(base / cache), *extra,
                   cwd=base, check=False)
    assert "Traceback" not in proc.stderr
    return proc.returncode, proc.stdout, flat(proc.stdout + proc.stderr)


def _objects(cache: Path) -> list[Path]:
    return [p for p in (cache / "build").rglob("*.o") if p.is_file()]


def test_check_llvm_names_the_cause_once_with_its_units_and_an_example(trees: dict[str, Path]) -> None:
    rc, _, out = _cli(trees, "check-llvm", "broken")
    assert rc == 1, out
    header = trees["broken"] / example.OLD_OVERRIDE_HEADER
    assert out.count(CAUSE) == 1 and "API change" in out
    assert f"[1 unit(s); e.g. {header}:9:" in out  # the user's checkout, not the build dir's view of it
    assert "1 cause(s) in 1 of" in out and "a build would fail" in out
    rc, stdout, _ = _cli(trees, "check-llvm", "broken", "--json")
    result = json.loads(stdout)
    assert rc == 1 and result["ok"] is False and len(result["causes"]) == 1
    cause = result["causes"][0]
    assert cause["kind"] == "API change" and cause["units"] == 1 and CAUSE in cause["cause"]
    assert cause["example"].startswith(f"{header}:9: ")
    assert cause["unit_files"] == [str(trees["broken"] / example.OLD_OVERRIDE_USER)]
    assert 0 < len(result["chosen"]) < result["units_total"]  # a few units, not the build
    assert result["configure_seconds"] == 0.0  # the dev dir configured by the first run is reused
    assert not _objects(trees["base"] / "cache")


def test_check_llvm_on_a_tree_that_compiles_exits_0(trees: dict[str, Path]) -> None:
    rc, _, out = _cli(trees, "check-llvm", "plain")
    assert rc == 0, out
    assert "everything compiles" in out and "canary compile: " in out and " chosen units (" in out


def test_only_units_the_build_compiles_count(trees: dict[str, Path]) -> None:
    tree = example.write_tree(trees["base"] / "tool" / "triton")
    (tree / "include/triton/ToolOnly.h").write_text(example.OLD_OVERRIDE_TEXT)
    tool = tree / "bin/triton-opt.cpp"  # configured, but built only with --target triton-opt
    tool.write_text('#include "triton/ToolOnly.h"\n' + tool.read_text())
    trees["tool"] = tree
    rc, _, out = _cli(trees, "check-llvm", "tool", cache="cache-tool")
    assert rc == 0 and "everything compiles" in out, out
    rc, _, out = _cli(trees, "check-llvm", "tool", "--target", "triton-opt", cache="cache-tool")
    assert rc == 1 and f"{tree / 'include/triton/ToolOnly.h'}:9:" in out and CAUSE in out


def test_the_plan_says_whether_the_canary_runs(trees: dict[str, Path]) -> None:
    rc, stdout, _ = _cli(trees, "plan", "plain", "--json")
    assert rc == 0 and one_of(stdout, "plans")["canary"]["enabled"] is True
    assert "does not record its commit" in one_of(stdout, "plans")["canary"]["why"]
    rc, stdout, _ = _cli(trees, "plan", "plain", "--json", "--canary", "off")
    assert rc == 0 and one_of(stdout, "plans")["canary"] == {"enabled": False, "why": "off (cli --canary)",
                                                        "max_units": 64, "timeout": 300, "budget": 120.0,
                                                        "budget_why": "canary_budget 120 (default)"}
    rc, _, out = _cli(trees, "plan", "plain", "--canary", "sometimes")
    assert rc == 2 and "must be one of: auto, on, off" in out


def test_build_stops_at_the_canary_before_the_full_build(trees: dict[str, Path]) -> None:
    rc, _, out = _cli(trees, "build", "broken", "--no-smoke-test", "--out", str(trees["base"] / "dist"),
                      cache="cache-build")
    assert rc == 1, out
    assert "the full build was not started" in out and CAUSE in out
    assert "The source pins LLVM" in out  # the existing diagnosis of an API change
    assert not _objects(trees["base"] / "cache-build")
    assert not (trees["base"] / "dist").exists()


def test_canary_off_lets_the_build_go_on_to_fail_in_the_compiler(trees: dict[str, Path]) -> None:
    rc, _, out = _cli(trees, "build", "broken", "--no-smoke-test", "--canary", "off", "--out",
                      str(trees["base"] / "dist"), cache="cache-off")
    assert rc == 1, out
    assert "canary compile" not in out and "The build failed" in out
    assert "marked \u2018override\u2019, but does not override" in out or "marked 'override'" in out
    assert _objects(trees["base"] / "cache-off")  # the full build compiled what it could


def test_check_llvm_reports_the_preflight_problems_with_the_canary_causes(trees: dict[str, Path]) -> None:
    """`plan` refuses the moved include; check-llvm names it and still compiles, so the override is named too: all
    the causes in one run, not one per attempt."""
    rc, _, out = _cli(trees, "plan", "both")
    assert rc == 2 and example.OLD_PASS_PLUGIN in out and CAUSE not in out
    rc, stdout, _ = _cli(trees, "check-llvm", "both", "--json")
    result = json.loads(stdout)
    assert rc == 1 and result["ok"] is False
    [problem] = result["preflight"]
    assert f"include {example.OLD_PASS_PLUGIN}: moved to llvm/Plugins/PassPlugin.h" in problem
    assert any(CAUSE in c["cause"] for c in result["causes"])
    rc, _, out = _cli(trees, "check-llvm", "both")
    assert rc == 1 and "1 problem(s) found before compiling" in out and out.count(CAUSE) == 1


def test_a_unity_build_is_checked_file_by_file(trees: dict[str, Path]) -> None:
    """Joined, the example's proton fails (two file-local helpers of one name, as in real proton; the build learns
    such targets): the canary compiles each member of a unity source on its own, so that is no cause."""
    base = trees["base"]
    proc = run_cli("check-llvm", "--source", str(trees["plain"]), "--llvm", str(LLVM), "--backends", "nvidia",
                   "--offline", "--unity-build", "4", "--cache-dir", str(base / "unity-cache"), "--json",
                   cwd=base, check=False)
    result = json.loads(proc.stdout)
    assert proc.returncode == 0 and result["ok"] is True, proc.stdout + proc.stderr
    chosen = result["chosen"]
    assert chosen and not [c for c in chosen if "/Unity/" in c]
    assert any("/third_party/proton/" in c for c in chosen)  # a member of proton's unity source, compiled alone


def test_a_break_in_the_glue_units_body_is_found_though_its_headers_are_covered_elsewhere(
        trees: dict[str, Path]) -> None:
    """triton-cpu 637ed8b0d on LLVM 19.1.7: the header cover compiled every header through other units and said
    everything compiles, while llvm.cc's body called getHostCPUFeatures the old way. The glue goes first now."""
    rc, stdout, out = _cli(trees, "check-llvm", "host", "--json")
    result = json.loads(stdout)
    glue = str(trees["host"] / "python" / "src" / "llvm.cc")
    assert rc == 1 and result["failed"] == [glue] and result["chosen"][0] == glue, out
    assert "getHostCPUFeatures" in result["causes"][0]["cause"]
    assert json.loads(_cli(trees, "check-llvm", "plain", "--json")[1])["chosen"][0].endswith("python/src/llvm.cc")


def test_a_fetched_dependencys_unit_that_includes_a_header_this_llvm_lacks_stops_the_build_at_the_canary(
        trees: dict[str, Path]) -> None:
    """Intel's translator, fetched and patched by the tree's CMake at configure time, included
    ``llvm/Passes/PassPlugin.h`` (gone in LLVM 22) and failed 25 minutes into the build: neither the plan's
    include preflight (it reads the source and plugins) nor the canary's cover (the tree's headers) saw it. The
    canary reads every unit from outside the source for LLVM includes, and stops the build before it starts: also
    when its budget compiles only the first unit (Intel's: 14 of 64 chosen, none of the translator's)."""
    base = trees["base"] / "fetched"
    tree = example.write_tree(base / "triton")
    abi = example.write_spirv_abi(base / "abi", llvm_include="llvm/Passes/PassPlugin.h")
    proc = run_cli("build", "--source", str(tree), "--llvm", str(LLVM), "--backends", "spirv", "--no-proton",
                   "--offline", "--dep", f"spirv-kernel-abi={abi}", "--cache-dir", str(base / "cache"),
                   "--canary-budget", "0.01", "--jobs", "1",
                   "--no-smoke-test", "--out", str(base / "dist"), cwd=base, check=False)
    out = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 1 and "Traceback" not in out, out
    assert "the full build was not started" in out, out
    assert "abi.cpp:2" in out and "llvm/Passes/PassPlugin.h" in out, out
    assert not (base / "dist").exists()
