"""``check-llvm`` always runs the canary compile (it is what check-llvm checks): with the user's canary setting off
it says so in a note instead of silently running it anyway (#36)."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import LLVM, flat, run_cli
from tritonbuild import example


def test_check_llvm_with_the_canary_off_says_it_runs_it_anyway(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    proc = run_cli("check-llvm", "--source", str(tree), "--llvm", str(LLVM), "--backends", "nvidia", "--no-proton",
                   "--offline", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path,
                   env={"TRITONBUILD_CANARY": "off"}, check=False)
    out = flat(proc.stdout + proc.stderr)
    assert proc.returncode == 0, out
    assert ("note: the canary is off (env TRITONBUILD_CANARY), but check-llvm always runs it: the canary compile is "
            "what check-llvm checks; the setting applies to build and develop.") in out
    assert "canary compile: " in out and "everything compiles" in out
