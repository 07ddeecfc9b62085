"""`tritonbuild develop` against raw Ninja on the example tree: no-op and one-file rebuilds.

    python bench/bench_develop.py
    python bench/bench_develop.py --source ~/src/triton -- --backends 'nvidia;amd' --llvm /usr/lib/llvm-22

With ``--source`` (a real tree, left unedited) it times the first develop, the no-op against Ninja's, in a venv
of its own; the rest of the options go to ``develop`` (``--cache-dir`` too, to reuse a filled cache).

Prints seconds for each, next to `ninja -C <build dir> triton` doing the same work, and the no-op overhead
(target: at most 1.0 s above Ninja's own no-op).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import example_workspace, one, table, timed, tritonbuild
from tritonbuild.execute.staging import make_program


def real_tree(source: str, rest: list[str], base: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    env = {"VIRTUAL_ENV": str(base / "venv")}
    args = ["--source", source, *rest]
    cold, _ = tritonbuild("develop", *args, cwd=base, env=env)
    _, plan = tritonbuild("plan", "--json", *args, cwd=base, env=env)
    build = Path(one(plan, "plans")["cmake"]["build_dir"]) / "dev"
    ninja = [make_program(build) or "ninja", "-C", str(build), "triton"]
    noop = min(tritonbuild("develop", *args, cwd=base, env=env)[0] for _ in range(5))
    ninja_noop = min(timed(ninja, cwd=base)[0] for _ in range(5))
    table([("first develop (configure + build)", f"{cold:7.2f} s"), ("no-op develop", f"{noop:7.3f} s"),
           ("raw ninja no-op", f"{ninja_noop:7.3f} s"),
           ("no-op overhead (goal <= 0.5 s)", f"{noop - ninja_noop:7.3f} s")])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", help="a real Triton checkout (default: the bundled example tree, edited)")
    ap.add_argument("rest", nargs="*", help="more develop options, after --")
    cli = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tb-bench-"))
    if cli.source:
        try:
            real_tree(cli.source, cli.rest, base)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        return
    try:
        tree, plugin, _ = example_workspace(base)  # nvidia;amd: spirv's download is not needed
        subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
        env = {"VIRTUAL_ENV": str(base / "venv"), "CCACHE_DIR": str(base / "ccache")}
        args = ["--source", str(tree), "--backends", "nvidia;amd", "--plugin-dir", str(plugin),
                "--cache-dir", str(base / "cache")]
        cold, _ = tritonbuild("develop", *args, cwd=base, env=env)
        _, plan = tritonbuild("plan", "--json", *args, cwd=base, env=env)
        build = Path(one(plan, "plans")["cmake"]["build_dir"]) / "dev"
        ninja = [make_program(build) or "ninja", "-C", str(build), "triton"]  # the build dir's own ninja
        noop = min(tritonbuild("develop", *args, cwd=base, env=env)[0] for _ in range(5))
        ninja_noop = min(timed(ninja, cwd=base)[0] for _ in range(5))
        cc = tree / "third_party" / "nvidia" / "triton_nvidia.cc"

        def touch_and(run: list[str] | None) -> float:
            cc.write_text(cc.read_text() + f"// {time.time_ns()}\n")  # a real change: ccache cannot hide it
            if run is None:
                return tritonbuild("develop", *args, cwd=base, env=env)[0]
            return timed(run, cwd=base)[0]

        one_file = min(touch_and(None) for _ in range(3))
        ninja_one = min(touch_and(ninja) for _ in range(3))
        table([
            ("first develop (configure + build)", f"{cold:7.2f} s"),
            ("no-op develop", f"{noop:7.3f} s"),
            ("raw ninja no-op", f"{ninja_noop:7.3f} s"),
            ("no-op overhead (target <= 1.0 s)", f"{noop - ninja_noop:7.3f} s"),
            ("one-file develop", f"{one_file:7.2f} s"),
            ("raw ninja one-file", f"{ninja_one:7.2f} s"),
            ("one-file overhead", f"{one_file - ninja_one:7.2f} s"),
        ])
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
