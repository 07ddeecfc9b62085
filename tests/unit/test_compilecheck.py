"""The compile check's corpus and verdicts (pure)."""

from __future__ import annotations

from tritonbuild.resolve import compilecheck as cc
from tritonbuild.settings.model import resolve_settings


def test_gpu_backends_compile_for_three_nvidia_and_two_amd_targets() -> None:
    cases = cc.cases_for(["nvidia", "amd"])
    targets = {c.id.partition("@")[2] for c in cases}
    assert targets == {"sm_80", "sm_90a", "sm_100a", "gfx942", "gfx950"}
    ids = {c.id for c in cases}
    assert "matmul_fp16@sm_90a" in ids and "softmax@gfx942" in ids and "atomics@sm_80" in ids
    # fp8 dots exist from Hopper on and on CDNA3/4, never on Ampere
    assert "matmul_fp8@sm_80" not in ids
    assert {"matmul_fp8@sm_90a", "matmul_fp8@sm_100a", "matmul_fp8@gfx942", "matmul_fp8@gfx950"} <= ids
    fp8 = {c.id: c.target.get("fp8") for c in cases if c.kernel == "matmul_fp8"}
    assert fp8["matmul_fp8@gfx942"] == "fp8e4b8" and fp8["matmul_fp8@sm_90a"] == "fp8e4nv"


def test_other_backends_ask_their_driver_for_the_target() -> None:
    (target,) = cc.targets_for("cpu")
    assert dict(target.spec) == {"backend_name": "cpu", "from_driver": True}
    assert "matmul_fp8" not in target.kernels and "matmul_fp16" in target.kernels


def test_plan_lists_the_corpus_or_why_it_is_off() -> None:
    on = cc.plan_check(True, 30, ["amd"])
    assert on.describe().startswith("14 kernels, 30 s each; gfx942: matmul_fp16")
    off = cc.plan_check(False, 30, ["amd"], "env TRITONBUILD_COMPILE_CHECK")
    assert off.cases == () and off.describe() == "off (env TRITONBUILD_COMPILE_CHECK)"


def test_a_hang_is_named_with_its_stage_and_the_llvm() -> None:
    results = [{"case": "matmul_fp16@sm_90a", "status": "timeout", "seconds": 120.4, "stage": "ttgir"},
               {"case": "softmax@sm_90a", "status": "ok", "seconds": 0.1},
               {"case": "atomics@x", "status": "failed", "error": "RuntimeError: boom", "stage": "llir"},
               {"case": "split_permute@y", "status": "skipped", "reason": "no tl.split"}]
    assert cc.summarize(results) == {"ok": 1, "failed": 1, "timeout": 1, "skipped": 1}
    note = cc.llvm_note("0729a74e66ae" + "0" * 28, None, "22.1.8")
    text = cc.failure_message(results, llvm_note=note)
    assert "matmul_fp16@sm_90a: no result after 120 s (last stage entered: ttgir)" in text
    assert "atomics@x: RuntimeError: boom (in stage llir)" in text
    assert "1 failed and 1 timed out of 4" in text and "not the source's pin 0729a74e66ae" in text
    assert cc.llvm_note("a" * 40, True, "22.1.8") is None


def test_settings_agree_from_flag_env_and_recipe() -> None:
    assert resolve_settings({}, {})["compile_check"].value is True
    off = resolve_settings({}, {"TRITONBUILD_COMPILE_CHECK": "0"})["compile_check"]
    assert (off.value, off.origin) == (False, "env TRITONBUILD_COMPILE_CHECK")
    back = resolve_settings({"compile_check": True}, {"TRITONBUILD_COMPILE_CHECK": "0"})["compile_check"]
    assert (back.value, back.origin) == (True, "cli --compile-check/--no-compile-check")
    recipe = resolve_settings({}, {}, {"require_pinned_llvm": True}, "recipe nightly")["require_pinned_llvm"]
    assert (recipe.value, recipe.origin) == (True, "recipe nightly")
    assert resolve_settings({}, {"TRITONBUILD_COMPILE_CHECK_TIMEOUT": "7"})["compile_check_timeout"].value == 7


def test_targets_a_triton_version_does_not_know_are_left_out() -> None:
    # Blackwell and gfx950 came with 3.3: the official 3.1.0 and 3.2.0 wheels abort compiling for them
    old = {c.id.partition("@")[2] for c in cc.cases_for(["nvidia", "amd"], "3.2.0")}
    assert old == {"sm_80", "sm_90a", "gfx942"}
    assert {c.id.partition("@")[2] for c in cc.cases_for(["nvidia"], "3.7.0+git1234")} == {"sm_80", "sm_90a",
                                                                                            "sm_100a"}
    assert len(cc.cases_for(["nvidia", "amd"], None)) == 34  # unknown: every target
