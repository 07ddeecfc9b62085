"""Wheel build times on the example tree: cold, no-op, warm-ccache clean, and raw ninja's no-op floor.

    python bench/bench_build.py

Prints seconds and ratios (no-op rebuild / raw ninja no-op, warm clean / cold). Not a test: figures.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import best_of, example_workspace, one, table, tritonbuild
from tritonbuild.execute.staging import make_program


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="tb-bench-"))
    try:
        tree, plugin, deps = example_workspace(base)
        env = {"CCACHE_DIR": str(base / "ccache"), "TRITON_BUILD_WITH_CCACHE": "1"}
        args = ["build", "--json", "--source", str(tree), "--backends", "nvidia;amd;spirv", "--plugin-dir",
                str(plugin), "--out", str(base / "dist"), *deps]
        cold, first = tritonbuild(*args, "--cache-dir", str(base / "a"), cwd=base, env=env)
        first = one(first, "wheels")
        noop, _ = tritonbuild(*args, "--cache-dir", str(base / "a"), cwd=base, env=env)
        ninja = make_program(Path(first["build_dir"]) / "cmake") or "ninja"  # the build dir's own ninja
        floor = best_of(3, [ninja, "-C", f"{first['build_dir']}/cmake", "triton"], cwd=base)
        warm, fresh = tritonbuild(*args, "--cache-dir", str(base / "b"), cwd=base, env=env)
        fresh = one(fresh, "wheels")
        hits, misses = fresh["ccache"].get("hits", 0), fresh["ccache"].get("misses", 0)
        table([
            ("cold build (empty ccache)", f"{cold:7.2f} s"),
            ("no-op rebuild (same plan)", f"{noop:7.2f} s"),
            ("raw ninja no-op (floor)", f"{floor:7.2f} s"),
            ("warm-ccache clean build", f"{warm:7.2f} s   ccache {hits} hits / {misses} misses"),
            ("no-op / raw ninja no-op", f"{noop / floor:7.1f} x"),
            ("no-op overhead over ninja", f"{noop - floor:7.2f} s"),
            ("warm clean / cold", f"{warm / cold:7.2f}"),
        ])
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
