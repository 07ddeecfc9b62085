"""Compile acceptance: a wheel that imports but hangs on a specialised matmul never reaches the output dir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import WHEEL_ONLY, one_of
from tests.integration.conftest import flat, run_cli
from tritonbuild import example


@pytest.fixture(scope="module")
def stuck(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("compilecheck")
    tree = example.write_tree(base / "src" / "triton", backends=("nvidia", "amd"), proton=False)
    plugin = example.write_plugin(base / "src" / "stuck", "stuck", hang_on_specialised=True)
    args = ["--source", str(tree), "--backends", "nvidia;amd", "--plugin-dir", str(plugin), "--no-proton",
            "--cache-dir", str(base / "cache"), "--compile-check-timeout", "3"]
    return {"base": base, "args": args, "env": {**WHEEL_ONLY}}


def test_a_hang_keeps_the_wheel_out_and_names_kernel_target_and_stage(stuck: dict) -> None:
    proc = run_cli("build", *stuck["args"], "--out", str(stuck["base"] / "dist"), cwd=stuck["base"], env=stuck["env"],
                   check=False)
    err = flat(proc.stderr)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # 40 cases and the 32 warp-specialized matmuls of sm_90a and sm_100a (3.4+: the example says 3.6.0)
    assert "does not compile real kernels: 0 failed and 2 timed out of 72" in err
    assert "matmul_fp16@stuck: no result after 3 s (last stage entered: stuck)" in err
    assert "matmul_bf16@stuck: no result after 3 s" in err
    assert "not the source's pin" in err  # Debian's LLVM is not the example's pin: the message says so
    assert not list((stuck["base"] / "dist").glob("*.whl")), "a wheel that hangs must not be published"
    log = (next((stuck["base"] / "cache" / "build").iterdir()) / "build.log").read_text()
    # after each hang a new interpreter went on: the plugin's cases after the matmuls compiled
    done = [json.loads(line) for line in log.splitlines() if line.startswith('{"event": "done"')]
    assert {"reduction@stuck", "atomics@stuck", "matmul_fp16@sm_90a"} <= {d["case"] for d in done if d["ok"]}
    # the example's stand-in language has no tensor descriptors: those cases say so, they are not compiled
    skips = [json.loads(line) for line in log.splitlines() if line.startswith('{"event": "skip"')]
    assert len(skips) == 32 and {s["case"].partition("@")[2] for s in skips} == {"sm_90a", "sm_100a"}
    assert skips[0]["reason"].startswith("this Triton's language lacks tl.make_tensor_descriptor")


def test_no_compile_check_publishes_and_verify_compile_finds_the_hang(stuck: dict) -> None:
    proc = run_cli("build", "--json", *stuck["args"], "--out", str(stuck["base"] / "dist"), "--no-compile-check",
                   cwd=stuck["base"], env=stuck["env"])
    result = one_of(proc.stdout, "wheels")
    assert result["compile_check"] == {"enabled": False, "why": "cli --compile-check/--no-compile-check"}
    wheel = Path(result["wheel"])
    assert wheel.is_file()
    check = run_cli("verify", "--compile", "--compile-timeout", "3", str(wheel), cwd=stuck["base"], check=False)
    out = flat(check.stdout)
    assert check.returncode == 1
    # the stand-in compiler reports no shared memory: no launch limit could be checked, and the line says so
    assert ("FAIL compile: 38 of 72 kernels compiled, 32 skipped, 38 with no launch limit checked (amd, nvidia, "
            "stuck): matmul_fp16@stuck: no result after 3 s") in out


def test_plan_lists_the_corpus(stuck: dict) -> None:
    plan = one_of(run_cli("plan", "--json", *stuck["args"], cwd=stuck["base"], env=stuck["env"]).stdout, "plans")
    ids = [c["id"] for c in plan["compile_check"]["cases"]]
    assert plan["compile_check"]["timeout"] == 3 and len(ids) == 72
    assert "ws_persistent_fp8_128x256x64_s3@sm_100a" in ids and not [i for i in ids if "ws_" in i and "sm_80" in i]
    assert ids[:2] == ["matmul_fp16@sm_80", "matmul_bf16@sm_80"] and "matmul_fp8@gfx950" in ids
    assert plan["compile_check"]["cases"][-1]["target"] == {"backend_name": "stuck", "from_driver": True}
    text = flat(run_cli("plan", *stuck["args"], cwd=stuck["base"], env=stuck["env"]).stdout)
    assert "compile check" in text and "72 kernels, 3 s each; sm_80: matmul_fp16" in text


def test_a_source_known_to_hang_with_this_llvm_is_refused_before_building(tmp_path: Path) -> None:
    """d8da7c998's dead-iter-arg pattern against Debian's LLVM 22.1 (its scf.for canonicalization undoes the
    pattern forever): the plan stops with the reason and the fix instead of failing the compile check an hour on."""
    tree = example.write_tree(tmp_path / "triton")
    utility = tree / "lib" / "Dialect" / "TritonGPU" / "Transforms" / "Utility.cpp"
    utility.parent.mkdir(parents=True)
    utility.write_text("  if (!out && yieldOperand.value() != forOp.getInitArgs()[yieldOperand.index()]) continue;\n"
                       "  yieldOp.setOperand(deadArgIdx, arg);\n"
                       "void populateForOpDeadArgumentElimination(RewritePatternSet &patterns) {\n"
                       "  patterns.add<ForOpDeadArgElimination>(patterns.getContext());\n}\n")
    args = ["plan", "--source", str(tree), "--llvm", "/usr/lib/llvm-22", "--cache-dir", str(tmp_path / "cache")]
    refused = run_cli(*args, cwd=tmp_path, check=False)
    err = flat(refused.stderr)
    assert refused.returncode == 2
    assert "Known problem with LLVM 22.1" in err and "(for-op-dead-arg-ping-pong)" in err
    assert "MakeRegionBranchOpSuccessorInputsDead" in err and "--no-compile-check builds it anyway" in err
    warned = run_cli(*args, "--no-compile-check", cwd=tmp_path)
    assert "Known problem" in flat(warned.stderr + warned.stdout)
