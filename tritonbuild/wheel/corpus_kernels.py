"""The compile-acceptance corpus, run by a wheel's own interpreter with only the wheel's ``triton`` importable.

It imports nothing of tritonbuild: ``tritonbuild.resolve.compilecheck`` chooses the cases (kernel x target), runs this
file as ``python corpus_kernels.py CASES_JSON`` and watches its output with a time limit per case. Each case is
compiled through the wheel's real pipeline (``triton.compile(ASTSource(...), target=GPUTarget(...))``) with the
specialisations Triton's launcher passes for real arguments: a pointer or an integer divisible by 16 gets
``tt.divisibility = 16``, an integer equal to 1 (a unit stride) becomes the constant 1. Without them a
kernel takes other paths through the passes (the hang of remove-layout-conversions on a Debian LLVM was only
seen with them).

Output: one JSON object a line: ``{"event": "start"|"stage"|"done", "case": ID, ...}``. ``done`` carries
``ok``, ``seconds``, ``stages`` and, on failure, ``error``; ``skip`` says why a case cannot run here.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

# Launch arguments: (name, kind, value). kind: "ptr" (a tensor of the case's dtype), "ptr:<dtype>", "int",
# "constexpr". The values are those of the tests' launches (M=1024, N=512, K=256, row-major, contiguous).
MATMUL_ARGS = [("a_ptr", "ptr", None), ("b_ptr", "ptr", None), ("c_ptr", "ptr:out", None),
               ("M", "int", 1024), ("N", "int", 512), ("K", "int", 256),
               ("stride_am", "int", 256), ("stride_ak", "int", 1), ("stride_bk", "int", 512), ("stride_bn", "int", 1),
               ("stride_cm", "int", 512), ("stride_cn", "int", 1)]

# name -> dtype, the output dtype, launch args, constexprs, options, triton.language names the kernel needs
CASES = {
    "matmul_fp16": dict(kernel="matmul", dtype="fp16", out="fp16", args=MATMUL_ARGS,
                        constexprs=dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=16, GROUP_M=8),
                        options=dict(num_warps=4, num_stages=4), needs=["dot", "cdiv"]),
    "matmul_bf16": dict(kernel="matmul", dtype="bf16", out="bf16", args=MATMUL_ARGS,
                        constexprs=dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8),
                        options=dict(num_warps=4, num_stages=2), needs=["dot", "cdiv"]),
    "matmul_fp8": dict(kernel="matmul", dtype="fp8", out="fp16", args=MATMUL_ARGS,
                       constexprs=dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8),
                       options=dict(num_warps=4, num_stages=3), needs=["dot", "cdiv"]),
    "reduction": dict(kernel="row_sum", dtype="fp32", out="fp32",
                      args=[("x_ptr", "ptr", None), ("out_ptr", "ptr", None), ("stride", "int", 1024),
                            ("n_cols", "int", 1000)],
                      constexprs=dict(BLOCK=1024), options=dict(num_warps=4), needs=["sum"]),
    "softmax": dict(kernel="softmax", dtype="fp16", out="fp16",
                    args=[("out_ptr", "ptr", None), ("in_ptr", "ptr", None), ("in_stride", "int", 784),
                          ("out_stride", "int", 784), ("n_cols", "int", 781)],
                    constexprs=dict(BLOCK=1024), options=dict(num_warps=8), needs=["max", "sum", "exp"]),
    "split_permute": dict(kernel="split_permute", dtype="fp32", out="fp32",
                          args=[("x_ptr", "ptr", None), ("out_ptr", "ptr", None)],
                          constexprs=dict(BLOCK_M=64, BLOCK_N=32), options=dict(num_warps=4),
                          needs=["split", "permute", "reshape"]),
    "atomics": dict(kernel="atomics", dtype="fp32", out="fp32",
                    args=[("x_ptr", "ptr", None), ("sum_ptr", "ptr", None), ("max_ptr", "ptr:i32", None),
                          ("n", "int", 4096)],
                    constexprs=dict(BLOCK=256), options=dict(num_warps=4), needs=["atomic_add", "atomic_max"]),
}


def emit(**fields: object) -> None:
    print(json.dumps(fields, default=str), flush=True)


def define_kernels(triton, tl):
    """The kernels, written as Triton's tests and tutorials write them. Triton before 3.3 resolves a kernel's
    names (``tl``) in the module's globals, so they are put there first."""
    globals().update(triton=triton, tl=tl)
    return {"matmul": _matmul(triton, tl), **_small_kernels(triton, tl)}


def _matmul(triton, tl):
    """The tutorial's grouped matmul: the kernel whose ttgir pipeline hangs with a mismatched LLVM."""

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (pid % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        c = accumulator.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, c, mask=c_mask)

    return matmul


def _small_kernels(triton, tl):
    """A reduction, softmax, split/permute and atomics."""

    @triton.jit
    def row_sum(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(x, axis=0))

    @triton.jit
    def softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * in_stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        y = num / tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=cols < n_cols)

    @triton.jit
    def split_permute(x_ptr, out_ptr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        offs_m = tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, 2 * BLOCK_N)
        x = tl.load(x_ptr + offs_m[:, None] * (2 * BLOCK_N) + offs_n[None, :])
        lo, hi = tl.split(tl.reshape(x, (BLOCK_M, BLOCK_N, 2)))
        y = tl.permute(lo * 2.0 + hi, (1, 0))
        offs_t = tl.arange(0, BLOCK_N)
        tl.store(out_ptr + offs_t[:, None] * BLOCK_M + offs_m[None, :], y)

    @triton.jit
    def atomics(x_ptr, sum_ptr, max_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        tl.atomic_add(sum_ptr + offs % 16, x, mask=mask)
        tl.atomic_max(max_ptr + offs % 16, x.to(tl.int32), mask=mask)

    return {"row_sum": row_sum, "softmax": softmax, "split_permute": split_permute, "atomics": atomics}


def launch_spec(case: dict, target: dict) -> tuple[dict, dict, dict, list]:
    """(signature, constexprs, attrs, ones) as Triton's launcher derives them from the launch arguments (3.3+'s
    convention); ``ones`` names the integer arguments specialised to the constant 1."""
    spec = CASES[case["kernel"]]
    dtype = target.get("fp8") if spec["dtype"] == "fp8" else spec["dtype"]
    signature: dict = {}
    constexprs: dict = {}
    divisible: list = []
    ones: list = []
    for index, (name, kind, value) in enumerate(spec["args"]):
        if kind.startswith("ptr"):
            elem = {"ptr": dtype, "ptr:out": spec["out"]}.get(kind, kind.partition(":")[2])
            signature[name] = f"*{elem}"
            divisible.append(index)  # device allocations are 256-byte aligned
        elif value == 1:
            signature[name] = "constexpr"  # the launcher specialises 1 to a constant
            constexprs[name] = 1
            ones.append(name)
        else:
            signature[name] = "i32"
            if value % 16 == 0:
                divisible.append(index)
    for name, value in spec["constexprs"].items():
        signature[name] = "constexpr"
        constexprs[name] = value
    return signature, constexprs, {(i,): [["tt.divisibility", 16]] for i in divisible}, ones


def make_source(triton, fn, signature: dict, constexprs: dict, attrs: dict, ones: list):
    """An ASTSource in this Triton's calling convention: 3.3+ (attrs by argument path, constexprs in the
    signature); 3.2 and 3.1 (a signature of the non-constexpr arguments, constants by name, an AttrsDescriptor
    with divisibility and equal-to-1 argument indices)."""
    from triton.backends.compiler import BaseBackend
    from triton.compiler import ASTSource

    if hasattr(BaseBackend, "parse_attr"):
        return ASTSource(fn, signature, constexprs, attrs)
    names = list(signature)
    sig = {n: ("i32" if n in ones else t) for n, t in signature.items() if t != "constexpr" or n in ones}
    divisible, equal_to_1 = [path[0] for path in attrs], [names.index(n) for n in ones]
    import triton.backends.compiler as backend_compiler

    if hasattr(backend_compiler, "AttrsDescriptor"):  # 3.2
        descriptor = backend_compiler.AttrsDescriptor()
        descriptor.arg_properties = {"tt.divisibility": divisible, "tt.equal_to": equal_to_1}
        descriptor._init_slots()
    else:  # 3.1
        from triton.compiler.compiler import AttrsDescriptor

        descriptor = AttrsDescriptor(divisible_by_16=set(divisible), equal_to_1=set(equal_to_1))
    return ASTSource(fn, sig, dict(constexprs), descriptor)


def make_target(triton, target: dict):
    from triton.backends.compiler import GPUTarget

    if target.get("from_driver"):
        from triton.backends import backends

        backend = backends[target["backend_name"]]
        return backend.driver().get_current_target()
    return GPUTarget(target["backend"], target["arch"], target["warp_size"])


def watch_stages(case_id: str, stages_done: list) -> object:
    """Wrap each backend's add_stages so every stage reports when it starts (a hang names its stage)."""
    from triton.backends import backends

    originals = {}
    for backend in backends.values():
        cls = backend.compiler
        original = cls.add_stages
        originals[cls] = original

        def add_stages(self, stages, options, *rest, _original=original):
            _original(self, stages, options, *rest)
            for ext, fn in list(stages.items()):
                def run(src, metadata, _fn=fn, _ext=ext):
                    emit(event="stage", case=case_id, stage=_ext)
                    out = _fn(src, metadata)
                    stages_done.append(_ext)
                    return out
                stages[ext] = run

        cls.add_stages = add_stages
    return originals


def facts_of(compiled) -> dict:
    asm = getattr(compiled, "asm", {}) or {}
    out: dict = {}
    ptx = asm.get("ptx")
    if isinstance(ptx, str):
        out["ptx_target"] = next((ln.split()[1] for ln in ptx.splitlines() if ln.startswith(".target")), None)
        out["wgmma"] = "wgmma" in ptx
        out["mma"] = "mma.sync" in ptx
    amdgcn = asm.get("amdgcn")
    if isinstance(amdgcn, str):
        out["mfma"] = "mfma" in amdgcn
    for ext, text in asm.items():
        out.setdefault("sizes", {})[ext] = len(text)
    return out


def run_case(triton, tl, kernels: dict, case: dict) -> None:
    case_id, target = case["id"], case["target"]
    spec = CASES[case["kernel"]]
    missing = [n for n in spec["needs"] if not hasattr(tl, n)]
    if missing:
        emit(event="skip", case=case_id, reason=f"this Triton's language lacks tl.{', tl.'.join(missing)}")
        return
    try:
        gpu_target = make_target(triton, target)
    except Exception as exc:  # a driver that needs its device (Intel XPU) has no target
        emit(event="skip", case=case_id, reason=f"no target without a device: {type(exc).__name__}: {exc}"[:300])
        return
    stages_done: list = []
    originals = watch_stages(case_id, stages_done)
    start = time.perf_counter()
    try:
        src = make_source(triton, kernels[spec["kernel"]], *launch_spec(case, target))
        compiled = triton.compile(src, target=gpu_target, options=dict(spec["options"]))
        emit(event="done", case=case_id, ok=True, seconds=round(time.perf_counter() - start, 3),
             stages=stages_done, facts=facts_of(compiled))
    except Exception as exc:
        emit(event="done", case=case_id, ok=False, seconds=round(time.perf_counter() - start, 3),
             stages=stages_done, error=f"{type(exc).__name__}: {exc}"[:2000],
             traceback=traceback.format_exc()[-4000:])
    finally:
        for cls, original in originals.items():
            cls.add_stages = original


def main(argv: list) -> int:
    cases = json.loads(argv[1])
    os.environ.setdefault("TRITON_ALWAYS_COMPILE", "1")
    try:
        import triton
        import triton.language as tl

        kernels = define_kernels(triton, tl)
    except Exception as exc:
        emit(event="fatal", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-4000:])
        return 1
    emit(event="ready", triton=getattr(triton, "__version__", None), file=triton.__file__)
    for case in cases:
        emit(event="start", case=case["id"])
        run_case(triton, tl, kernels, case)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
