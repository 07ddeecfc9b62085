"""Clean-build levers measured on a sample of a real build dir: compilers, debug info, a precompiled header, linkers.

    python bench/bench_levers.py --build-dir <cache>/build/<key> [--sample 6] [--pch-min 0.5]

A clean build of a real Triton tree is about an hour on 2 cores, so each lever is measured on what dominates it:
the ``--sample`` translation units with the largest objects in the build dir (compiled again from
``compile_commands.json``, without the compiler cache, into a scratch dir), and the link of libtriton (the build
dir's own link command, run again with another linker). Variants:

- the command as configured (gcc, ``-O2 -g`` for TritonRelBuildWithAsserts);
- ``-g1`` (line tables only), ``-g0``, ``-gsplit-dwarf``;
- clang++ of the same major version as the LLVM (``--clang``, default ``clang++-22``; ``-Wno-error`` added
  since the flags were written for gcc);
- a precompiled header of the includes at least ``--pch-min`` of the sample share (gcc ``.gch``; its own
  build time is shown apart: it is paid once per build, the saving once per translation unit);
- the libtriton link with GNU ld (bfd), gold and lld.

Prints one table; scale the per-TU figures by the build's translation-unit count (in the header line). Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import table
from tritonbuild.execute.staging import make_program

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]((?:mlir|llvm|triton)/[^>"]+)[>"]', re.M)


def largest(cmake_dir: Path, n: int) -> list[dict[str, str]]:
    """The ``n`` compile commands with the largest objects: with ``-g`` the object size follows the compile time
    closely, and ``.ninja_log``'s times are those of the last build (often ccache hits)."""
    entries = json.loads((cmake_dir / "compile_commands.json").read_text())
    sized = [(Path(e["directory"], _output(e)), e) for e in entries]
    sized = [(p.stat().st_size, e) for p, e in sized if p.is_file()]
    return [e for _, e in sorted(sized, key=lambda x: -x[0])[:n]]


def _output(entry: dict[str, str]) -> str:
    if "output" in entry:
        return entry["output"]
    argv = shlex.split(entry["command"])
    return argv[argv.index("-o") + 1]


def _argv(entry: dict[str, str], out: Path, *, compiler: str | None = None, extra: tuple[str, ...] = (),
          drop: tuple[str, ...] = (), tail: tuple[str, ...] = ()) -> list[str]:
    argv = [a for a in shlex.split(entry["command"]) if a not in drop]
    while Path(argv[0]).name in ("ccache", "sccache", "distcc"):
        argv = argv[1:]
    if compiler:
        argv[0] = compiler
    i = argv.index("-o")
    argv[i + 1] = str(out)
    return [argv[0], *extra, *argv[1:], *tail]


def compile_all(entries: list[dict[str, str]], scratch: Path, **how: object) -> float:
    start = time.perf_counter()
    for k, entry in enumerate(entries):
        argv = _argv(entry, scratch / f"{k}.o", **how)  # type: ignore[arg-type]
        subprocess.run(argv, cwd=entry["directory"], check=True, capture_output=True)
    return time.perf_counter() - start


def pch_header(entries: list[dict[str, str]], share: float, scratch: Path) -> tuple[Path, int]:
    """A header with the MLIR/LLVM/Triton includes at least ``share`` of the sample's sources have."""
    seen: Counter[str] = Counter()
    for entry in entries:
        seen.update(set(_INCLUDE.findall(Path(entry["file"]).read_text(errors="replace"))))
    common = sorted(h for h, c in seen.items() if c >= share * len(entries))
    header = scratch / "pch" / "tb_pch.h"
    header.parent.mkdir(parents=True, exist_ok=True)
    header.write_text("".join(f"#include <{h}>\n" for h in common))
    return header, len(common)


def _flags(entry: dict[str, str]) -> tuple[str, ...]:
    argv = _argv(entry, Path("x.o"))
    i = argv.index("-c")
    return tuple(argv[:i] + argv[i + 2:])


def compile_with_pch(entries: list[dict[str, str]], header: Path, scratch: Path) -> tuple[float, float]:
    """Each sample TU with ``-include`` of the header precompiled with its own flags (a PCH is only used by
    compiles with the same flags; one per flag set, as a build would make one per target). Returns the PCH
    builds' time and the compiles' time."""
    made: dict[tuple[str, ...], Path] = {}
    pch_time = tu_time = 0.0
    for k, entry in enumerate(entries):
        key = _flags(entry)
        if key not in made:
            dest = scratch / "pch" / str(len(made)) / header.name
            dest.parent.mkdir(parents=True)
            shutil.copy(header, dest)
            argv = _argv(entry, dest.with_suffix(".h.gch"), tail=("-Wno-error",))
            i = argv.index("-c")
            argv[i: i + 2] = ["-x", "c++-header", str(dest)]
            start = time.perf_counter()
            subprocess.run(argv, cwd=entry["directory"], check=True, capture_output=True)
            pch_time += time.perf_counter() - start
            made[key] = dest
        argv = _argv(entry, scratch / f"{k}.o", extra=("-include", str(made[key]), "-Winvalid-pch"),
                     tail=("-Wno-error",))  # warnings in LLVM's headers under -Werror: not what is measured
        start = time.perf_counter()
        res = subprocess.run(argv, cwd=entry["directory"], capture_output=True, text=True)
        tu_time += time.perf_counter() - start
        if res.returncode != 0:
            raise RuntimeError(f"{Path(entry['file']).name} with the PCH: {res.stderr.strip()[-1500:]}")
        if "invalid-pch" in res.stderr or "not used because" in res.stderr:
            print(f"warning: the PCH was not used for {entry['file']}", file=sys.stderr)
    return pch_time, tu_time


def link_command(cmake_dir: Path) -> tuple[list[str], str]:
    """libtriton's link command (from ``ninja -t commands``) and its output."""
    ninja = make_program(cmake_dir) or "ninja"
    target = next(line.split(":")[0] for line in subprocess.run(
        [ninja, "-C", str(cmake_dir), "-t", "targets", "all"], capture_output=True, text=True, check=True
    ).stdout.splitlines() if line.split(":")[0].endswith("libtriton.so"))
    cmds = subprocess.run([ninja, "-C", str(cmake_dir), "-t", "commands", target], capture_output=True, text=True,
                          check=True).stdout.splitlines()
    link = next(part for part in cmds[-1].split("&&") if " -o " in part)  # CMake writes ": && g++ ... && :"
    return shlex.split(link.strip()), target


def link_with(cmake_dir: Path, argv: list[str], out: Path, linker: str | None, tools: Path) -> float:
    argv = list(argv)
    while Path(argv[0]).name in ("ccache", "sccache"):
        argv = argv[1:]
    argv[argv.index("-o") + 1] = str(out)
    if linker:
        argv.insert(1, f"-fuse-ld={linker}")
    env = {**os.environ, "PATH": f"{tools}:{os.environ.get('PATH', '')}"}
    start = time.perf_counter()
    subprocess.run(argv, cwd=cmake_dir, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


class Rows(list[tuple[str, str]]):
    """The table's rows, each also printed when added: a long run that fails late keeps what it measured."""

    def append(self, row: tuple[str, str]) -> None:
        super().append(row)
        print(f"{row[0]}: {row[1]}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    parser.add_argument("--build-dir", required=True, help="a tritonbuild build dir (<cache>/build/<key>)")
    parser.add_argument("--sample", type=int, default=6)
    parser.add_argument("--pch-min", type=float, default=0.5)
    parser.add_argument("--clang", default="clang++-22")
    parser.add_argument("--only", default="g1,g0,split,clang,pch,link",
                        help="which levers to measure besides the configured compile (comma-separated)")
    ns = parser.parse_args()
    cmake_dir = Path(ns.build_dir) / "cmake"
    entries = largest(cmake_dir, ns.sample)
    total_tus = len(json.loads((cmake_dir / "compile_commands.json").read_text()))
    scratch = Path(tempfile.mkdtemp(prefix="tb-levers-"))
    rows = Rows()
    rows.append(("sample", f"{len(entries)} largest of {total_tus} translation units: "
                           + ", ".join(Path(e["file"]).name for e in entries)))
    try:
        base = compile_all(entries, scratch)
        rows.append(("gcc -O2 -g (as configured)", f"{base:7.1f} s"))
        only = set(ns.only.split(","))
        for key, label, how in [("g1", "gcc -O2 -g1", {"extra": ("-g1",), "drop": ("-g",)}),
                                ("g0", "gcc -O2 -g0", {"extra": ("-g0",), "drop": ("-g",)}),
                                ("split", "gcc -O2 -g -gsplit-dwarf", {"extra": ("-gsplit-dwarf",)}),
                                ("clang", f"{ns.clang} -O2 -g", {"compiler": shutil.which(ns.clang) or ns.clang,
                                                                 "extra": ("-Wno-error",
                                                                           "-Wno-unknown-warning-option")})]:
            if key not in only:
                continue
            t = compile_all(entries, scratch, **how)
            rows.append((label, f"{t:7.1f} s   {base / t:5.2f}x"))
        if "pch" in only:
            header, count = pch_header(entries, ns.pch_min, scratch)
            try:
                pch, t = compile_with_pch(entries, header, scratch)
                rows.append((f"gcc + PCH of {count} shared includes", f"{t:7.1f} s   {base / t:5.2f}x   "
                             f"(building the PCH {pch:.1f} s, once per flag set)"))
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                rows.append((f"gcc + PCH of {count} shared includes", f"failed: {str(exc)[:300]}"))
        if "link" in only:
            argv, target = link_command(cmake_dir)
            tools = scratch / "tools"
            tools.mkdir()
            for name in ("ld.lld", "ld.gold"):
                found = shutil.which(name) or shutil.which(f"{name}-{ns.clang.rsplit('-', 1)[-1]}")
                if found:
                    (tools / name).symlink_to(found)
            out = scratch / "libtriton.so"
            bfd = link_with(cmake_dir, argv, out, "bfd", tools)
            rows.append((f"link {target} with ld.bfd", f"{bfd:7.1f} s"))
            for linker in ("gold", "lld"):
                t = link_with(cmake_dir, argv, out, linker, tools)
                rows.append((f"link with ld.{linker}", f"{t:7.1f} s   {bfd / t:5.2f}x"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    table(list(rows))


if __name__ == "__main__":
    main()
