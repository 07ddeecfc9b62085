"""Helpers shared by the benchmarks: run tritonbuild as a user would and time it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def timed(argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return elapsed, proc.stdout


def tritonbuild(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, Any]:
    elapsed, out = timed([sys.executable, "-m", "tritonbuild", *args], cwd=cwd, env=env)
    try:
        return elapsed, json.loads(out)
    except json.JSONDecodeError:
        return elapsed, out


def one(data: Any, key: str) -> Any:
    """The one element of the list ``key`` (``plans``, ``wheels``) of a ``--json`` run's object (schema 2)."""
    [item] = data[key]
    return item


def best_of(n: int, argv: list[str], *, cwd: Path, env: dict[str, str] | None = None) -> float:
    return min(timed(argv, cwd=cwd, env=env)[0] for _ in range(n))


def table(rows: list[tuple[str, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def example_workspace(base: Path) -> tuple[Path, Path, list[str]]:
    """The example tree and a plugin under ``base`` (what every build benchmark measures), and the ``--dep`` that
    supplies the spirv backend's configure-time download."""
    from tritonbuild import example

    tree = example.write_tree(base / "src" / "triton")
    plugin = example.write_plugin(base / "src" / "triton-shared", "triton_shared")
    abi = example.write_spirv_abi(base / "src" / "spirv-kernel-abi")
    return tree, plugin, ["--dep", f"spirv-kernel-abi={abi}"]
