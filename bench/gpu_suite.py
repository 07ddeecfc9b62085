"""Triton's own tests with our wheel and with the official one, side by side on a GPU machine.

A wheel is good when the source tree's own ``python/test/unit`` passes with it as it does with the official
wheel, not when it imports. Two steps, because the GPU machine has no network and takes 64 MiB per transfer:

    # here: a bundle of our wheel (debug info stripped; ptxas and CUPTI left out, the GPU machine has CUDA),
    # the tree's tests and the pytest plugins as wheels (pytest-xdist, execnet, pytest-timeout)
    python bench/gpu_suite.py pack --wheel dist/triton-...-cp312-....whl --source ~/src/triton --out .gpu-bundle

    # there (``device`` tool, carry .gpu-bundle): the same tests and a torch.compile check, once with the
    # machine's official triton and once with ours in front of it on PYTHONPATH; prints the per-test comparison
    python bench/gpu_suite.py run --bundle .gpu-bundle --tests language/test_matmul.py -k "float16 and not fp8"

Each side runs under pytest-timeout (thread method: a hang inside a C++ pass never returns to Python, so the
worker is ended and xdist replaces it), so a hang is a failed test with its time, not a stuck machine. The report
lists every test as both passed / both failed / only ours failed / only official failed /
one side skipped, with the error of the side that failed.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

PLUGINS = ("pytest-xdist", "execnet", "pytest-timeout")
LEAVE_OUT = ("triton/backends/nvidia/bin/", "triton/backends/nvidia/lib/cupti/")

TORCH_CHECK = r'''
import json, sys, torch
torch.manual_seed(0)
dev = "cuda"
cases = {
    "matmul": (lambda a, b: a @ b, (torch.randn(512, 256, device=dev, dtype=torch.float16),
                                    torch.randn(256, 384, device=dev, dtype=torch.float16))),
    "softmax": (lambda x: torch.softmax(x, dim=-1), (torch.randn(256, 1000, device=dev),)),
    "gelu": (lambda x: torch.nn.functional.gelu(x) * 2 + 1, (torch.randn(4096, device=dev),)),
    "sin": (lambda x: torch.sin(x) + torch.cos(x), (torch.randn(10000, device=dev),)),
    "sum": (lambda x: x.sum(dim=0), (torch.randn(1024, 512, device=dev),)),
}
out = {}
for name, (fn, args) in cases.items():
    try:
        got = torch.compile(fn)(*args)
        out[name] = {"max_error": float((got.float() - fn(*args).float()).abs().max())}
    except Exception as exc:
        out[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
import triton
out["_triton"] = triton.__file__
print(json.dumps(out))
'''


# --- pack (here) ------------------------------------------------------------------------------------------------

def slim_wheel(wheel: Path, out: Path) -> Path:
    """The wheel without ptxas/CUPTI and with its ELF files' debug info stripped, xz-compressed."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "w"
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                if info.filename.startswith(LEAVE_OUT):
                    continue
                path = Path(zf.extract(info, root))
                if (mode := (info.external_attr >> 16) & 0o777) and not info.is_dir():
                    path.chmod(mode)
        strip = shutil.which("strip") or "strip"
        for so in root.rglob("*.so*"):
            subprocess.run([strip, "--strip-debug", str(so)], check=False, capture_output=True)
        record = next(root.glob("*.dist-info/RECORD"))
        names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and p != record)
        record.write_text("".join(f"{n},,\n" for n in names) + f"{record.relative_to(root).as_posix()},,\n")
        plain = Path(tmp) / wheel.name
        with zipfile.ZipFile(plain, "w", zipfile.ZIP_STORED) as zf:
            for name in [*names, record.relative_to(root).as_posix()]:
                zf.write(root / name, name)
        target = out / (wheel.name + ".xz")
        with open(plain, "rb") as src, lzma.open(target, "wb", preset=6) as dst:
            shutil.copyfileobj(src, dst)
    return target


def pack(args: argparse.Namespace) -> int:
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    (out / "wheels").mkdir(parents=True)
    slim = slim_wheel(Path(args.wheel), out)
    shutil.copytree(Path(args.source) / "python" / "test", out / "test",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(out / "wheels")]
    subprocess.run([*pip, *PLUGINS], check=True)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    (out / "bundle.json").write_text(json.dumps({"wheel": slim.name, "source": str(args.source),
                                                 "bytes": size}, indent=2))
    print(f"bundle {out}: {size / 2**20:.1f} MiB ({slim.name}: {slim.stat().st_size / 2**20:.1f} MiB)")
    return 0 if size < 64 * 2**20 else 1


# --- run (on the GPU machine) -------------------------------------------------------------------------------------

def install(python: str, what: list[str], target: Path) -> None:
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target), *what],
                   check=True)


def junit(path: Path) -> dict[str, dict[str, str]]:
    """test id -> {"status": passed|failed|skipped, "message": ...} from a junit XML file."""
    out: dict[str, dict[str, str]] = {}
    if not path.is_file():
        return out
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status, message = "failed", (child.get("message") or child.text or "")[:300]
            elif child.tag == "skipped":
                status, message = "skipped", (child.get("message") or "")[:200]
        out[test_id] = {"status": status, "message": message, "time": case.get("time") or "0"}
    return out


def side(name: str, python: str, overlay: list[Path], args: argparse.Namespace, work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in overlay)
    if name == "ours":  # our slim wheel carries no ptxas: the machine's CUDA toolkit gives it
        for var in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH"):
            env.setdefault(var, "/usr/local/cuda/bin/ptxas")
    env["TRITON_CACHE_DIR"] = str(work / f"cache-{name}")
    xml = work / f"{name}.xml"
    tests_root = Path(args.bundle).resolve() / "test"  # python/test: its conftest.py (the device fixture) applies
    argv = [python, "-m", "pytest", "-q", "-p", "xdist", "-p", "timeout", "-p", "no:cacheprovider",
            "-p", "no:benchmark",  # pytest-benchmark refuses to run beside xdist
            "-W", "ignore::DeprecationWarning",  # a newer pytest than the tree's makes its deprecations errors
            f"--timeout={args.timeout}", "--timeout-method=thread", "-n", str(args.workers), f"--junitxml={xml}",
            f"--rootdir={tests_root}",
            *(f"unit/{t}" for t in args.tests)]
    if args.k:
        argv += ["-k", args.k]
    start = time.monotonic()
    try:
        res = subprocess.run(argv, cwd=tests_root, env=env, capture_output=True, text=True, check=False,
                             timeout=args.side_timeout)
        exit_code, summary = res.returncode, (res.stdout.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        exit_code, summary = -1, f"stopped after {args.side_timeout} s"
    seconds = round(time.monotonic() - start, 1)
    torch = subprocess.run([python, "-c", TORCH_CHECK], env=env, capture_output=True, text=True, check=False)
    try:
        compiled = json.loads(torch.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        compiled = {"error": (torch.stderr or torch.stdout)[-500:]}
    return {"tests": junit(xml), "seconds": seconds, "exit": exit_code, "summary": summary,
            "torch_compile": compiled}


def compare(ours: dict[str, dict[str, str]], official: dict[str, dict[str, str]]) -> dict[str, list]:
    groups: dict[str, list] = {"both passed": [], "both failed": [], "both skipped": [], "only ours failed": [],
                               "only official failed": [], "skipped on one side": [], "only one side ran": []}
    for test_id in sorted(set(ours) | set(official)):
        a, b = ours.get(test_id), official.get(test_id)
        if a is None or b is None:
            groups["only one side ran"].append({"test": test_id, "ours": a and a["status"],
                                                "official": b and b["status"]})
        elif a["status"] == b["status"] == "passed":
            groups["both passed"].append(test_id)
        elif a["status"] == b["status"] == "failed":
            groups["both failed"].append({"test": test_id, "error": a["message"]})
        elif a["status"] == b["status"] == "skipped":
            groups["both skipped"].append(test_id)
        elif "skipped" in (a["status"], b["status"]):
            groups["skipped on one side"].append({"test": test_id, "ours": a["status"], "official": b["status"]})
        elif a["status"] == "failed":
            groups["only ours failed"].append({"test": test_id, "error": a["message"], "seconds": a["time"]})
        else:
            groups["only official failed"].append({"test": test_id, "error": b["message"]})
    return groups


def run(args: argparse.Namespace) -> int:
    bundle = Path(args.bundle).resolve()
    meta = json.loads((bundle / "bundle.json").read_text())
    work = Path(tempfile.mkdtemp(prefix="gpu-suite-"))
    wheel = work / meta["wheel"].removesuffix(".xz")
    with lzma.open(bundle / meta["wheel"]) as src, open(wheel, "wb") as dst:
        shutil.copyfileobj(src, dst)
    plugins, ours = work / "plugins", work / "ours"
    install(args.python, [str(p) for p in sorted((bundle / "wheels").glob("*.whl"))], plugins)
    install(args.python, [str(wheel)], ours)
    report = {"official": side("official", args.python, [plugins], args, work),
              "ours": side("ours", args.python, [ours, plugins], args, work)}
    groups = compare(report["ours"]["tests"], report["official"]["tests"])
    result = {"tests": args.tests, "k": args.k, "counts": {k: len(v) for k, v in groups.items()},
              "differ": {k: groups[k] for k in ("only ours failed", "only official failed", "only one side ran")},
              "both failed": groups["both failed"][:20],
              "sides": {n: {k: v for k, v in s.items() if k != "tests"} for n, s in report.items()}}
    print(json.dumps(result, indent=2))
    return 1 if groups["only ours failed"] else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="bundle our wheel, the tree's tests and the pytest plugins")
    p.add_argument("--wheel", required=True)
    p.add_argument("--source", required=True, help="the Triton source tree the wheel was built from")
    p.add_argument("--out", default=".gpu-bundle")
    r = sub.add_parser("run", help="run the tests with the official triton and with ours, and compare")
    r.add_argument("--bundle", default=".gpu-bundle")
    r.add_argument("--tests", nargs="+", default=["language/test_matmul.py"], help="paths under python/test/unit")
    r.add_argument("-k", default=None)
    r.add_argument("--python", default="/opt/torch/.venv/bin/python", help="the machine's torch + official triton")
    r.add_argument("--workers", type=int, default=8)
    r.add_argument("--timeout", type=int, default=300, help="seconds one test may take (a hang fails it)")
    r.add_argument("--side-timeout", type=int, default=1500)
    args = parser.parse_args()
    return pack(args) if args.cmd == "pack" else run(args)


if __name__ == "__main__":
    sys.exit(main())
