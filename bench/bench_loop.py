"""The daily loop (issue 45) side by side with ninja, in one run: no-op `build` and `develop`, one `.cpp` edit in
third_party/nvidia, and a warm `plan`, on the example tree carrying 150 MB of package data.

    python bench/bench_loop.py [--data-mb 150] [--runs 3]
    python bench/bench_loop.py --source TREE [--edit third_party/nvidia/triton_nvidia.cc] -- --backends nvidia ...

With ``--source``, a real checkout instead (left as it was found: the edits are undone); the arguments after ``--``
go to every tritonbuild command.

Each figure is the best of ``--runs``; ninja runs in the same build dir on the same edit. The goals: no-op build
and develop <= ninja's no-op + 0.5 s; one edit <= 1.25 x ninja + 0.5 s; plan <= 0.3 s warm. Not a test: figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import example_workspace, one, table, timed, tritonbuild
from tritonbuild.execute.staging import make_program


def best(runs: int, fn: Callable[[], float]) -> float:
    return min(fn() for _ in range(runs))


def verdict(ours: float, goal: float) -> str:
    return f"{ours:7.3f} s  (goal <= {goal:.3f} s: {'met' if ours <= goal else 'MISSED'})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-mb", type=int, default=150, help="package data added to the nvidia backend (MB)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--source", type=Path, help="a real Triton checkout instead of the example tree")
    ap.add_argument("--edit", default="third_party/nvidia/triton_nvidia.cc", help="the .cpp edited (under --source)")
    ap.add_argument("rest", nargs="*", help="after --: more tritonbuild arguments (with --source)")
    cli = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="tb-bench-loop-"))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
        env = {"VIRTUAL_ENV": str(base / "venv"), "CCACHE_DIR": os.environ.get("CCACHE_DIR", str(base / "ccache"))}
        if cli.source:
            tree = cli.source.resolve()
            args = ["--source", str(tree), "--cache-dir", str(base / "cache"), *cli.rest]
            cc = tree / cli.edit
            kept = cc.read_bytes()
            try:
                table(loop(base, cc, args, env, cli.runs))
            finally:
                cc.write_bytes(kept)
            return
        tree, plugin, _ = example_workspace(base)
        data = tree / "third_party" / "nvidia" / "backend" / "lib" / "bench-data.bin"
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_bytes(os.urandom(cli.data_mb << 20))  # incompressible: the packer's worst case
        args = ["--source", str(tree), "--backends", "nvidia;amd", "--plugin-dir", str(plugin),
                "--cache-dir", str(base / "cache")]
        table(loop(base, tree / "third_party" / "nvidia" / "triton_nvidia.cc", args, env, cli.runs))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def loop(base: Path, cc: Path, args: list[str], env: dict[str, str], runs: int) -> list[tuple[str, str]]:
    build = ["build", "--out", str(base / "dist"), *args]
    print("cold build, then cold develop (silent until each ends) ...", file=sys.stderr, flush=True)
    cold_build = tritonbuild(*build, cwd=base, env=env)[0]
    cold_dev = tritonbuild("develop", *args, cwd=base, env=env)[0]
    print(f"cold: {cold_build:.1f} s / {cold_dev:.1f} s; measuring (keep the machine idle) ...", file=sys.stderr,
          flush=True)
    plan = one(tritonbuild("plan", "--json", *args, cwd=base, env=env)[1], "plans")
    root = Path(plan["cmake"]["build_dir"])
    ninja_b = [make_program(root / "cmake") or "ninja", "-C", str(root / "cmake"), "triton"]
    ninja_d = [make_program(root / "dev") or "ninja", "-C", str(root / "dev"), "triton"]

    def edit() -> None:
        n = time.time_ns()  # a new function, not a comment: the preprocessor drops comments and ccache would hit
        cc.write_text(cc.read_text() + f'extern "C" int tb_bench_edit_{n}() {{ return {n % 1000}; }}\n')

    def ours(*cmd: str) -> Callable[[], float]:
        return lambda: tritonbuild(*cmd, cwd=base, env=env)[0]

    def edited(run: Callable[[], float]) -> Callable[[], float]:
        return lambda: (edit(), run())[1]

    def ninja(cmd: list[str]) -> Callable[[], float]:
        return lambda: timed(cmd, cwd=base)[0]

    noop_b, noop_bn = best(runs, ours(*build)), best(runs, ninja(ninja_b))
    noop_d, noop_dn = best(runs, ours("develop", *args)), best(runs, ninja(ninja_d))
    edit_b, edit_bn = best(runs, edited(ours(*build))), best(runs, edited(ninja(ninja_b)))
    edit_d, edit_dn = best(runs, edited(ours("develop", *args))), best(runs, edited(ninja(ninja_d)))
    tritonbuild("build", "--out", str(base / "dist"), *args, cwd=base, env=env)  # the wheel of the last edit
    warm_plan = best(max(runs, 5), ours("plan", *args))
    return [
        ("cold build / cold develop", f"{cold_build:7.2f} s / {cold_dev:7.2f} s"),
        ("ninja no-op (build dir / develop dir)", f"{noop_bn:7.3f} s / {noop_dn:7.3f} s"),
        ("no-op build", verdict(noop_b, noop_bn + 0.5)),
        ("no-op develop", verdict(noop_d, noop_dn + 0.5)),
        ("ninja after one .cpp edit (build / develop dir)", f"{edit_bn:7.3f} s / {edit_dn:7.3f} s"),
        ("build after one .cpp edit", verdict(edit_b, 1.25 * edit_bn + 0.5)),
        ("develop after one .cpp edit", verdict(edit_d, 1.25 * edit_dn + 0.5)),
        ("plan, warm", verdict(warm_plan, 0.3)),
    ]


if __name__ == "__main__":
    main()
