"""Compile acceptance (pure): which real kernels a wheel must compile, for which targets, and what the results mean.

A wheel that imports can still be broken for the most common kernel there is: a d8da7c998 wheel built against
Debian's LLVM 22.1.8 hung in ``tritongpu-remove-layout-conversions`` on the tests' fp16 matmul, but only with
the specialisations Triton's launcher passes for real arguments (docs/real-trees.md). So after the smoke import,
``build`` compiles a small corpus (``corpus_kernels.py``: matmul fp16/bf16/fp8, a reduction, softmax, a
``tl.split``/``tl.permute`` epilogue, atomics, and from Triton 3.4 on warp-specialized TMA matmuls for Hopper
and Blackwell) through the wheel's own pipeline for each selected backend's targets, each case under a time limit;
a timeout or an error keeps the wheel out of the output dir. So does a kernel that compiles but needs more shared
memory (tensor memory, registers) than its target has: Triton raises OutOfResources only at launch, and a
d8da7c998 wheel on LLVM 22.1.8 needed 328248 bytes where an H100 has 232448 (issue #39), so each compiled case's
metadata is checked against ``LIMITS`` here, without a GPU.
``tritonbuild.wheel.compilecheck_run`` runs it; ``verify --compile`` runs it on any wheel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tritonbuild.plan import Case, CompileCheckPlan
from tritonbuild.printable import shorten

KERNELS = ("matmul_fp16", "matmul_bf16", "matmul_fp8", "reduction", "softmax", "split_permute", "atomics")
NO_FP8 = tuple(k for k in KERNELS if k != "matmul_fp8")


def ws_name(persistent: bool, dtype: str, tile: tuple[int, int, int], stages: int) -> str:
    """The corpus's name of a warp-specialized TMA matmul (corpus_kernels.ws_case_name spells it the same)."""
    return f"ws_{'persistent' if persistent else 'matmul'}_{dtype}_{'x'.join(map(str, tile))}_s{stages}"


# Warp-specialized TMA matmuls (Triton's test_warp_specialization.py), BLOCK_M x BLOCK_N x BLOCK_K: the tiles whose
# tests failed with a d8da7c998 wheel on Debian's LLVM 22.1.8 (issue #39: fp16 needed 328248 and 262712 bytes of
# shared memory, fp8 computed NaN) and that the official 3.6.0 wheel runs on an H100. fp16 128x256x128 is left out:
# the tests skip it as beyond 228 KiB at any stage count.
WS_TILES: dict[str, tuple[tuple[int, int, int], ...]] = {"fp16": ((128, 128, 128), (128, 256, 64)),
                                                         "fp8": ((128, 256, 128), (128, 256, 64))}
WS_KERNELS = tuple(ws_name(p, d, t, s) for p in (False, True) for d, tiles in WS_TILES.items() for t in tiles
                   for s in (2, 3))
WS_SINCE = (3, 4)  # tensor descriptors made on the device and tl.range(warp_specialize=...) came with 3.4


@dataclass(frozen=True)
class Target:
    label: str  # sm_90a, gfx942, or the backend name for targets its driver reports
    spec: tuple[tuple[str, Any], ...]  # what corpus_kernels.py builds a GPUTarget from
    kernels: tuple[str, ...]
    since: tuple[int, int] = (0, 0)  # the first Triton that compiles for it


def _gpu(backend: str, arch: int | str, warp: int, label: str, fp8: str | None,
         since: tuple[int, int] = (0, 0), ws: bool = False) -> Target:
    spec: dict[str, Any] = {"backend": backend, "arch": arch, "warp_size": warp}
    if fp8:
        spec["fp8"] = fp8
    return Target(label, tuple(sorted(spec.items())), (KERNELS if fp8 else NO_FP8) + (WS_KERNELS if ws else ()),
                  since)


# Fixed targets of the GPU backends (a build machine has no GPU). fp8 dots: e4m3 on Hopper and Blackwell and on
# gfx950, the fnuz e4m3 (fp8e4b8) on gfx942; Ampere has none. The official 3.6.0 and 3.3.1 wheels compile every
# case; 3.1.0 and 3.2.0 every case for sm_80, sm_90a and gfx942, and abort on sm_100 and gfx950 (not supported).
GPU_TARGETS: dict[str, tuple[Target, ...]] = {
    "nvidia": (_gpu("cuda", 80, 32, "sm_80", None), _gpu("cuda", 90, 32, "sm_90a", "fp8e4nv", ws=True),
               _gpu("cuda", 100, 32, "sm_100a", "fp8e4nv", since=(3, 3), ws=True)),
    "amd": (_gpu("hip", "gfx942", 64, "gfx942", "fp8e4b8"),
            _gpu("hip", "gfx950", 64, "gfx950", "fp8e4nv", since=(3, 3))),
}
# Intel's XPU backend (intel/intel-xpu-backend-for-triton): its driver reports a target only with a device, so a
# Ponte Vecchio's properties as its compiler's parse_target reads them; without TRITON_INTEL_DEVICE_ARCH its
# compiler looks for SYCL's headers to learn the device. 0b37620ed7 lowers each case to SPIR-V (docs/real-trees.md).
PVC = (("architecture", 0), ("name", "pvc"), ("driver_version", "1.6.33578"), ("sub_group_sizes", (16, 32)),
       ("max_work_group_size", 1024), ("max_num_sub_groups", 64), ("has_fp64", True),
       ("has_subgroup_2d_block_io", True), ("has_subgroup_matrix_multiply_accumulate", True),
       ("has_subgroup_matrix_multiply_accumulate_tensor_float32", True), ("has_16bit_atomics", True),
       ("has_bfloat16_conversion", True))
PVC_ENV = (("TRITON_INTEL_DEVICE_ARCH", "pvc"),)
GPU_TARGETS["intel"] = (Target("pvc", (("arch", PVC), ("backend", "xpu"), ("env", PVC_ENV), ("warp_size", 16)),
                               NO_FP8),)


@dataclass(frozen=True)
class Limits:
    """What a launch may ask of one target's device; Triton checks these only at launch (``CompiledKernel.
    _init_handles``: OutOfResources), so a machine without a GPU checks them here against the compiled metadata."""
    shared: int  # bytes of shared memory (LDS on AMD) a block may use
    tmem_columns: int | None = None  # Blackwell tensor memory, columns
    registers: int | None = None  # 32-bit registers a block may use (threads x registers a thread)


# NVIDIA: the opt-in shared memory a block may use (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, what
# Triton's driver.c reads and its launcher compares with metadata.shared): 163 KiB on compute capability 8.0 and
# 227 KiB on 9.0 and 10.0 (CUDA C Programming Guide, "Technical Specifications per Compute Capability"; an H100's
# OutOfResources says "Hardware limit: 232448", issue #39); 64 Ki registers a block on all three (same table; the
# driver's max threads a block, which Triton's launcher checks, follows from it). Tensor memory: 512 columns, the
# number Triton's compiler.py checks (max_tmem_size). AMD: the LDS of Triton's own
# third_party/amd/lib/TritonAMDGPUToLLVM/TargetInfo.cpp getSharedMemorySize (160 KiB on CDNA4 = gfx950, else
# 64 KiB; python/triton/_internal_testing.py get_hip_lds_size says the same).
LIMITS: dict[str, Limits] = {
    "sm_80": Limits(shared=166912, registers=65536),
    "sm_90a": Limits(shared=232448, registers=65536),
    "sm_100a": Limits(shared=232448, tmem_columns=512, registers=65536),
    "gfx942": Limits(shared=65536),
    "gfx950": Limits(shared=163840),
}


def over_limits(facts: Mapping[str, Any], label: str) -> list[str]:
    """What a compiled kernel needs beyond ``label``'s limits, each as "needs N ..., LABEL has M"; [] when it fits.
    Raises KeyError for a target without known limits (``judge`` says "limit unknown" instead)."""
    limits = LIMITS[label]
    out = []
    shared = facts.get("shared")
    if isinstance(shared, int) and shared > limits.shared:
        out.append(f"needs {shared} bytes of shared memory, {label} has {limits.shared}")
    tmem = facts.get("tmem_size")
    if limits.tmem_columns is not None and isinstance(tmem, int) and tmem > limits.tmem_columns:
        out.append(f"needs {tmem} columns of tensor memory, {label} has {limits.tmem_columns}")
    regs, warps = facts.get("regs"), facts.get("num_warps")
    if limits.registers is not None and isinstance(regs, int) and isinstance(warps, int):
        per_block = -(-regs // 8) * 8 * 32 * warps  # registers are allocated 8 a thread at a time
        if per_block > limits.registers:
            out.append(f"needs {per_block} registers a block ({regs} a thread, {warps} warps), {label} has "
                       f"{limits.registers}")
    return out


def judge(result: Mapping[str, Any], label: str) -> dict[str, Any]:
    """A compiled case checked against its target's launch limits: over them it FAILED (the launch would raise
    OutOfResources: it is what users would hit); a target without known limits, or a compile whose metadata has
    no shared-memory size, keeps its ``ok`` with a ``limits`` note saying the limit was not checked."""
    out = dict(result)
    if out.get("status") != "ok":
        return out
    facts = out.get("facts") or {}
    out["limits_checked"] = label in LIMITS and isinstance(facts.get("shared"), int)
    if label not in LIMITS:
        out["limits"] = f"limit unknown for {label}"
    elif not isinstance(facts.get("shared"), int):
        out["limits"] = "limit unchecked: the compiled metadata has no shared-memory size"
    elif over := over_limits(facts, label):
        out.update(status="failed", stage="launch limits",
                   error="; ".join(over) + " (Triton raises OutOfResources when it is launched)")
    else:
        out["limits"] = f"{facts['shared']} of {LIMITS[label].shared} bytes of shared memory"
    return out


def unchecked(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Compiled cases whose launch limits could not be checked."""
    return [r for r in results if r["status"] == "ok" and not r.get("limits_checked")]


def _version(text: str | None) -> tuple[int, int] | None:
    found = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def targets_for(backend: str, triton_version: str | None = None) -> tuple[Target, ...]:
    """The targets a backend's cases compile for: fixed ones for nvidia and amd (those this Triton version knows),
    else the one its driver reports (CPU backends such as triton-cpu's and triton-shared's answer without a
    device)."""
    if backend in GPU_TARGETS:
        version = _version(triton_version)
        return tuple(t for t in GPU_TARGETS[backend] if version is None or version >= t.since)
    spec = (("backend_name", backend), ("from_driver", True))
    return (Target(backend, spec, NO_FP8),)


def kernel_since(kernel: str) -> tuple[int, int]:
    """The first Triton whose language has what the kernel is written with."""
    return WS_SINCE if kernel.startswith("ws_") else (0, 0)


def cases_for(backends: Iterable[str], triton_version: str | None = None) -> tuple[Case, ...]:
    version = _version(triton_version)
    out = []
    for backend in backends:
        for target in targets_for(backend, triton_version):
            spec = {k: dict(v) if k in ("arch", "env") and isinstance(v, tuple) else v for k, v in target.spec}
            out += [Case(f"{kernel}@{target.label}", kernel, backend, spec) for kernel in target.kernels
                    if version is None or version >= kernel_since(kernel)]
    return tuple(out)


def plan_check(enabled: bool, timeout: int, backends: Sequence[str], origin: str = "cli --no-compile-check",
               triton_version: str | None = None) -> CompileCheckPlan:
    if not enabled:
        return CompileCheckPlan(False, timeout, (), why_off=origin)
    return CompileCheckPlan(True, timeout, cases_for(backends, triton_version))


STATUSES = ("ok", "failed", "timeout", "skipped")


def summarize(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Cases by status; "limit unknown" (only when some) counts compiled cases whose launch limits were not
    checked."""
    counts = dict.fromkeys(STATUSES, 0)
    for r in results:
        counts[r["status"]] += 1
    if n := len(unchecked(results)):
        counts["limit unknown"] = n
    return counts


def counts_line(counts: Mapping[str, int], seconds: float | None = None) -> str:
    """"N of M kernels compiled [in S s]", how many were skipped and how many compiled without a known launch limit,
    for the build summary and verify."""
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    skipped = f", {counts['skipped']} skipped" if counts.get("skipped") else ""
    unknown = f", {counts['limit unknown']} with no launch limit checked" if counts.get("limit unknown") else ""
    total = sum(counts.get(k, 0) for k in STATUSES)
    return f"{counts['ok']} of {total} kernels compiled{took}{skipped}{unknown}"


def failures(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in results if r["status"] in ("failed", "timeout")]


def describe_result(r: Mapping[str, Any]) -> str:
    """One line for a case: what happened and, for a hang or an error, where."""
    if r["status"] == "ok":
        return f"{r['case']}: ok in {r.get('seconds', 0):.2f} s" + (f" ({r['limits']})" if r.get("limits") else "")
    if r["status"] == "skipped":
        return f"{r['case']}: skipped ({r.get('reason')})"
    stage = r.get("stage") or "before the first stage"
    if r["status"] == "timeout":
        return f"{r['case']}: no result after {r.get('seconds', 0):.0f} s (last stage entered: {stage})"
    return f"{r['case']}: {shorten(str(r.get('error')), 1000)} (in stage {stage})"


def describe_failures(bad: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per way of failing: cases that failed with the same error in the same stage (a broken backend
    module fails every case of its targets alike) are named together after the error, once."""
    same: dict[tuple[str, str], list[str]] = {}
    for r in bad:
        if r["status"] == "failed":
            same.setdefault((str(r.get("error")), r.get("stage") or "before the first stage"), []).append(r["case"])
    lines = [describe_result(r) for r in bad if r["status"] != "failed"]
    for (error, stage), cases in same.items():
        lines.append(describe_result({"case": cases[0], "status": "failed", "error": error, "stage": stage}) if
                     len(cases) == 1 else f"{len(cases)} cases ({', '.join(cases)}): {shorten(error, 1000)} (in stage "
                     f"{stage})")
    return lines


def failure_message(results: Sequence[Mapping[str, Any]], *, llvm_note: str | None = None) -> str:
    bad = failures(results)
    counts = summarize(results)
    found = describe_failures(bad)
    lines = "; ".join(found[:6]) + (f"; and {len(found) - 6} more" if len(found) > 6 else "")
    text = (f"The wheel imports but does not compile real kernels: {counts['failed']} failed and {counts['timeout']} "
            f"timed out of {len(results)} ({lines}). The wheel was not written to the output dir.")
    if any(r.get("stage") == "launch limits" for r in bad):
        text += (" A kernel that compiles but needs more than its target has would raise OutOfResources at every "
                 "launch: the same source and tiles fit with a good wheel (the official one for comparison).")
    if llvm_note:
        text += f" {llvm_note}"
    return text + (" `tritonbuild verify --compile WHEEL` runs the same check on any wheel (the official one "
                   "for comparison); --no-compile-check skips it.")


def llvm_note(pinned: str, is_pinned: bool | None, version: str | None) -> str | None:
    """What to tell the user about the LLVM when the check fails on a build against another LLVM."""
    if is_pinned:
        return None
    return (f"This wheel was built against LLVM {version or '?'}, not the source's pin {pinned[:12]}: a pass that "
            "hangs or fails only here usually comes from MLIR behaviour that changed between the two. Build "
            "against the pinned LLVM (`tritonbuild llvm build` or `--llvm download`) to compare.")
