"""Build once, package many: wheels for several interpreters in one ``tritonbuild build`` from an empty cache.

The interpreters build one after the other, so the first wheel's time is one interpreter's clean build with an
empty compiler cache, and the total against it is what each further interpreter costs. For each later wheel it
prints the compiler cache's misses (the translation units compiled again) next to the number of translation
units that include Python's headers (from ``ninja -t deps`` of its build dir): the goal is that they are the same.

    python bench/bench_matrix.py --python /usr/bin/python3.11 --python ../shared/.../python3.12   # example tree
    python bench/bench_matrix.py --source ~/src/triton --python A --python B -- --backends 'nvidia;amd' ...
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import example_workspace, table


def python_units(build_dir: Path) -> tuple[int, int]:
    """(objects whose dependencies include Python.h, all objects) in a build dir's ninja deps log."""
    from tritonbuild.execute.staging import cache_value

    ninja = cache_value(build_dir / "cmake", "CMAKE_MAKE_PROGRAM") or "ninja"  # the build dir's own
    out = subprocess.run([ninja, "-C", str(build_dir / "cmake"), "-t", "deps"], capture_output=True, text=True,
                         check=False).stdout
    units, python, current = 0, 0, False
    for line in out.splitlines():
        if line and not line.startswith(" "):
            units += 1
            current = False
        elif "Python.h" in line and not current:
            python += 1
            current = True
    return python, units


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", action="append", required=True, help="an interpreter (two or more)")
    ap.add_argument("--source", help="a Triton checkout (default: the bundled example tree)")
    ap.add_argument("--keep", help="keep the cache and wheels in this dir")
    ap.add_argument("rest", nargs="*", help="more build options, after --")
    args = ap.parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="tb-matrix-"))
    extra = list(args.rest)
    if args.source:
        source = Path(args.source)
    else:
        source, plugin, dep = example_workspace(base)
        extra += ["--plugin-dir", str(plugin), *dep]
    argv = [sys.executable, "-m", "tritonbuild", "build", "--json", "--source", str(source),
            "--cache-dir", str(base / "cache"), "--out", str(base / "dist"), *extra]
    for p in args.python:
        argv += ["--python", p]
    env = {**__import__("os").environ, "CCACHE_DIR": str(base / "ccache")}
    start = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    total = time.monotonic() - start
    if res.returncode != 0:
        raise SystemExit(f"build failed ({res.returncode}):\n{res.stderr[-3000:]}")
    data = json.loads(res.stdout)
    wheels = data["wheels"]  # a list for one --python or several (schema 2)
    rows = [("command", " ".join(argv)), ("total", f"{total:8.1f} s")]
    for i, w in enumerate(wheels):
        py, units = python_units(Path(w["build_dir"]))
        cc = w.get("ccache") or {}
        rows.append((f"wheel {i + 1}", f"{w['seconds']:8.1f} s  {Path(w['wheel']).name}  ccache {cc.get('hits', 0)} "
                                       f"hits / {cc.get('misses', 0)} misses; {py} of {units} objects include "
                                       "Python.h"))
    first = wheels[0]["seconds"]
    rows.append((f"{len(wheels)} wheels / first wheel", f"{sum(w['seconds'] for w in wheels) / first:8.2f} x "
                                                        "(goal for two: <= 1.2 x)"))
    table(rows)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
