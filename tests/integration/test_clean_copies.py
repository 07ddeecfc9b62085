"""``status`` and ``clean --all`` beyond the build dirs (#36): the patched copies ``--patch`` makes under
``<cache>/patched`` and llvm compat's exported trees under ``<cache>/compat/trees`` are listed with their sizes and
removed, each only when tritonbuild made it (its marker) and nothing running holds it; the rest is named."""

from __future__ import annotations

import contextlib
import difflib
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from tests.helpers import one_of
from tests.integration.conftest import LLVM, flat, git_commit, run_cli
from tritonbuild import example
from tritonbuild.execute.lock import MARKER
from tritonbuild.gather.commits import MARKER as EXPORT_MARK

# Holds a lock on argv[1] until killed (argv[2]: "flock", as --patch takes the copy's lock, or "filelock", as a
# build takes a build dir's).
HOLDER = textwrap.dedent("""
    import fcntl, sys, time
    if sys.argv[2] == "flock":
        f = open(sys.argv[1], "a")
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
    else:
        from filelock import FileLock
        lock = FileLock(sys.argv[1])  # kept: a FileLock collected is released
        lock.acquire()
    print("held", flush=True)
    time.sleep(300)
""")


@contextlib.contextmanager
def held(lock_file: Path, kind: str) -> Iterator[None]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock_file), kind], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()


def _export(cache: Path, sha: str) -> Path:
    tree = cache / "compat" / "trees" / sha
    (tree / "lib").mkdir(parents=True)
    (tree / "lib" / "Core.cpp").write_bytes(b"x" * 300_000)
    (tree / EXPORT_MARK).write_text(json.dumps({"commit": sha, "tree": sha}) + "\n")
    return tree


def test_status_lists_and_clean_all_removes_patched_copies_and_compat_trees(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    git_commit(tree)
    lines = (tree / "lib/Core.cpp").read_text().splitlines(keepends=True)
    (tmp_path / "a.diff").write_text("".join(difflib.unified_diff(lines, ["// patched\n", *lines], "a/lib/Core.cpp",
                                                                  "b/lib/Core.cpp")))
    cache = tmp_path / "cache"
    plan = run_cli("plan", "--json", "--source", str(tree), "--llvm", str(LLVM), "--cache-dir", str(cache),
                   "--offline", "--patch", "a.diff", cwd=tmp_path)
    copy = Path(one_of(plan.stdout, "plans")["source"]["root"]).parent
    free, busy = _export(cache, "a" * 40), _export(cache, "b" * 40)
    canary = cache / "build" / "0123456789abcdef"  # a build dir llvm compat's canary made from the busy tree
    canary.mkdir(parents=True)
    (canary / MARKER).write_text("tritonbuild build dir\n")
    (canary / "plan.json").write_text(json.dumps({"key": canary.name, "source": {"root": str(busy)}}))
    mine, theirs = cache / "patched" / "mine", cache / "compat" / "trees" / "notes"
    for d in (mine, theirs):
        d.mkdir(parents=True)
        (d / "keep.txt").write_text("a user's own\n")

    status = flat(run_cli("status", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert "patched copy" in status and str(copy) in status and str(tree) in status
    assert f"commit {'a' * 40}" in status and "0.3 MiB" in status and str(mine) not in status

    dry = flat(run_cli("clean", "--all", "--dry-run", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert "3 patched copy or llvm compat dir(s), would free" in dry
    assert (copy / "tree" / "lib" / "Core.cpp").is_file() and free.is_dir()

    with held(copy.with_name(copy.name + ".lock"), "flock"), held(canary / ".tritonbuild.lock", "filelock"):
        out = flat(run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert f"{copy} is in use by a running tritonbuild" in out and (copy / "tree" / "lib" / "Core.cpp").is_file()
    assert f"{busy} is in use by a running tritonbuild (the build dir {canary}" in out and busy.is_dir()
    assert not free.exists() and "1 patched copy or llvm compat dir(s), freed 0.3 MiB; 4 left alone" in out
    assert f"{mine} is no patched copy tritonbuild made (no marker): left alone" in out
    assert f"{theirs} is no exported tree tritonbuild made (no marker): left alone" in out

    out = flat(run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert not copy.exists() and not busy.exists() and not copy.with_name(copy.name + ".lock").exists()
    assert (mine / "keep.txt").is_file() and (theirs / "keep.txt").is_file()
    assert "2 patched copy or llvm compat dir(s), freed" in out and tree.is_dir()


def test_a_planted_plan_json_neither_crashes_nor_hangs_status_clean_or_gc(tmp_path: Path) -> None:
    """A dir under <cache>/build that tritonbuild did not make (a restored CI cache): a plan.json nested too deep for
    json, and one that is a FIFO (opening it would block), are no plan: every command that scans build dirs ends."""
    import os

    cache = tmp_path / "cache"
    deep, fifo = cache / "build" / "aaaaaaaaaaaaaaa5", cache / "build" / "aaaaaaaaaaaaaaa6"
    deep.mkdir(parents=True)
    fifo.mkdir()
    (deep / "plan.json").write_text("[" * 100_000)
    os.mkfifo(fifo / "plan.json")
    for args in (["status"], ["status", "--json"], ["clean", "--all", "--dry-run"], ["clean", "--all"],
                 ["llvm", "gc", "--dry-run"]):
        proc = run_cli(*args, "--cache-dir", str(cache), cwd=tmp_path, check=False, timeout=60)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr + proc.stdout, args
    assert (deep / "plan.json").is_file() and (fifo / "plan.json").is_fifo()  # not tritonbuild's: left alone
