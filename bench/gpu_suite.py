"""Triton's own tests with our wheel and with the official one, side by side on a GPU machine.

A wheel is good when the source tree's own ``python/test/unit`` passes with it as it does with the official
wheel, not when it imports. Two steps, because the GPU machine has no network and takes 64 MiB per transfer:

    # here: a bundle of our wheel (debug info stripped; ptxas and CUPTI left out, the GPU machine has CUDA),
    # the tree's tests and the pytest plugins as wheels (pytest-xdist, execnet, pytest-timeout, expecttest)
    python bench/gpu_suite.py pack --wheel dist/triton-...-cp312-....whl --source ~/src/triton --out .gpu-bundle

    # there (``device`` tool, carry .gpu-bundle): the same tests, once with the machine's official triton and
    # once with ours in front of it on PYTHONPATH; one chunk a command (a command may run 10 minutes)
    python bench/gpu_suite.py chunks                    # the default run's commands, one a chunk
    python bench/gpu_suite.py run --bundle .gpu-bundle --chunk core-1of4     # writes $OUT/core-1of4.json
    python bench/gpu_suite.py run --bundle .gpu-bundle --tests unit/language/test_matmul.py -k "float16"
    # here: every chunk's results together
    python bench/gpu_suite.py report <dirs or .json files the chunks wrote>

The default run (``CHUNKS``) covers what users run: ``unit/language/test_core.py`` (in 4 shards),
``test_matmul.py``, ``test_warp_specialization.py`` and the Gluon tests (``gluon``, 2 shards), each chunk sized to
finish both sides within a 10-minute command; ``test_debug.py`` is left apart (its device asserts poison the xdist
workers: the ``debug`` chunk runs it alone, without xdist). Each chunk writes its result file as soon as each side
ends, so a command stopped at its limit still leaves what ran.

Each side runs under pytest-timeout (thread method: a hang inside a C++ pass never returns to Python, so the
worker is ended and xdist replaces it), so a hang is a failed test with its time, not a stuck machine. The report
lists every test as both passed / both failed / only ours failed / only official failed / one side skipped, with
the error of the side that failed, and apart from those the files one side cannot import (a collection error on
that side only: the official wheel cannot import a tree's tests that need a newer ``triton._internal_testing``):
a test of such a file is not "only ours failed", and a file only ours cannot import is a failure of ours.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

# the pytest plugins the run uses, and what the tree's tests import that the GPU machine lacks (Gluon's
# test_frontend.py imports expecttest)
PLUGINS = ("pytest-xdist", "execnet", "pytest-timeout", "expecttest")
# ptxas (38 MB, and ptxas-blackwell) is left out: the GPU machine's CUDA gives it. cuobjdump, nvdisasm and CUPTI stay:
# test_disasm.py runs the first two from the wheel, and proton (triton_kernels' test_topk.py) loads CUPTI from it.
LEAVE_OUT = ("triton/backends/nvidia/bin/ptxas",)

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
    kernels = Path(args.source) / "python" / "triton_kernels"
    if kernels.is_dir():  # the package and its tests (trees since 2025)
        for part in ("triton_kernels", "tests"):
            shutil.copytree(kernels / part, out / "kernels" / part,
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


# The default run: chunk -> (paths under python/test, shard "i/n" or None, xdist). Sized from the d8da7c998 run
# of issue #39 on an H100 (16 workers): test_core.py 8980 tests, Gluon 6734, test_warp_specialization.py ~150.
CHUNKS: dict[str, tuple[tuple[str, ...], str | None, bool]] = {
    **{f"core-{i}of4": (("unit/language/test_core.py",), f"{i}/4", True) for i in range(1, 5)},
    "matmul": (("unit/language/test_matmul.py",), None, True),
    "warp_specialization": (("unit/language/test_warp_specialization.py",), None, True),
    **{f"gluon-{i}of2": (("gluon",), f"{i}/2", True) for i in range(1, 3)},
}
APART = {"debug": (("unit/language/test_debug.py",), None, False),  # not in the default run
         "disasm": (("unit/tools/test_disasm.py",), None, False),  # runs the wheel's cuobjdump and nvdisasm
         # python/triton_kernels' tests (test_topk.py imports the profiler): its big test_matmul.py on 16 workers,
         # the rest on 4 (on 16, test_reduce.py and test_tensor.py ran the H100 out of memory on both sides)
         "kernels-matmul": (("tests/test_matmul.py",), None, True),
         "kernels": (("tests",), None, True)}
# Chunks whose tests are not under python/test: their root in the bundle (python/triton_kernels has a conftest.py of
# its own that defines --device too, so it cannot sit under python/test's). Its package is on both sides' path.
ROOTS = {"kernels": "kernels", "kernels-matmul": "kernels"}
CHUNK_ARGS = {"kernels": ("--ignore=tests/test_matmul.py",)}  # extra pytest arguments of a chunk
CHUNK_WORKERS = {"kernels": 4}  # at most this many xdist workers
COLLECTION = "collection error"

# A pytest plugin (written next to the tests' work dir): --shard i/n keeps the tests whose node id hashes to i.
SHARD_PLUGIN = '''
import zlib


def pytest_addoption(parser):
    parser.addoption("--shard", default=None, help="i/n: run the i-th of n parts of the collected tests")


def pytest_collection_modifyitems(config, items):
    shard = config.getoption("--shard")
    if not shard:
        return
    index, count = (int(x) for x in shard.split("/"))
    keep = [t for t in items if zlib.crc32(t.nodeid.encode()) % count == index - 1]
    drop = [t for t in items if zlib.crc32(t.nodeid.encode()) % count != index - 1]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
'''

# A pytest plugin: each test's result as a JSON line the moment the controller hears of it, so a side stopped at its
# time limit (pytest killed: no junit XML) still tells what ran. Ids as junit names them (dotted file, "::", name).
STREAM_PLUGIN = '''
import json
import os


def _id(nodeid):
    parts = nodeid.split("::")
    dotted = parts[0][:-3].replace("/", ".") if parts[0].endswith(".py") else parts[0].replace("/", ".")
    return ".".join([dotted, *parts[1:-1]]) + "::" + parts[-1] if len(parts) > 1 else dotted


def _write(line):
    path = os.environ.get("GPU_SUITE_STREAM")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\\n")


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        status = {"passed": "passed", "failed": "failed", "skipped": "skipped"}[report.outcome]
        message = str(report.longrepr)[-300:] if report.outcome != "passed" else ""
        _write({"id": _id(report.nodeid), "status": status, "message": message, "time": str(report.duration)})


def pytest_collectreport(report):
    if report.failed:
        _write({"id": _id(report.nodeid), "status": "collection error", "message": str(report.longrepr)[-300:],
                "time": "0"})
'''


def streamed(path: Path) -> dict[str, dict[str, str]]:
    """test id -> result from the stream plugin's lines; a failed phase wins over a passed one (a teardown error)."""
    out: dict[str, dict[str, str]] = {}
    if not path.is_file():
        return out
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the last line of a killed side may be half written
        known = out.get(entry["id"])
        if known is None or known["status"] == "passed" or entry["status"] == "failed":
            out[entry["id"]] = {k: entry[k] for k in ("status", "message", "time")}
    return out


def junit(path: Path) -> dict[str, dict[str, str]]:
    """test id -> {"status": passed|failed|skipped|collection error, "message": ...} from a junit XML file. A file
    pytest could not import is one entry: its dotted path (``unit.language.test_core``), "collection error"."""
    out: dict[str, dict[str, str]] = {}
    if not path.is_file():
        return out
    for case in ET.parse(path).getroot().iter("testcase"):
        classname, name = case.get("classname") or "", case.get("name") or ""
        test_id = f"{classname}::{name}" if classname else name
        status, message = "passed", ""
        for child in case:
            if child.tag == "error" and child.get("message") == "collection failure":
                status, message = COLLECTION, (child.text or "")[-300:]
            elif child.tag in ("failure", "error"):
                status, message = "failed", (child.get("message") or child.text or "")[:300]
            elif child.tag == "skipped":
                status, message = "skipped", (child.get("message") or "")[:200]
        out[test_id] = {"status": status, "message": message, "time": case.get("time") or "0"}
    return out


def pytest_argv(python: str, paths: tuple[str, ...], shard: str | None, xdist: bool, xml: Path, tests_root: Path,
                args: argparse.Namespace) -> list[str]:
    argv = [python, "-m", "pytest", "-q", "-p", "timeout", "-p", "no:cacheprovider",
            "-p", "no:benchmark",  # pytest-benchmark refuses to run beside xdist
            "-W", "ignore::DeprecationWarning",  # a newer pytest than the tree's makes its deprecations errors
            f"--timeout={args.timeout}", "--timeout-method=thread", f"--junitxml={xml}", f"--rootdir={tests_root}",
            "--continue-on-collection-errors"]  # a file one side cannot import must not stop the others
    if not any(p.endswith("test_debug.py") for p in paths):
        argv.append("--ignore-glob=*/test_debug.py")  # its device asserts poison the xdist workers
    if xdist:
        argv += ["-p", "xdist", "-n", str(min(args.workers, getattr(args, "max_workers", args.workers)))]
    argv += list(getattr(args, "extra", ()))
    argv += ["-p", "_gpu_suite_stream"]
    if shard:
        argv += ["-p", "_gpu_suite_shard", f"--shard={shard}"]
    if args.k:
        argv += ["-k", args.k]
    return [*argv, *paths]


def side(name: str, python: str, overlay: list[Path], chunk: tuple[tuple[str, ...], str | None, bool],
         args: argparse.Namespace, work: Path, limit: float) -> dict:
    """One side's run of the chunk, stopped after ``limit`` seconds; its results from junit XML, or, when the side
    was stopped, from what the stream plugin wrote as the tests ended."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [*overlay, work / "plugin"])
    if name == "ours":  # our slim wheel carries no ptxas: the machine's CUDA toolkit gives it
        for var in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH"):
            env.setdefault(var, "/usr/local/cuda/bin/ptxas")
    env["TRITON_CACHE_DIR"] = str(work / f"cache-{name}")
    xml = work / f"{name}.xml"
    xml.unlink(missing_ok=True)
    stream = work / f"{name}.jsonl"
    stream.unlink(missing_ok=True)
    env["GPU_SUITE_STREAM"] = str(stream)
    # python/test (its conftest.py, the device fixture, applies), or python/triton_kernels for the kernels chunk
    tests_root = Path(args.bundle).resolve() / getattr(args, "root", "test")
    argv = pytest_argv(python, *chunk, xml, tests_root, args)
    start = time.monotonic()
    # its own process group: a side stopped at its limit takes its xdist workers (and their GPU work) with it
    proc = subprocess.Popen(argv, cwd=tests_root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, _ = proc.communicate(timeout=limit)
        exit_code, summary = proc.returncode, (stdout.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        exit_code, summary = -1, f"stopped after {limit:.0f} s"
    tests = {**streamed(stream), **junit(xml)}
    out = {"tests": tests, "seconds": round(time.monotonic() - start, 1), "exit": exit_code, "summary": summary,
           "complete": exit_code != -1}
    if args.torch_check:
        out["torch_compile"] = torch_check(python, env)
    return out


def torch_check(python: str, env: dict[str, str]) -> dict:
    torch = subprocess.run([python, "-c", TORCH_CHECK], env=env, capture_output=True, text=True, check=False)
    try:
        return dict(json.loads(torch.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": (torch.stderr or torch.stdout)[-500:]}


def file_of(test_id: str, files: set[str]) -> str | None:
    """The file (dotted, as junit names it: unit.language.test_core) a test id belongs to, among ``files``."""
    classname = test_id.partition("::")[0]
    return next((f for f in files if classname == f or classname.startswith(f + ".")), None)


def unimportable(tests: dict[str, dict[str, str]]) -> set[str]:
    return {t for t, r in tests.items() if r["status"] == COLLECTION}


def compare(ours: dict[str, dict[str, str]], official: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Every test in one group; files one side cannot import apart ("official cannot import": what ours did with
    their tests; "ours cannot import": a failure of ours)."""
    groups: dict[str, Any] = {"both passed": [], "both failed": [], "both skipped": [], "only ours failed": [],
                              "only official failed": [], "skipped on one side": [], "only one side ran": [],
                              "official cannot import": {}, "ours cannot import": [], "neither can import": []}
    bad_ours, bad_official = unimportable(ours), unimportable(official)
    groups["neither can import"] = sorted(bad_ours & bad_official)
    groups["ours cannot import"] = [{"file": f, "error": ours[f]["message"]} for f in sorted(bad_ours - bad_official)]
    for f in sorted(bad_official - bad_ours):
        groups["official cannot import"][f] = {"passed": 0, "failed": 0, "skipped": 0, "ours failed": [],
                                               "official error": official[f]["message"]}
    for test_id in sorted(set(ours) | set(official)):
        if test_id in bad_ours or test_id in bad_official:
            continue
        a, b = ours.get(test_id), official.get(test_id)
        if b is None and a is not None and (f := file_of(test_id, bad_official - bad_ours)):
            tally = groups["official cannot import"][f]
            tally[a["status"]] = tally.get(a["status"], 0) + 1
            if a["status"] == "failed":
                tally["ours failed"].append({"test": test_id, "error": a["message"]})
        elif a is None and file_of(test_id, bad_ours):
            continue  # counted under "ours cannot import"
        else:
            _place(groups, test_id, a, b)
    return groups


def _place(groups: dict[str, Any], test_id: str, a: dict[str, str] | None, b: dict[str, str] | None) -> None:
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


def summary(groups: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The report: counts of every group, what differs in full, the first 20 failures both share."""
    counts = {k: len(v) for k, v in groups.items()}
    cannot = groups["official cannot import"]
    return {**meta, "counts": counts,
            "fails only with ours": groups["only ours failed"],
            "ours cannot import": groups["ours cannot import"],
            "official cannot import": {f: {k: v if k != "ours failed" else v[:20] for k, v in t.items()}
                                       for f, t in cannot.items()},
            "only official failed": groups["only official failed"], "only one side ran": groups["only one side ran"],
            "both failed": groups["both failed"][:20], "ok": not (groups["only ours failed"]
                                                                  or groups["ours cannot import"])}


def chunk_of(args: argparse.Namespace) -> tuple[str, tuple[tuple[str, ...], str | None, bool]]:
    if args.chunk:
        known = {**CHUNKS, **APART}
        if args.chunk not in known:
            raise SystemExit(f"unknown chunk {args.chunk!r}; the chunks: {', '.join(known)}")
        args.root = ROOTS.get(args.chunk, "test")
        args.extra = CHUNK_ARGS.get(args.chunk, ())
        args.max_workers = CHUNK_WORKERS.get(args.chunk, args.workers)
        return args.chunk, known[args.chunk]
    return "tests", (tuple(args.tests), None, True)


def write(out: Path, name: str, data: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{name}.json.tmp"
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(out / f"{name}.json")


def side_limit(name: str, args: argparse.Namespace, elapsed: float) -> float:
    """The official side gets --side-timeout; ours gets what is left of the command's budget, at least as much: the
    official wheel cannot import much of a newer tree's tests (Gluon) and ends early, and ours should use that."""
    if name == "official":
        return float(args.side_timeout)
    return max(float(args.side_timeout), args.budget - elapsed)


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    bundle = Path(args.bundle).resolve()
    meta = json.loads((bundle / "bundle.json").read_text())
    work = Path(tempfile.mkdtemp(prefix="gpu-suite-"))
    out = Path(args.out or os.environ.get("OUT") or work)
    name, chunk = chunk_of(args)
    wheel = work / meta["wheel"].removesuffix(".xz")
    with lzma.open(bundle / meta["wheel"]) as src, open(wheel, "wb") as dst:
        shutil.copyfileobj(src, dst)
    plugins, ours = work / "plugins", work / "ours"
    (work / "plugin").mkdir()
    (work / "plugin" / "_gpu_suite_shard.py").write_text(SHARD_PLUGIN)
    (work / "plugin" / "_gpu_suite_stream.py").write_text(STREAM_PLUGIN)
    install(args.python, [str(p) for p in sorted((bundle / "wheels").glob("*.whl"))], plugins)
    install(args.python, [str(wheel)], ours)
    head = {"chunk": name, "paths": list(chunk[0]), "shard": chunk[1], "k": args.k}
    sides: dict[str, dict] = {}
    extra = [bundle / args.root] if args.root != "test" else []  # the kernels chunk: import triton_kernels
    for side_name, overlay in (("official", [plugins, *extra]), ("ours", [ours, plugins, *extra])):
        limit = side_limit(side_name, args, time.monotonic() - started)
        sides[side_name] = side(side_name, args.python, overlay, chunk, args, work, limit)
        write(out, name, {**head, "sides": sides})  # what ran so far, should the command be stopped
    result = summary(compare(sides["ours"]["tests"], sides["official"]["tests"]),
                     {**head, "sides": {n: {k: v for k, v in s.items() if k != "tests"} for n, s in sides.items()}})
    write(out, name, {**head, "sides": sides, "report": result})
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


def merge(into: dict[str, dict[str, str]], new: dict[str, dict[str, str]]) -> None:
    """A later file's results over an earlier one's: a file that a later run could import (a wheel it lacked added
    to the bundle) is no longer counted as one that side cannot import."""
    ran = {test_id.partition("::")[0] for test_id, r in new.items() if r["status"] != COLLECTION}
    for bad in [t for t, r in into.items() if r["status"] == COLLECTION]:
        if any(f == bad or f.startswith(bad + ".") for f in ran):
            del into[bad]
    into.update(new)


def report(args: argparse.Namespace) -> int:
    """The chunks' result files together: one comparison of every test they ran."""
    files = [f for p in map(Path, args.results) for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
    ours: dict[str, dict[str, str]] = {}
    official: dict[str, dict[str, str]] = {}
    chunks = {}
    for f in files:
        data = json.loads(f.read_text())
        sides = data.get("sides", {})
        merge(ours, sides.get("ours", {}).get("tests", {}))
        merge(official, sides.get("official", {}).get("tests", {}))
        chunks[data.get("chunk", f.stem)] = sorted(sides)  # a chunk stopped before "ours" ran shows it
    result = summary(compare(ours, official), {"chunks": chunks})
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


def chunks(args: argparse.Namespace) -> int:
    for name in CHUNKS:
        print(f"python bench/gpu_suite.py run --bundle {args.bundle} --chunk {name}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="bundle our wheel, the tree's tests and the pytest plugins")
    p.add_argument("--wheel", required=True)
    p.add_argument("--source", required=True, help="the Triton source tree the wheel was built from")
    p.add_argument("--out", default=".gpu-bundle")
    r = sub.add_parser("run", help="run one chunk (or --tests) with the official triton and with ours, and compare")
    r.add_argument("--bundle", default=".gpu-bundle")
    r.add_argument("--chunk", default=None, help=f"one of {', '.join([*CHUNKS, *APART])}")
    r.add_argument("--tests", nargs="+", default=["unit/language/test_matmul.py"],
                   help="paths under python/test (or under --root), without --chunk")
    r.add_argument("--root", default="test", choices=("test", "kernels"),
                   help="the bundle dir --tests are under: python/test, or python/triton_kernels (kernels)")
    r.add_argument("-k", default=None)
    r.add_argument("--python", default="/opt/torch/.venv/bin/python", help="the machine's torch + official triton")
    r.add_argument("--workers", type=int, default=16)
    r.add_argument("--timeout", type=int, default=120, help="seconds one test may take (a hang fails it)")
    r.add_argument("--side-timeout", type=int, default=250, help="seconds one side may take (two fit a command)")
    r.add_argument("--budget", type=int, default=560,
                   help="seconds the whole command may take (the device's limit is 600): ours gets what is left")
    r.add_argument("--torch-check", action="store_true", help="also a torch.compile check on each side")
    r.add_argument("--out", default=None, help="where the chunk's NAME.json goes (default $OUT)")
    c = sub.add_parser("chunks", help="the default run's commands, one a chunk")
    c.add_argument("--bundle", default=".gpu-bundle")
    q = sub.add_parser("report", help="every chunk's results together")
    q.add_argument("results", nargs="+", help="the chunks' .json files or dirs holding them")
    args = parser.parse_args()
    return {"pack": pack, "run": run, "chunks": chunks, "report": report}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
