"""Compile acceptance (pure): which real kernels a wheel must compile, for which targets, and what the results mean.

A wheel that imports can still be broken for the most common kernel there is: a d8da7c998 wheel built against
Debian's LLVM 22.1.8 hung in ``tritongpu-remove-layout-conversions`` on the tests' fp16 matmul, but only with
the specialisations Triton's launcher passes for real arguments (docs/real-trees.md). So after the smoke import,
``build`` compiles a small corpus (``corpus_kernels.py``: matmul fp16/bf16/fp8, a reduction, softmax, a
``tl.split``/``tl.permute`` epilogue, atomics) through the wheel's own pipeline for each selected backend's
targets, each case under a time limit; a timeout or an error keeps the wheel out of the output dir.
``tritonbuild.wheel.compilecheck_run`` runs it; ``verify --compile`` runs it on any wheel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tritonbuild.plan import Case, CompileCheckPlan

KERNELS = ("matmul_fp16", "matmul_bf16", "matmul_fp8", "reduction", "softmax", "split_permute", "atomics")
NO_FP8 = tuple(k for k in KERNELS if k != "matmul_fp8")


@dataclass(frozen=True)
class Target:
    label: str  # sm_90a, gfx942, or the backend name for targets its driver reports
    spec: tuple[tuple[str, Any], ...]  # what corpus_kernels.py builds a GPUTarget from
    kernels: tuple[str, ...]
    since: tuple[int, int] = (0, 0)  # the first Triton that compiles for it


def _gpu(backend: str, arch: int | str, warp: int, label: str, fp8: str | None,
         since: tuple[int, int] = (0, 0)) -> Target:
    spec: dict[str, Any] = {"backend": backend, "arch": arch, "warp_size": warp}
    if fp8:
        spec["fp8"] = fp8
    return Target(label, tuple(sorted(spec.items())), KERNELS if fp8 else NO_FP8, since)


# Fixed targets of the GPU backends (a build machine has no GPU). fp8 dots: e4m3 on Hopper and Blackwell and on
# gfx950, the fnuz e4m3 (fp8e4b8) on gfx942; Ampere has none. The official 3.6.0 and 3.3.1 wheels compile every
# case; 3.1.0 and 3.2.0 every case for sm_80, sm_90a and gfx942, and abort on sm_100 and gfx950 (not supported).
GPU_TARGETS: dict[str, tuple[Target, ...]] = {
    "nvidia": (_gpu("cuda", 80, 32, "sm_80", None), _gpu("cuda", 90, 32, "sm_90a", "fp8e4nv"),
               _gpu("cuda", 100, 32, "sm_100a", "fp8e4nv", since=(3, 3))),
    "amd": (_gpu("hip", "gfx942", 64, "gfx942", "fp8e4b8"),
            _gpu("hip", "gfx950", 64, "gfx950", "fp8e4nv", since=(3, 3))),
}


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


def cases_for(backends: Iterable[str], triton_version: str | None = None) -> tuple[Case, ...]:
    out = []
    for backend in backends:
        for target in targets_for(backend, triton_version):
            out += [Case(f"{kernel}@{target.label}", kernel, backend, dict(target.spec)) for kernel in target.kernels]
    return tuple(out)


def plan_check(enabled: bool, timeout: int, backends: Sequence[str], origin: str = "cli --no-compile-check",
               triton_version: str | None = None) -> CompileCheckPlan:
    if not enabled:
        return CompileCheckPlan(False, timeout, (), why_off=origin)
    return CompileCheckPlan(True, timeout, cases_for(backends, triton_version))


def summarize(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    counts = {"ok": 0, "failed": 0, "timeout": 0, "skipped": 0}
    for r in results:
        counts[r["status"]] += 1
    return counts


def counts_line(counts: Mapping[str, int], seconds: float | None = None) -> str:
    """"N of M kernels compiled [in S s]" and how many were skipped, for the build summary and verify."""
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    skipped = f", {counts['skipped']} skipped" if counts.get("skipped") else ""
    return f"{counts['ok']} of {sum(counts.values())} kernels compiled{took}{skipped}"


def failures(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in results if r["status"] in ("failed", "timeout")]


def describe_result(r: Mapping[str, Any]) -> str:
    """One line for a case: what happened and, for a hang or an error, where."""
    if r["status"] == "ok":
        return f"{r['case']}: ok in {r.get('seconds', 0):.2f} s"
    if r["status"] == "skipped":
        return f"{r['case']}: skipped ({r.get('reason')})"
    stage = r.get("stage") or "before the first stage"
    if r["status"] == "timeout":
        return f"{r['case']}: no result after {r.get('seconds', 0):.0f} s (last stage entered: {stage})"
    return f"{r['case']}: {r.get('error')} (in stage {stage})"


def failure_message(results: Sequence[Mapping[str, Any]], *, llvm_note: str | None = None) -> str:
    bad = failures(results)
    counts = summarize(results)
    lines = "; ".join(describe_result(r) for r in bad[:6]) + (f"; and {len(bad) - 6} more" if len(bad) > 6 else "")
    text = (f"The wheel imports but does not compile real kernels: {counts['failed']} failed and {counts['timeout']} "
            f"timed out of {len(results)} ({lines}). The wheel was not written to the output dir.")
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
