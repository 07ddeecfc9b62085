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

import contextlib
import json
import os
import re
import struct
import sys
import time
import traceback
from pathlib import Path

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


def _ws_args(m: int, n: int, k: int) -> list:
    """A (M, K), B (N, K) and C (M, N), row-major: the unit strides become constants, as at a real launch."""
    return [("a_ptr", "ptr", None), ("b_ptr", "ptr", None), ("c_ptr", "ptr:out", None),
            ("a_stride0", "int", k), ("a_stride1", "int", 1), ("b_stride0", "int", k), ("b_stride1", "int", 1),
            ("c_stride0", "int", n), ("c_stride1", "int", 1), ("M", "int", m), ("N", "int", n), ("K", "int", k)]


def ws_case_name(persistent: bool, dtype: str, tile: tuple, stages: int) -> str:
    """ws_matmul_fp16_128x256x64_s3: BLOCK_M x BLOCK_N x BLOCK_K and num_stages; "ws_persistent" for the
    persistent kernel. tritonbuild.resolve.compilecheck plans the same names."""
    return f"ws_{'persistent' if persistent else 'matmul'}_{dtype}_{'x'.join(map(str, tile))}_s{stages}"


def _ws_case(persistent: bool, dtype: str, tile: tuple, stages: int) -> dict:
    """The warp-specialized TMA matmuls of Triton's test_warp_specialization.py (3.4+: tensor descriptors made on
    the device, ``tl.range(..., warp_specialize=True)``), with both operands loaded through TMA (the only form
    Hopper warp-specializes) and the tests' sizes: 2048x2048x512, the persistent one 8192x8192x512 over 132 SMs
    (an H100's; FLATTEN is set for Blackwell targets, as the test does)."""
    block_m, block_n, block_k = tile
    constexprs = dict(num_stages=stages, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8,
                      A_USE_TMA=True, B_USE_TMA=True)
    if persistent:
        constexprs.update(NUM_SMS=132, FLATTEN="blackwell")
    size = 8192 if persistent else 2048
    return dict(kernel="ws_matmul_persistent" if persistent else "ws_matmul", dtype=dtype, out=dtype,
                args=_ws_args(size, size, 512), constexprs=constexprs, options=dict(num_warps=4),
                needs=["make_tensor_descriptor", "range:warp_specialize"])


# The tiles of the tests that failed with a d8da7c998 wheel on Debian's LLVM 22.1 (OutOfResources at launch with
# fp16, NaN with fp8) and that the official 3.6.0 wheel runs: fp16 128x256x128 is beyond 228 KiB by the tests' own
# estimate at any stage count (they skip it).
def ws_spec(name: str) -> dict | None:
    """The case a ws_* name describes (any tile and stage count: a test can plan one beyond the limits)."""
    parts = name.split("_")
    if len(parts) != 5 or parts[0] != "ws" or parts[1] not in ("matmul", "persistent") or parts[2] not in WS_TILES:
        return None
    try:
        tile = tuple(int(x) for x in parts[3].split("x"))
        stages = int(parts[4].removeprefix("s"))
    except ValueError:
        return None
    return _ws_case(parts[1] == "persistent", parts[2], tile, stages) if len(tile) == 3 else None


WS_TILES = {"fp16": ((128, 128, 128), (128, 256, 64)), "fp8": ((128, 256, 128), (128, 256, 64))}
WS_STAGES = (2, 3)
for _persistent in (False, True):
    for _dtype, _tiles in WS_TILES.items():
        for _tile in _tiles:
            for _stages in WS_STAGES:
                CASES[ws_case_name(_persistent, _dtype, _tile, _stages)] = _ws_case(_persistent, _dtype, _tile,
                                                                                   _stages)


# The warp-specialized matmuls' jit helpers, set by _ws_matmuls: Triton resolves a kernel's callees in its module's
# globals.
_tile_of = _load = None


def emit(**fields: object) -> None:
    print(json.dumps(fields, default=str), flush=True)


def define_kernels(triton, tl):
    """The kernels, written as Triton's tests and tutorials write them. Triton before 3.3 resolves a kernel's
    names (``tl``) in the module's globals, so they are put there first."""
    globals().update(triton=triton, tl=tl)
    return {"matmul": _matmul(triton, tl), **_small_kernels(triton, tl), **_ws_matmuls(triton, tl)}


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


def _ws_matmuls(triton, tl):
    """Warp-specialized matmuls through tensor descriptors made on the device, one tile per program and
    persistent (each program walks tiles NUM_SMS apart), as in Triton's test_warp_specialization.py."""

    @triton.jit
    def _tile_of(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
        group = tile_id // (GROUP_M * num_pid_n)
        first_m = group * GROUP_M
        rows = min(num_pid_m - first_m, GROUP_M)
        return first_m + (tile_id % rows), (tile_id % (GROUP_M * num_pid_n)) // rows

    @triton.jit
    def _load(desc, ptr, off0, off1, USE_TMA: tl.constexpr):
        if USE_TMA:
            return desc.load((off0, off1))
        else:  # noqa: RET505 - Triton's frontend needs both branches of a constexpr if to return
            rows = off0 + tl.arange(0, desc.block_shape[0])
            cols = off1 + tl.arange(0, desc.block_shape[1])
            mask = (rows < desc.shape[0])[:, None] & (cols < desc.shape[1])[None, :]
            return tl.load(ptr + rows[:, None] * desc.strides[0] + cols[None, :] * desc.strides[1], mask=mask)

    globals().update(_tile_of=_tile_of, _load=_load)
    return {"ws_matmul": _ws_tiled(triton, tl), "ws_matmul_persistent": _ws_persistent(triton, tl)}


def _ws_tiled(triton, tl):
    """One output tile a program; the K loop is warp-specialized (a producer loads, a consumer computes)."""

    @triton.jit
    def ws_matmul(a_ptr, b_ptr, c_ptr, a_stride0, a_stride1, b_stride0, b_stride1, c_stride0, c_stride1, M, N, K,
                  num_stages: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr, A_USE_TMA: tl.constexpr, B_USE_TMA: tl.constexpr):
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[a_stride0, a_stride1],
                                           block_shape=[BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[b_stride0, b_stride1],
                                           block_shape=[BLOCK_N, BLOCK_K])
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[c_stride0, c_stride1],
                                           block_shape=[BLOCK_M, BLOCK_N])
        pid_m, pid_n = _tile_of(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(tl.cdiv(K, BLOCK_K), warp_specialize=True, num_stages=num_stages):
            a = _load(a_desc, a_ptr, pid_m * BLOCK_M, k * BLOCK_K, A_USE_TMA)
            b = _load(b_desc, b_ptr, pid_n * BLOCK_N, k * BLOCK_K, B_USE_TMA)
            acc = tl.dot(a, b.T, acc)
        c_desc.store((pid_m * BLOCK_M, pid_n * BLOCK_N), acc.to(c_ptr.dtype.element_ty))

    return ws_matmul


def _ws_persistent(triton, tl):
    """Each program walks output tiles NUM_SMS apart; the tile loop is warp-specialized."""

    @triton.jit
    def ws_matmul_persistent(a_ptr, b_ptr, c_ptr, a_stride0, a_stride1, b_stride0, b_stride1, c_stride0,
                             c_stride1, M, N, K, num_stages: tl.constexpr, BLOCK_M: tl.constexpr,
                             BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                             A_USE_TMA: tl.constexpr, B_USE_TMA: tl.constexpr, NUM_SMS: tl.constexpr,
                             FLATTEN: tl.constexpr):
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[a_stride0, a_stride1],
                                           block_shape=[BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[b_stride0, b_stride1],
                                           block_shape=[BLOCK_N, BLOCK_K])
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[c_stride0, c_stride1],
                                           block_shape=[BLOCK_M, BLOCK_N])
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        for tile in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=FLATTEN,
                             warp_specialize=True, num_stages=num_stages):
            pid_m, pid_n = _tile_of(tile, num_pid_m, num_pid_n, GROUP_M)
            acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
            for k in range(tl.cdiv(K, BLOCK_K)):
                a = _load(a_desc, a_ptr, pid_m * BLOCK_M, k * BLOCK_K, A_USE_TMA)
                b = _load(b_desc, b_ptr, pid_n * BLOCK_N, k * BLOCK_K, B_USE_TMA)
                acc = tl.dot(a, b.T, acc)
            c_desc.store((pid_m * BLOCK_M, pid_n * BLOCK_N), acc.to(c_ptr.dtype.element_ty))

    return ws_matmul_persistent


def case_spec(kernel: str) -> dict:
    spec = CASES.get(kernel) or ws_spec(kernel)
    if spec is None:
        raise KeyError(f"no corpus case {kernel!r}")
    return spec


def launch_spec(case: dict, target: dict) -> tuple[dict, dict, dict, list]:
    """(signature, constexprs, attrs, ones) as Triton's launcher derives them from the launch arguments (3.3+'s
    convention); ``ones`` names the integer arguments specialised to the constant 1."""
    spec = case_spec(case["kernel"])
    dtype = target.get("fp8") if spec["dtype"] == "fp8" else spec["dtype"]
    out = dtype if spec["out"] == spec["dtype"] else spec["out"]
    signature: dict = {}
    constexprs: dict = {}
    divisible: list = []
    ones: list = []
    for index, (name, kind, value) in enumerate(spec["args"]):
        if kind.startswith("ptr"):
            elem = {"ptr": dtype, "ptr:out": out}.get(kind, kind.partition(":")[2])
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
        if value == "blackwell":  # the tests set FLATTEN on Blackwell only
            value = isinstance(target.get("arch"), int) and target["arch"] >= 100
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
    out.update(resources_of(getattr(compiled, "metadata", None), asm))
    return out


def resources_of(metadata, asm: dict) -> dict:
    """What a launch would ask of the device, as far as it is known without one: ``shared`` (bytes of shared memory
    or LDS, what Triton's launcher compares with the device's limit), ``tmem_size`` (Blackwell tensor-memory
    columns), ``num_warps``; from a cubin, ``regs`` (per thread) and ``frame`` (local memory a thread: spills);
    from AMD's assembly, ``vgprs`` and ``vgpr_spills``."""
    out: dict = {}
    for key in ("shared", "tmem_size", "num_warps"):
        value = metadata.get(key) if isinstance(metadata, dict) else getattr(metadata, key, None)
        if isinstance(value, int):
            out[key] = value
    cubin = asm.get("cubin")
    if isinstance(cubin, bytes):
        with contextlib.suppress(ValueError, IndexError, struct.error):  # an ELF this reader does not know
            out.update(cubin_resources(cubin))
    amdgcn = asm.get("amdgcn")
    if isinstance(amdgcn, str):
        for key, pattern in (("vgprs", r"\.vgpr_count:\s+(\d+)"), ("vgpr_spills", r"\.vgpr_spill_count:\s+(\d+)")):
            found = re.search(pattern, amdgcn)
            if found:
                out[key] = int(found.group(1))
    return out


def cubin_resources(cubin: bytes) -> dict:
    """Registers and frame size from a cubin's ``.nv.info`` attributes (EIATTR_REGCOUNT 0x2f, EIATTR_FRAME_SIZE
    0x11: each a symbol index and a value), what ``cuobjdump --dump-resource-usage`` prints as REG and STACK."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        return {}
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    entsize, count, names_at = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * entsize) for i in range(count)]
    names = headers[names_at][4]
    out: dict = {}
    for header in headers:
        name = cubin[names + header[0]:cubin.index(b"\0", names + header[0])]
        if name != b".nv.info":
            continue
        pos, end = header[4], header[4] + header[5]
        while pos + 4 <= end:
            fmt, attr, size = cubin[pos], cubin[pos + 1], struct.unpack_from("<H", cubin, pos + 2)[0]
            if fmt != 4:  # EIFMT_SVAL carries a size; the other formats are 2 or 4 bytes
                pos += 4 if fmt == 3 else 2
                continue
            if attr in (0x2F, 0x11) and size == 8:
                value = struct.unpack_from("<I", cubin, pos + 8)[0]
                key = "regs" if attr == 0x2F else "frame"
                out[key] = max(out.get(key, 0), value)
            pos += 4 + size
    return out


def _has(tl, need: str) -> bool:
    """``tl`` has the name; "range:warp_specialize": tl.range takes that keyword."""
    import inspect

    name, _, keyword = need.partition(":")
    if not hasattr(tl, name):
        return False
    return not keyword or keyword in inspect.signature(getattr(tl, name)).parameters


def run_case(triton, tl, kernels: dict, case: dict) -> None:
    case_id, target = case["id"], case["target"]
    spec = case_spec(case["kernel"])
    missing = [n for n in spec["needs"] if not _has(tl, n)]
    if missing:
        emit(event="skip", case=case_id, reason=f"this Triton's language lacks tl.{', tl.'.join(missing)}")
        return
    os.environ.update(target.get("env") or {})  # what the target's compiler reads (Intel's device arch)
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


def own_finders_only() -> None:
    """Drop the meta-path finders a .pth installed (an editable install of Triton in the interpreter's environment:
    tritonbuild's develop, setuptools', scikit-build-core's): they would import a checkout, not the wheel checked."""
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "__module__", "").startswith("_frozen_importlib")]


def use_ptxas_memo() -> None:
    """With ``TRITONBUILD_PTXAS_MEMO`` (a dir the parent made, this user's and writable by no one else), ptxas runs
    are answered from it when the same ptxas already assembled the same PTX (``ptxas_memo.py``, beside this file)."""
    import importlib.util

    memo = os.environ.pop("TRITONBUILD_PTXAS_MEMO", None)
    if not memo:
        return
    spec = importlib.util.spec_from_file_location(
        "tritonbuild_ptxas_memo", Path(__file__).resolve().with_name("ptxas_memo.py"))
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if module.usable(memo):
        module.install(memo)


def main(argv: list) -> int:
    cases = json.loads(argv[1])
    os.environ.setdefault("TRITON_ALWAYS_COMPILE", "1")
    use_ptxas_memo()
    own_finders_only()
    try:
        import triton
        import triton.language as tl

        expected = os.environ.get("TRITONBUILD_CHECKED_ROOT")
        where = os.path.realpath(triton.__file__ or "")
        if expected and not where.startswith(os.path.realpath(expected) + os.sep):
            raise ImportError(f"triton imports from {where}, not the wheel under {expected}")
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
