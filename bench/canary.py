"""The canary compile against the full build: how soon each tells that a tree does not build with an LLVM.

    python bench/canary.py [--source TREE] [--llvm PREFIX] [--cache-dir DIR] [--full] [-- more tritonbuild flags]

Runs ``tritonbuild check-llvm --json`` (configure, then the canary) and prints configure time, canary time, units
chosen of all units, units compiled and skipped by the time budget (check-llvm has none unless ``-- --canary-budget
SECONDS`` gives one), the time to the first error and the causes found. With ``--full``, then runs ``ninja -k 0``
in the same build dir (the dev dir the canary configured) and prints the time to its first error and to the end of
the round, and how many units failed. Without ``--source``: the example tree written with ``old_override`` (a header
that LLVM 21+ refuses).
Figures, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import table


def canary(source: Path, llvm: str, cache: Path, extra: list[str]) -> tuple[float, dict]:
    argv = [sys.executable, "-m", "tritonbuild", "check-llvm", "--json", "--source", str(source), "--llvm", llvm,
            "--cache-dir", str(cache), *extra]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return wall, json.loads(proc.stdout)


def full_round(build: str) -> tuple[float | None, float, int]:
    """``ninja -k 0`` in ``build``: seconds to the first FAILED line, to the end, and how many failed."""
    start = time.perf_counter()
    first, failed = None, 0
    child = subprocess.Popen(["ninja", "-C", build, "-k", "0", f"-j{os.cpu_count() or 1}"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, errors="replace")
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("FAILED:"):
            failed += 1
            first = first if first is not None else time.perf_counter() - start
    child.wait()
    return first, time.perf_counter() - start, failed


def _seconds(value: float | None) -> str:
    return "none" if value is None else f"{value:7.1f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path)
    ap.add_argument("--llvm", default="/usr/lib/llvm-22")
    ap.add_argument("--cache-dir", type=Path)
    ap.add_argument("--full", action="store_true", help="also time a full ninja -k 0 round in the same build dir")
    ap.add_argument("extra", nargs="*", help="more flags for tritonbuild (after --), e.g. --backends nvidia")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tb-canary-"))
    source = args.source
    if source is None:
        from tritonbuild import example

        source = example.write_tree(base / "triton", old_override=True)
        args.extra = args.extra or ["--backends", "nvidia", "--no-proton", "--offline"]
    cache = args.cache_dir or base / "cache"
    wall, r = canary(source, args.llvm, cache, args.extra)
    rows = [("tree", str(source)), ("LLVM", args.llvm),
            ("configure", f"{r['configure_seconds']:7.1f} s"),
            ("canary (headers + syntax-only)", f"{r['seconds']:7.1f} s"),
            ("  of it: generated headers + choice", _seconds(r.get("prepare_seconds"))),
            ("check-llvm wall (plan + all)", f"{wall:7.1f} s"),
            ("units chosen / all", f"{len(r['chosen'])} / {r['units_total']} ({r.get('headers_chosen', '?')} "
                                   "headers)"),
            ("units compiled / skipped (budget)", f"{len(r.get('compiled', r['chosen']))} / "
                                                  f"{len(r.get('skipped', []))} ({r['headers_covered']} headers; "
                                                  f"budget {_seconds(r.get('budget_seconds'))})"),
            ("first error after (from the canary's start)", _seconds(r.get("first_error_seconds"))),
            ("units failing", str(len(r["failed"]))), ("causes", str(len(r["causes"])))]
    rows += [(f"  {c['units']} unit(s)", f"{c['kind']}: {c['example']}"[:160]) for c in r["causes"]]
    if args.full:
        first, end, failed = full_round(r["build_dir"])
        rows += [("full round: first error", f"{first:7.1f} s" if first is not None else "none"),
                 ("full round: to the end", f"{end:7.1f} s ({failed} failed)")]
    table(rows)


if __name__ == "__main__":
    main()
