"""GPU acceptance of a tritonbuild wheel: three kernels on a real NVIDIA GPU, checked against the CPU.

Runs with nothing but the wheel's ``triton`` on ``sys.path``, a CPython of the wheel's version, a C compiler (the
nvidia driver compiles its launcher at first launch) and the CUDA driver (``libcuda.so.1``). Triton's CUDA driver
asks torch for the device, its capability and the current stream, and recognises tensors as ``torch.Tensor``:
this script installs a small stand-in ``torch`` module that answers from libcuda through ctypes, and tensors that
hold device memory allocated with ``cuMemAlloc``. No numpy, no torch.

    python bench/gpu_check.py                 # on a GPU machine: run, check, print JSON
    python bench/gpu_check.py --compile-only  # anywhere: compile the same kernels for sm_90a (no GPU)

Kernels: a vector add (fp32), ``libdevice.erf`` (fp32) and a 256x256x256 fp16 ``tl.dot`` matmul (fp32 out).
Reported per kernel: max abs error against a pure-Python reference, first-launch time (compile + load + run),
the PTX ``.target`` and whether the PTX uses ``wgmma`` (Hopper's warpgroup MMA).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import operator
import random
import struct
import sys
import tempfile
import time
import types
from pathlib import Path

F32, F16 = "float32", "float16"


# --- a stand-in torch over libcuda ---------------------------------------------------------------------------

class Cuda:
    """The few CUDA driver calls this check needs."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")
        self._check(self.lib.cuInit(0), "cuInit")
        self.device = ctypes.c_int()
        self._check(self.lib.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.ctx = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.ctx), self.device), "cuDevicePrimaryCtxRetain")
        self._check(self.lib.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    @staticmethod
    def _check(rc: int, what: str) -> None:
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUDA error {rc}")

    def capability(self) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(major), 75, self.device), "cuDeviceGetAttribute")
        self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, self.device), "cuDeviceGetAttribute")
        return major.value, minor.value

    def name(self) -> str:
        buf = ctypes.create_string_buffer(256)
        self._check(self.lib.cuDeviceGetName(buf, 256, self.device), "cuDeviceGetName")
        return buf.value.decode()

    def alloc(self, nbytes: int) -> int:
        ptr = ctypes.c_uint64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(nbytes)), "cuMemAlloc")
        return ptr.value

    def upload(self, ptr: int, data: bytes) -> None:
        self._check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(ptr), data, ctypes.c_size_t(len(data))), "cuMemcpyHtoD")

    def download(self, ptr: int, nbytes: int) -> bytes:
        buf = ctypes.create_string_buffer(nbytes)
        self._check(self.lib.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(ptr), ctypes.c_size_t(nbytes)), "cuMemcpyDtoH")
        return buf.raw

    def sync(self) -> None:
        self._check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")


class DType:
    def __init__(self, name: str, size: int, fmt: str) -> None:
        self.name, self.itemsize, self.fmt = name, size, fmt

    def __str__(self) -> str:
        return f"torch.{self.name}"  # what triton._utils.canonicalize_dtype reads

    def __hash__(self) -> int:
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DType) and other.name == self.name


DTYPES = {F32: DType(F32, 4, "f"), F16: DType(F16, 2, "e")}


def install_torch_standin(cuda: Cuda | None) -> types.ModuleType:
    """A ``torch`` module with what Triton's CUDA driver asks for, answered from libcuda."""
    torch = types.ModuleType("torch")
    torch.__path__ = []  # a package, so `from torch._C import ...` fails with ImportError as Triton expects
    torch.version = types.SimpleNamespace(hip=None, cuda="stand-in")  # type: ignore[attr-defined]
    stream = types.SimpleNamespace(cuda_stream=0)  # the default stream
    torch.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        is_available=lambda: cuda is not None,
        current_device=lambda: 0,
        set_device=lambda index: None,
        device_count=lambda: 1 if cuda else 0,
        get_device_capability=lambda index=0: cuda.capability() if cuda else (9, 0),
        current_stream=lambda index=0: stream,
        synchronize=lambda *a: cuda.sync() if cuda else None,
    )
    torch.device = lambda kind, index=0: f"{kind}:{index}"  # type: ignore[attr-defined]

    class Tensor:
        """Device memory Triton's launcher passes by ``data_ptr()``."""

        def __init__(self, values: list[float], dtype: DType) -> None:
            assert cuda is not None
            self.dtype, self.numel = dtype, len(values)
            self.ptr = cuda.alloc(max(self.numel * dtype.itemsize, 4))
            cuda.upload(self.ptr, struct.pack(f"<{self.numel}{dtype.fmt}", *values))

        def data_ptr(self) -> int:
            return self.ptr

        def tolist(self) -> list[float]:
            assert cuda is not None
            raw = cuda.download(self.ptr, self.numel * self.dtype.itemsize)
            return list(struct.unpack(f"<{self.numel}{self.dtype.fmt}", raw))

    torch.Tensor = Tensor  # type: ignore[attr-defined]
    for name, dt in DTYPES.items():
        setattr(torch, name, dt)
    sys.modules["torch"] = torch
    return torch


# --- the kernels ----------------------------------------------------------------------------------------------

def kernels():  # type: ignore[no-untyped-def]
    import triton
    import triton.language as tl
    from triton.language.extra import libdevice

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    @triton.jit
    def erf_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, libdevice.erf(tl.load(x_ptr + offs, mask=mask)), mask=mask)

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
            b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)

    return triton, add_kernel, erf_kernel, matmul_kernel


def _ptx_facts(ptx: str) -> dict[str, object]:
    target = next((line.split()[1] for line in ptx.splitlines() if line.startswith(".target")), None)
    return {"ptx_target": target, "wgmma": "wgmma" in ptx}


def compile_only() -> dict[str, object]:
    """Compile the kernels for sm_90a with an explicit target: no GPU, no driver."""
    install_torch_standin(None)
    triton, add_kernel, erf_kernel, matmul_kernel = kernels()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    target = GPUTarget("cuda", 90, 32)
    specs = {
        "vector_add": (add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                    "BLOCK": "constexpr"}, {"BLOCK": 1024}, {}),
        "libdevice_erf": (erf_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                          {"BLOCK": 1024}, {}),
        "matmul_fp16": (matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                                        "K": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
                        {"BM": 128, "BN": 128, "BK": 64}, {"num_warps": 4}),
    }
    out: dict[str, object] = {}
    for name, (fn, sig, consts, opts) in specs.items():
        start = time.perf_counter()
        compiled = triton.compile(ASTSource(fn, sig, consts), target=target, options=opts)
        out[name] = {"compile_s": round(time.perf_counter() - start, 3), **_ptx_facts(compiled.asm["ptx"]),
                     "cubin_bytes": len(compiled.asm.get("cubin", b""))}
    return out


def _launch(fn, grid, *args, **kw):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    compiled = fn[grid](*args, **kw)
    import torch

    torch.cuda.synchronize()
    return compiled, round(time.perf_counter() - start, 3)


def run_on_gpu(profile: bool = False) -> dict[str, object]:
    cuda = Cuda()
    torch = install_torch_standin(cuda)
    triton, add_kernel, erf_kernel, matmul_kernel = kernels()
    rng = random.Random(0)
    out: dict[str, object] = {"device": cuda.name(), "capability": cuda.capability(), "triton": triton.__version__,
                              "triton_file": triton.__file__}

    n = 98432
    xs = [rng.uniform(-1, 1) for _ in range(n)]
    ys = [rng.uniform(-1, 1) for _ in range(n)]
    x, y, z = torch.Tensor(xs, DTYPES[F32]), torch.Tensor(ys, DTYPES[F32]), torch.Tensor([0.0] * n, DTYPES[F32])
    compiled, first = _launch(add_kernel, (triton.cdiv(n, 1024),), x, y, z, n, BLOCK=1024)
    ref = [struct.unpack("f", struct.pack("f", a))[0] + struct.unpack("f", struct.pack("f", b))[0]
           for a, b in zip(xs, ys, strict=True)]
    err = max(abs(p - q) for p, q in zip(z.tolist(), ref, strict=True))
    out["vector_add"] = {"n": n, "max_abs_err": err, "first_launch_s": first, **_ptx_facts(compiled.asm["ptx"])}

    xs = [rng.uniform(-3, 3) for _ in range(n)]
    x, e = torch.Tensor(xs, DTYPES[F32]), torch.Tensor([0.0] * n, DTYPES[F32])
    compiled, first = _launch(erf_kernel, (triton.cdiv(n, 1024),), x, e, n, BLOCK=1024)
    f32 = [struct.unpack("f", struct.pack("f", q))[0] for q in xs]
    err = max(abs(p - math.erf(q)) for p, q in zip(e.tolist(), f32, strict=True))
    out["libdevice_erf"] = {"n": n, "max_abs_err": err, "first_launch_s": first, **_ptx_facts(compiled.asm["ptx"])}

    m = nn = k = 256
    a16 = [struct.unpack("e", struct.pack("e", rng.uniform(-1, 1)))[0] for _ in range(m * k)]
    b16 = [struct.unpack("e", struct.pack("e", rng.uniform(-1, 1)))[0] for _ in range(k * nn)]
    a, b = torch.Tensor(a16, DTYPES[F16]), torch.Tensor(b16, DTYPES[F16])
    c = torch.Tensor([0.0] * (m * nn), DTYPES[F32])
    compiled, first = _launch(matmul_kernel, (m // 128, nn // 128), a, b, c, m, nn, k, BM=128, BN=128, BK=64,
                              num_warps=4)
    cols = [b16[j::nn] for j in range(nn)]
    got = c.tolist()
    err = 0.0
    for i in range(m):
        row = a16[i * k:(i + 1) * k]
        for j in range(nn):
            err = max(err, abs(got[i * nn + j] - sum(map(operator.mul, row, cols[j]))))
    out["matmul_fp16"] = {"shape": [m, nn, k], "max_abs_err": err, "first_launch_s": first,
                          **_ptx_facts(compiled.asm["ptx"])}
    if profile:
        out["proton"] = _profile(add_kernel, triton, x, y, z, n)
    return out


def _profile(add_kernel, triton, x, y, z, n) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Proton with CUPTI from the wheel's backends/nvidia/lib/cupti: profile the vector add, read the profile."""
    import triton.profiler as proton

    base = Path(tempfile.mkdtemp()) / "gpu_check"
    proton.start(str(base), backend="cupti")
    for _ in range(3):
        add_kernel[(triton.cdiv(n, 1024),)](x, y, z, n, BLOCK=1024)
    proton.finalize()
    written = sorted(str(p) for p in base.parent.glob("gpu_check*"))
    data = json.loads(Path(written[0]).read_text()) if written else None
    names = []
    stack = [data[0]] if isinstance(data, list) and data else []
    while stack:
        node = stack.pop()
        names.append(node.get("frame", {}).get("name"))
        stack.extend(node.get("children", []))
    return {"profile": [Path(w).name for w in written], "frames": sorted({str(nm) for nm in names if nm})}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compile-only", action="store_true", help="compile for sm_90a without a GPU")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    ap.add_argument("--proton", action="store_true", help="also profile the vector add with proton (CUPTI)")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory():
        result = compile_only() if ns.compile_only else run_on_gpu(ns.proton)
    text = json.dumps(result, indent=2)
    print(text)
    if ns.out:
        ns.out.write_text(text + "\n")
    if ns.compile_only:
        return 0
    ok = all(result[k]["max_abs_err"] < tol for k, tol in  # type: ignore[index]
             (("vector_add", 1e-6), ("libdevice_erf", 1e-6), ("matmul_fp16", 1e-3)))
    print("gpu check:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
