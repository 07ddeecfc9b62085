"""Start-up cost: `tritonbuild --help`, and `tritonbuild plan --json` cold (no cache dir: no remembered API
check) and warm (best of 5, after a run that filled the cache dir), on the example tree or any tree.

    python bench/bench_startup.py
    python bench/bench_startup.py --source ~/src/triton -- --backends 'nvidia;amd' --llvm /usr/lib/llvm-22

Goals (#27, on d8da7c998): warm plan < 0.5 s, cold < 1 s.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import best_of, table, timed
from tritonbuild import example


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", help="a Triton checkout (default: the bundled example tree)")
    ap.add_argument("rest", nargs="*", help="more plan options, after --")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tb-bench-"))
    try:
        tree = Path(args.source) if args.source else example.write_tree(base / "triton")
        py = [sys.executable, "-m", "tritonbuild"]
        plan = [*py, "plan", "--json", "--source", str(tree), "--cache-dir", str(base / "cache"), *args.rest]
        cold = timed(plan, cwd=base)[0]
        # after a first build the cache root exists and plan remembers the API check there (a plan alone never
        # creates it): one run to fill it, then the warm runs
        (base / "cache").mkdir()
        timed(plan, cwd=base)
        table([
            ("python -c pass", f"{best_of(5, [sys.executable, '-c', 'pass'], cwd=base):6.3f} s"),
            ("tritonbuild --help", f"{best_of(5, [*py, '--help'], cwd=base):6.3f} s"),
            ("tritonbuild plan --json, cold (no cache dir)", f"{cold:6.3f} s   (goal on d8da7c998: < 1 s)"),
            ("tritonbuild plan --json, warm (best of 5)", f"{best_of(5, plan, cwd=base):6.3f} s   (goal: < 0.5 s)"),
        ])
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
