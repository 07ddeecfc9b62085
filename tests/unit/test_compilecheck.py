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
    # the ok case was never checked against a launch limit: the counts say so
    assert cc.summarize(results) == {"ok": 1, "failed": 1, "timeout": 1, "skipped": 1, "limit unknown": 1}
    note = cc.llvm_note("0729a74e66ae" + "0" * 28, None, "22.1.8")
    text = cc.failure_message(results, llvm_note=note)
    assert "matmul_fp16@sm_90a: no result after 120 s (last stage entered: ttgir)" in text
    assert "atomics@x: RuntimeError: boom (in stage llir)" in text
    assert "1 failed and 1 timed out of 4" in text and "not the source's pin 0729a74e66ae" in text
    assert cc.llvm_note("a" * 40, True, "22.1.8") is None


def test_settings_agree_from_flag_env_and_recipe() -> None:
    assert resolve_settings({}, {}).compile_check is True
    off = resolve_settings({}, {"TRITONBUILD_COMPILE_CHECK": "0"})
    assert (off.compile_check, off.origin("compile_check")) == (False, "env TRITONBUILD_COMPILE_CHECK")
    back = resolve_settings({"compile_check": True}, {"TRITONBUILD_COMPILE_CHECK": "0"})
    assert (back.compile_check, back.origin("compile_check")) == (True, "cli --compile-check/--no-compile-check")
    recipe = resolve_settings({}, {}, {"require_pinned_llvm": True}, "recipe nightly")
    assert (recipe.require_pinned_llvm, recipe.origin("require_pinned_llvm")) == (True, "recipe nightly")
    assert resolve_settings({}, {"TRITONBUILD_COMPILE_CHECK_TIMEOUT": "7"}).compile_check_timeout == 7


def test_targets_a_triton_version_does_not_know_are_left_out() -> None:
    # Blackwell and gfx950 came with 3.3: the official 3.1.0 and 3.2.0 wheels abort compiling for them
    old = {c.id.partition("@")[2] for c in cc.cases_for(["nvidia", "amd"], "3.2.0")}
    assert old == {"sm_80", "sm_90a", "gfx942"}
    assert {c.id.partition("@")[2] for c in cc.cases_for(["nvidia"], "3.7.0+git1234")} == {"sm_80", "sm_90a",
                                                                                            "sm_100a"}
    assert len(cc.cases_for(["nvidia", "amd"], None)) == 34 + 32  # unknown: every target and kernel


def test_warp_specialized_matmuls_are_planned_for_hopper_and_blackwell_from_3_4() -> None:
    ids = {c.id for c in cc.cases_for(["nvidia", "amd"], "3.6.0")}
    ws = {i for i in ids if i.startswith("ws_")}
    assert len(ws) == 32 and {i.partition("@")[2] for i in ws} == {"sm_90a", "sm_100a"}
    # the tiles and stages of issue #39's failing tests, persistent and not, fp16 and fp8
    assert {"ws_matmul_fp16_128x128x128_s2@sm_90a", "ws_persistent_fp16_128x256x64_s3@sm_90a",
            "ws_matmul_fp8_128x256x128_s3@sm_100a", "ws_persistent_fp8_128x256x64_s2@sm_100a"} <= ws
    assert cc.ws_name(True, "fp16", (128, 256, 64), 3) == "ws_persistent_fp16_128x256x64_s3"
    # before 3.4 the language has no device-side tensor descriptors nor tl.range(warp_specialize=...)
    assert not [c for c in cc.cases_for(["nvidia"], "3.3.1") if c.kernel.startswith("ws_")]
    assert len([c for c in cc.cases_for(["nvidia"], "3.4.0") if c.kernel.startswith("ws_")]) == 32


def _compiled(case: str, **facts: int) -> dict:
    return {"case": case, "status": "ok", "seconds": 0.5, "facts": facts}


def test_a_kernel_over_its_targets_shared_memory_fails_naming_both_numbers() -> None:
    # what the d8da7c998 wheel on LLVM 22.1.8 needed on an H100 (issue #39), against the official wheel's 164216
    over = cc.judge(_compiled("ws_matmul_fp16_128x128x128_s2@sm_90a", shared=328248, num_warps=12, regs=168),
                    "sm_90a")
    assert over["status"] == "failed" and over["stage"] == "launch limits"
    assert "needs 328248 bytes of shared memory, sm_90a has 232448" in over["error"]
    assert "OutOfResources" in over["error"]
    assert cc.failures([over]) == [over]
    text = cc.failure_message([over])
    assert "ws_matmul_fp16_128x128x128_s2@sm_90a: needs 328248 bytes of shared memory, sm_90a has 232448" in text
    assert "would raise OutOfResources at every launch" in text
    # each target has its own limit: what fits a Hopper does not fit an A100 or an MI300
    assert cc.judge(_compiled("x@sm_80", shared=200000), "sm_80")["error"].startswith(
        "needs 200000 bytes of shared memory, sm_80 has 166912")
    assert "gfx942 has 65536" in cc.judge(_compiled("x@gfx942", shared=65537), "gfx942")["error"]
    assert cc.judge(_compiled("x@gfx950", shared=65537), "gfx950")["status"] == "ok"


def test_a_kernel_within_its_limits_passes_and_says_by_how_much() -> None:
    at = cc.judge(_compiled("ws@sm_100a", shared=232448, tmem_size=512, regs=255, num_warps=8), "sm_100a")
    assert at["status"] == "ok" and at["limits_checked"] is True
    assert at["limits"] == "232448 of 232448 bytes of shared memory"
    assert cc.describe_result(at) == "ws@sm_100a: ok in 0.50 s (232448 of 232448 bytes of shared memory)"
    assert cc.summarize([at]) == {"ok": 1, "failed": 0, "timeout": 0, "skipped": 0}


def test_tensor_memory_and_registers_are_launch_limits_too() -> None:
    tmem = cc.judge(_compiled("x@sm_100a", shared=1024, tmem_size=640), "sm_100a")
    assert tmem["status"] == "failed" and "needs 640 columns of tensor memory, sm_100a has 512" in tmem["error"]
    # 200 registers a thread for 12 warps: 76800 of a block's 65536
    regs = cc.judge(_compiled("x@sm_90a", shared=1024, regs=200, num_warps=12), "sm_90a")
    assert "needs 76800 registers a block (200 a thread, 12 warps), sm_90a has 65536" in regs["error"]
    # registers are allocated 8 a thread at a time: 255 a thread for 8 warps is exactly 65536
    assert cc.judge(_compiled("x@sm_100a", shared=1, regs=255, num_warps=8), "sm_100a")["status"] == "ok"
    # failures and hangs are left as they are
    hang = {"case": "x@sm_90a", "status": "timeout", "seconds": 3.0, "stage": "ttgir"}
    assert cc.judge(hang, "sm_90a") == hang


def test_a_target_without_a_known_limit_is_not_silently_passed() -> None:
    plugin = cc.judge(_compiled("reduction@stuck", shared=10**9), "stuck")
    assert plugin["status"] == "ok" and plugin["limits"] == "limit unknown for stuck"
    assert plugin["limits_checked"] is False
    assert cc.describe_result(plugin).endswith("(limit unknown for stuck)")
    no_size = cc.judge({"case": "matmul_fp16@sm_90a", "status": "ok", "seconds": 0.1}, "sm_90a")
    assert no_size["limits"] == "limit unchecked: the compiled metadata has no shared-memory size"
    checked = cc.judge(_compiled("softmax@sm_90a", shared=32), "sm_90a")
    counts = cc.summarize([plugin, no_size, checked])
    assert counts == {"ok": 3, "failed": 0, "timeout": 0, "skipped": 0, "limit unknown": 2}
    assert cc.counts_line(counts, 1.25) == "3 of 3 kernels compiled in 1.2 s, 2 with no launch limit checked"


def test_the_corpus_script_builds_warp_specialized_cases_as_a_launch_would() -> None:
    from tritonbuild.wheel import corpus_kernels as ck

    assert set(cc.WS_KERNELS) <= set(ck.CASES)  # the plan's names are the script's
    hopper = dict(cc.GPU_TARGETS["nvidia"][1].spec)
    blackwell = dict(cc.GPU_TARGETS["nvidia"][2].spec)
    case = {"kernel": "ws_persistent_fp8_128x256x64_s3"}
    signature, constexprs, attrs, ones = ck.launch_spec(case, blackwell)
    assert attrs[(0,)] == [["tt.divisibility", 16]]  # pointers are 16-byte aligned
    assert signature["a_ptr"] == signature["c_ptr"] == "*fp8e4nv"  # fp8 in and out, as the test's USE_FP8
    assert constexprs["FLATTEN"] is True and ck.launch_spec(case, hopper)[1]["FLATTEN"] is False
    assert constexprs["num_stages"] == 3 and (constexprs["BLOCK_M"], constexprs["BLOCK_N"]) == (128, 256)
    assert ones == ["a_stride1", "b_stride1", "c_stride1"] and signature["K"] == "i32"
    # any tile and stage count can be asked for by name (a test plans one beyond the limits); others cannot
    assert ck.case_spec("ws_matmul_fp16_128x256x128_s6")["constexprs"]["num_stages"] == 6
    for bad in ("ws_matmul_fp32_1x1x1_s2", "ws_matmul_fp16_128x256_s2", "ws_other_fp16_1x1x1_s2", "nope"):
        assert ck.ws_spec(bad) is None


def _cubin(regs: int, frame: int) -> bytes:
    """A minimal ELF64 with a .nv.info section holding EIATTR_REGCOUNT and EIATTR_FRAME_SIZE, as ptxas writes."""
    import struct

    names = b"\0.shstrtab\0.nv.info\0"
    info = (struct.pack("<BBHII", 4, 0x2F, 8, 10, regs) + struct.pack("<BBH", 3, 0x50, 0)
            + struct.pack("<BBHII", 4, 0x11, 8, 10, frame))
    data_at = 64
    shoff = data_at + len(names) + len(info)
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64,
                                                                      0, 0, 64, 3, 1)
    sections = [bytes(64),
                struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, data_at, len(names), 0, 0, 1, 0),
                struct.pack("<IIQQQQIIQQ", 11, 0x70000000, 0, 0, data_at + len(names), len(info), 0, 0, 4, 0)]
    return header + names + info + b"".join(sections)


def test_registers_and_spills_are_read_from_the_cubin() -> None:
    from tritonbuild.wheel import corpus_kernels as ck

    assert ck.cubin_resources(_cubin(174, 0)) == {"regs": 174, "frame": 0}
    assert ck.cubin_resources(b"not an elf") == {}
    facts = ck.resources_of({"shared": 164216, "num_warps": 12, "name": "k"}, {"cubin": _cubin(168, 16)})
    assert facts == {"shared": 164216, "num_warps": 12, "regs": 168, "frame": 16}
    amd = ck.resources_of(None, {"amdgcn": "    .vgpr_count:     152\n    .vgpr_spill_count: 3\n"})
    assert amd == {"vgprs": 152, "vgpr_spills": 3}


def test_intel_has_a_fixed_xpu_target_with_the_device_arch_its_compiler_reads() -> None:
    """Intel's driver reports a target only with a device, so its cases were all skipped at build time (0b37620ed7:
    66 of 72 compiled, the 6 intel ones skipped). A Ponte Vecchio's properties and TRITON_INTEL_DEVICE_ARCH (the
    child's environment drops TRITON_*; without it the compiler looks for SYCL's headers) make them compile."""
    import json

    cases = cc.cases_for(["intel"])
    assert [c.id for c in cases] == [f"{k}@pvc" for k in cc.NO_FP8]
    target = cases[0].target
    assert target["backend"] == "xpu" and target["warp_size"] == 16
    assert target["env"] == {"TRITON_INTEL_DEVICE_ARCH": "pvc"}
    assert target["arch"]["sub_group_sizes"] == (16, 32) and target["arch"]["has_subgroup_2d_block_io"] is True
    assert json.loads(json.dumps([c.to_json() for c in cases]))[0]["target"]["arch"]["name"] == "pvc"
    assert cc.cases_for(["nvidia"])[0].target == {"arch": 80, "backend": "cuda", "warp_size": 32}


def test_cases_failing_alike_are_named_together_after_their_error_once() -> None:
    """Review 51: a broken backend module failed 16 cases alike and the build's error repeated its error 16 times."""
    error = "ImportError: cannot import name 'x' from 'triton.backends.nvidia.compiler'"
    alike = [{"case": f"{k}@sm_90a", "status": "failed", "error": error, "stage": "ttir"} for k in ("a", "b", "c")]
    other = {"case": "d@sm_90a", "status": "failed", "error": "RuntimeError: boom", "stage": "llir"}
    hang = {"case": "e@sm_90a", "status": "timeout", "seconds": 120.0, "stage": "ttgir"}
    text = cc.failure_message([*alike, other, hang, {"case": "f@x", "status": "ok", "seconds": 0.1}])
    assert text.count(error) == 1 and f"3 cases (a@sm_90a, b@sm_90a, c@sm_90a): {error} (in stage ttir)" in text
    assert "d@sm_90a: RuntimeError: boom (in stage llir)" in text and "e@sm_90a: no result after 120 s" in text
    assert "4 failed and 1 timed out of 6" in text
    assert cc.describe_failures([other]) == [cc.describe_result(other)]


def test_a_huge_error_is_quoted_cut_saying_how_much_was_left_out() -> None:
    """Review 51: an import error quoting 300 KB went to the terminal whole, once per case."""
    huge = {"case": "a@sm_90a", "status": "failed", "error": "ImportError: " + "x" * 300_000, "stage": "ttir"}
    text = cc.failure_message([huge, {**huge, "case": "b@sm_90a"}])
    assert len(text) < 5000 and "[... 299013 more characters]" in text
