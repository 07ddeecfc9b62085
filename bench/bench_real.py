"""Rebuild times on a real Triton tree, side by side: tritonbuild vs raw Ninja (vs setup.py's pip path).

    python bench/bench_real.py --source PATH [tritonbuild build options...] [--edit FILE] [--setup-py]
                               [--clean | --clean-only] [--pip-python PY] [--pip-env K=V] [--zip-levels]

Every option it does not know goes to ``tritonbuild build`` (``--backends``, ``--llvm``, ``--cache-dir``, ...), so
the figures are for the build you run. It builds once to get a current build dir (that first build is not
timed), then measures in one run:

- **no-op**: ``tritonbuild build`` again (it republishes the last wheel) vs ``ninja -C <build dir> triton``;
- **one edit**: a new exported function appended to ``--edit`` (default ``lib/Analysis/Allocation.cpp``, a
  libtriton file: a real change, so ccache misses and libtriton's bytes change) then ``tritonbuild build``, vs
  another such edit then raw ``ninja`` (compile + link of that file). The edit is undone at the end and the wheel
  rebuilt;
- ``--setup-py``: the tree's own ``pip install --no-build-isolation .`` no-op (its build dir must exist: run it
  once before);
- ``--clean``: clean builds with an empty ccache: the tree's ``pip install --no-build-isolation .`` (with
  ``--pip-python``, a Python that has the tree's build requirements, and ``--pip-env`` for its offline variables)
  then tritonbuild in a fresh cache dir (hours on a small machine); ``--clean-only`` skips the rebuilds above;
  ``--keep DIR`` keeps their caches and tritonbuild's wheel in DIR;
- ``--zip-levels``: deflating the last wheel's libtriton at levels 1, 3 and 6.

Prints one table. Not a test: figures, to re-take on any tree.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import one, table, timed, tritonbuild
from tritonbuild.execute.staging import make_program


def ninja_time(build_dir: str, cwd: Path) -> float:
    # the ninja the build dir was configured with: another version may see every command as changed
    ninja = make_program(Path(build_dir) / "cmake") or "ninja"
    return timed([ninja, "-C", f"{build_dir}/cmake", "triton"], cwd=cwd)[0]


def edit(path: Path) -> None:
    n = time.time_ns()  # a real change: ccache cannot hide it (a comment it could), libtriton's bytes change
    with path.open("a") as f:
        f.write(f'\nextern "C" __attribute__((visibility("default"), used)) long tb_bench_{n}() {{ return {n}; }}\n')


def zip_levels(wheel: str) -> list[tuple[str, str]]:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith("libtriton.so"))
        data = zf.read(name)
    rows = []
    for level in (1, 3, 6):
        buf, start = io.BytesIO(), time.perf_counter()
        info = zipfile.ZipInfo(name)
        info.compress_type = zipfile.ZIP_DEFLATED
        with zipfile.ZipFile(buf, "w") as out:
            out.writestr(info, data, compresslevel=level)
        rows.append((f"zip libtriton ({len(data) / 2**20:.0f} MiB) at level {level}",
                     f"{time.perf_counter() - start:7.2f} s   {len(buf.getvalue()) / 2**20:.1f} MiB"))
    return rows


def pip_install(source: Path, env: dict[str, str], python: str = sys.executable) -> float:
    pip = [python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", "-q", "."]
    return timed(pip, cwd=source, env=env)[0]


def ninja_work(build_dir: Path) -> str:
    """What the last build ran, from ``.ninja_log`` (the newest entry per output): edges, and the seconds its
    compiles, links and other steps took: each job's wall time, summed over jobs (job-seconds: with more jobs than
    cores, a second counts more than once)."""
    spans: dict[str, int] = {}
    for log in build_dir.glob("**/.ninja_log"):
        for line in log.read_text().splitlines():
            if not line.startswith("#"):
                start, end, _, out, _ = line.split("\t")
                spans[out] = int(end) - int(start)
    kinds = {"compile": 0, "link": 0, "other": 0}
    for out, ms in spans.items():
        name = Path(out).name
        kind = "compile" if name.endswith(".o") else "link" if ".so" in name or name.endswith(".a") or "." not in name \
            else "other"
        kinds[kind] += ms
    return f"{len(spans)} edges (" + ", ".join(f"{k} {v / 1000:.0f}" for k, v in kinds.items()) + " job-s)"


def clean_builds(source: Path, args: list[str], env: dict[str, str], pip_python: str,
                 pip_env: dict[str, str], keep: str | None = None) -> list[tuple[str, str]]:
    base = Path(keep).resolve() if keep else Path(tempfile.mkdtemp(prefix="tb-bench-clean-"))
    if keep and (not base.is_dir() or any(base.iterdir())):
        raise SystemExit(f"--keep {keep}: give an empty directory that exists (the clean builds' caches go there)")
    try:  # the tree's path first: it is the one that fails on a tree it was not written for, so fail early
        pip = {**env, **pip_env, "CCACHE_DIR": str(base / "ccache-pip")}
        shutil.rmtree(source / "build", ignore_errors=True)
        setup = pip_install(source, pip, pip_python)
        pip_work = ninja_work(source / "build")
        print(f"clean pip install: {setup:.1f} s, {pip_work}", file=sys.stderr, flush=True)
        cold = {**env, "CCACHE_DIR": str(base / "ccache-tb")}
        tb, result = tritonbuild("build", "--json", "--source", str(source), *args, "--cache-dir", str(base / "cache"),
                                 "--out", str(base / "dist"), cwd=base, env=cold)
        result = one(result, "wheels")
        tb_work = ninja_work(Path(result["build_dir"]))
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    steps = ", ".join(f"{k} {v:.0f}" for k, v in result["timings"].items())
    return [("clean build, empty ccache: tritonbuild", f"{tb:7.1f} s   {tb_work}; steps: {steps}"),
            ("clean build, empty ccache: pip install .", f"{setup:7.1f} s   {pip_work}"),
            ("clean: pip / tritonbuild", f"{setup / tb:7.2f} x   (goal >= 2.5)")]


def rebuilds(source: Path, ns: argparse.Namespace, extra: list[str], env: dict[str, str]) -> list[tuple[str, str]]:
    """No-op and one-edit builds of tritonbuild against raw Ninja on a current build dir."""
    cwd = Path.cwd()
    build = ["build", "--json", "--source", str(source), *extra]
    first = one(tritonbuild(*build, cwd=cwd, env=env)[1], "wheels")  # a current build dir and wheel (not timed)
    noop, again = tritonbuild(*build, cwd=cwd, env=env)
    again = one(again, "wheels")
    if not again.get("republished"):  # the first run above had to package (an older build dir): once more
        noop, again = tritonbuild(*build, cwd=cwd, env=env)
        again = one(again, "wheels")
    ninja_noop = min(ninja_time(first["build_dir"], cwd) for _ in range(3))
    target = source / ns.edit
    original = target.read_bytes()
    try:
        edit(target)
        one_edit, edited = tritonbuild(*build, cwd=cwd, env=env)
        edit(target)
        ninja_edit = ninja_time(first["build_dir"], cwd)
    finally:
        target.write_bytes(original)
    tritonbuild(*build, cwd=cwd, env=env)  # back to the unedited wheel
    rows = [
        ("wheel", f"{Path(first['wheel']).name} ({first['size'] / 2**20:.1f} MiB)"),
        ("no-op: tritonbuild build", f"{noop:7.2f} s   republished: {again.get('republished')}"),
        ("no-op: raw ninja", f"{ninja_noop:7.2f} s"),
        ("no-op: tritonbuild - ninja", f"{noop - ninja_noop:7.2f} s   (goal <= 1.5 s)"),
        (f"one edit ({ns.edit}): tritonbuild build", f"{one_edit:7.1f} s   "
         + ", ".join(f"{k} {v:.1f}" for k, v in edited["timings"].items())),
        ("one edit: raw ninja (compile + link)", f"{ninja_edit:7.1f} s"),
        ("one edit: tritonbuild / ninja", f"{one_edit / ninja_edit:7.2f} x   (goal <= 1.25)"),
    ]
    if ns.zip_levels:
        rows += zip_levels(first["wheel"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--source", required=True)
    parser.add_argument("--edit", default="lib/Analysis/Allocation.cpp")
    parser.add_argument("--setup-py", action="store_true")
    parser.add_argument("--clean", action="store_true")
    parser.add_argument("--clean-only", action="store_true", help="only the clean builds (implies --clean)")
    parser.add_argument("--pip-python", default=sys.executable,
                        help="the Python whose pip runs the tree's setup.py (it needs the tree's build requirements)")
    parser.add_argument("--pip-env", action="append", default=[], metavar="KEY=VALUE",
                        help="an environment variable for the tree's pip path only (LLVM_SYSPATH, ...)")
    parser.add_argument("--zip-levels", action="store_true")
    parser.add_argument("--keep", metavar="DIR",
                        help="an empty dir for the clean builds' ccaches, cache dir and wheel, kept afterwards")
    ns, extra = parser.parse_known_args()
    source = Path(ns.source).resolve()
    env = dict(os.environ)
    pip_env = dict(item.split("=", 1) for item in ns.pip_env)
    rows = [] if ns.clean_only else rebuilds(source, ns, extra, env)
    if ns.setup_py:
        rows.append(("no-op: pip install --no-build-isolation .",
                     f"{pip_install(source, {**env, **pip_env}, ns.pip_python):7.2f} s"))
    if ns.clean or ns.clean_only:
        rows += clean_builds(source, extra, env, ns.pip_python, pip_env, ns.keep)
    table(rows)


if __name__ == "__main__":
    main()
