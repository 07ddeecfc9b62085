"""Issue 35, nothing lost: clean and gc respect locks and never follow links; children die with tritonbuild; the
output dir is checked before any work; a user's own compile_commands.json link is kept; Ctrl-C is "Interrupted."."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.helpers import PlainReporter, one_of
from tests.integration.conftest import cuda_stub, flat, run_cli, small_tmpfs
from tritonbuild import example
from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.execute import builddirs
from tritonbuild.execute.lock import MARKER
from tritonbuild.reporter import silent

LLVM = "/usr/lib/llvm-22"

# Holds a FileLock on argv[1] until killed: another tritonbuild run using that build dir or LLVM entry.
HOLDER = textwrap.dedent("""
    import sys, time
    from filelock import FileLock
    lock = FileLock(sys.argv[1])
    lock.acquire()
    print("held", flush=True)
    time.sleep(300)
""")


@contextlib.contextmanager
def held(lock_file: Path) -> Iterator[subprocess.Popen[str]]:
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock_file)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def build_dir(cache: Path, key: str, files: int = 3) -> Path:
    d = cache / "build" / key
    (d / "cmake" / "obj").mkdir(parents=True)
    for i in range(files):
        (d / "cmake" / "obj" / f"unit{i}.o").write_bytes(b"\0" * 4096)
    return d


def llvm_entry(cache: Path, name: str) -> Path:
    entry = cache / "llvm" / name
    (entry / "lib").mkdir(parents=True)
    (entry / "lib" / "libLLVM.a").write_bytes(b"\0" * 8192)
    (entry / "tritonbuild-llvm.json").write_text("{}\n")
    return entry


def one_paragraph(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert len([line for line in stderr.strip().splitlines() if line.strip()]) <= 6, stderr  # one wrapped paragraph


@contextlib.contextmanager
def read_only(path: Path, fill: Callable[[Path], None]) -> Iterator[Path]:
    """``path`` as a tmpfs filled by ``fill`` and then made read-only (the test runs as root, whom permissions do
    not stop; skipped where mounting is not allowed)."""
    with small_tmpfs(path, "16m"):
        fill(path)
        if subprocess.run(["mount", "-o", "remount,ro", str(path)], capture_output=True, check=False).returncode:
            pytest.skip("cannot remount a tmpfs read-only here")
        yield path


# 1. clean and gc take the locks build, develop and fetch take


def test_clean_and_gc_leave_what_a_running_run_holds(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    busy, idle = build_dir(cache, "busybusybusybusy"), build_dir(cache, "idleidleidleidle")
    for d in (busy, idle):
        (d / MARKER).write_text("tritonbuild build dir\n")
    (busy / "plan.json").write_text(json.dumps({"key": busy.name, "llvm": {"prefix": LLVM}}))
    used_llvm, free_llvm = llvm_entry(cache, "llvm-busy"), llvm_entry(cache, "llvm-free")
    with held(busy / ".tritonbuild.lock"), held(cache / "llvm" / ".locks" / "llvm-busy.lock"):
        out = run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path)
        gc = run_cli("llvm", "gc", "--cache-dir", str(cache), cwd=tmp_path)
        assert (busy / "cmake" / "obj" / "unit0.o").is_file()  # nothing deleted under a held lock
        assert used_llvm.is_dir() and (used_llvm / "lib" / "libLLVM.a").is_file()
    assert not idle.exists() and not free_llvm.exists()
    text = flat(out.stdout)
    assert f"{busy} is in use by a running tritonbuild (its lock is held): left alone" in text
    assert "1 build dir(s), freed" in text and "1 left alone" in text
    assert f"keep {used_llvm} (in use by another tritonbuild run (its lock is held))" in flat(gc.stdout)
    assert f"remove {free_llvm}" in flat(gc.stdout)


# 2. clean --all removes only tritonbuild's dirs, never through a link; unwritable dirs are one paragraph


def test_clean_all_removes_only_tritonbuild_dirs_and_never_follows_a_link(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    marked = build_dir(cache, "0123456789abcdef")
    (marked / MARKER).write_text("tritonbuild build dir\n")
    planned = build_dir(cache, "fedcba9876543210")  # a build dir from before the marker: its plan names it
    (planned / "plan.json").write_text(json.dumps({"key": "fedcba9876543210"}))
    stranger = build_dir(cache, "not-a-build")  # someone's own dir in the cache
    (stranger / "plan.json").write_text(json.dumps({"key": "another-name"}))
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work\n")
    (precious / MARKER).write_text("looks like a build dir\n")
    (cache / "build" / "linked").symlink_to(precious)
    outside_llvm = llvm_entry(tmp_path, "real-llvm")
    (cache / "llvm").mkdir()
    (cache / "llvm" / "linked-llvm").symlink_to(outside_llvm)

    out = run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path)
    gc = run_cli("llvm", "gc", "--cache-dir", str(cache), cwd=tmp_path)

    assert not marked.exists() and not planned.exists()
    assert (stranger / "cmake" / "obj" / "unit0.o").is_file()
    assert (precious / "thesis.tex").read_text() == "years of work\n"
    assert (cache / "build" / "linked").is_symlink()
    assert (outside_llvm / "lib" / "libLLVM.a").is_file() and (cache / "llvm" / "linked-llvm").is_symlink()
    text = flat(out.stdout)
    assert "2 build dir(s), freed" in text and "2 left alone" in text
    assert f"{stranger} holds no tritonbuild build" in text
    assert f"{cache / 'build' / 'linked'} is a link (to {precious}), not a build dir: left alone" in text
    assert f"keep {cache / 'llvm' / 'linked-llvm'} (a link: left alone, and its target too)" in flat(gc.stdout)


def test_clean_gc_and_example_on_a_read_only_disk_are_one_paragraph(tmp_path: Path) -> None:
    cache = tmp_path / "cache"

    def fill(root: Path) -> None:
        (build_dir(root, "0123456789abcdef") / MARKER).write_text("x\n")
        (root / "build" / "0123456789abcdef" / ".tritonbuild.lock").write_text("")
        llvm_entry(root, "llvm-old")
        (root / "llvm" / ".locks").mkdir()
        (root / "llvm" / ".locks" / "llvm-old.lock").write_text("")

    with read_only(cache, fill):
        out = run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path, check=False)
        assert out.returncode == 3, out.stderr
        one_paragraph(out.stderr)
        assert "Could not remove 1 dir(s)" in flat(out.stderr) and "Read-only file system" in out.stderr
        assert (cache / "build" / "0123456789abcdef" / "cmake" / "obj" / "unit0.o").is_file()
        gc = run_cli("llvm", "gc", "--cache-dir", str(cache), cwd=tmp_path, check=False)
        assert gc.returncode == 3, gc.stderr
        one_paragraph(gc.stderr)
        assert "Could not remove 1 LLVM cache entry" in flat(gc.stderr)
        assert (cache / "llvm" / "llvm-old" / "lib" / "libLLVM.a").is_file()
        ex = run_cli("example", str(cache / "tree"), cwd=tmp_path, check=False)
        assert ex.returncode == 2, ex.stderr
        one_paragraph(ex.stderr)
        assert "Cannot write the example into" in flat(ex.stderr)


def test_example_refuses_a_link_and_undoes_a_failed_write(tmp_path: Path) -> None:
    target = tmp_path / "somewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    ex = run_cli("example", str(tmp_path / "link"), cwd=tmp_path, check=False)
    assert ex.returncode == 2 and "is a link" in flat(ex.stderr), ex.stderr
    one_paragraph(ex.stderr)
    assert list(target.iterdir()) == []
    ex = run_cli("example", "", cwd=target, check=False)  # the empty name: not the current directory
    assert ex.returncode == 2 and "is empty, which would mean the current directory" in flat(ex.stderr), ex.stderr
    assert list(target.iterdir()) == []
    with small_tmpfs(tmp_path / "tiny", "64k"):  # too small for the tree: the write fails halfway
        ex = run_cli("example", str(tmp_path / "tiny" / "dest"), cwd=tmp_path, check=False)
        assert ex.returncode == 2, ex.stderr
        one_paragraph(ex.stderr)
        assert "No space left on device" in ex.stderr
        assert not (tmp_path / "tiny" / "dest").exists()  # what was written is gone


# 3. children die with tritonbuild

SLOW_NINJA = textwrap.dedent("""
    rule slow
      command = sleep 37
    build a: slow
    build b: slow
    default a b
""")

# A tritonbuild-like process: runs Ninja through proc.run_logged, as build and develop do.
DRIVER = textwrap.dedent("""
    import io, os, sys
    from pathlib import Path
    from tritonbuild.system import proc
    from tests.helpers import PlainReporter

    class Tracker:
        total = done = 0
        phase = ""
        def feed(self, line): pass

    work = Path(sys.argv[1])
    argv = ["ninja", "-j2"]
    if sys.argv[2] == "wrapped":  # as a full build runs it: an interpreter (scikit-build-core) above CMake and Ninja
        argv = [sys.executable, "-c", "import subprocess; subprocess.run(['ninja', '-j2'])"]
    proc.record_groups_in(work / ".tritonbuild.pgid")
    with open(work / "log.txt", "w") as log:
        rc = proc.run_logged(argv, cwd=work, env=os.environ, log=log, tracker=Tracker(),
                             reporter=PlainReporter(io.StringIO()), label="slow")
    print("rc", rc, flush=True)
""")


def sleepers(where: Path) -> list[int]:
    """Processes running `sleep 37` with their current dir in ``where``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(f"/proc/{name}/cwd"))
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argv[:2] == [b"sleep", b"37"] and cwd.is_relative_to(where) and state != "Z":
            found.append(int(name))
    return found


def wait_for(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


@pytest.mark.parametrize("shape", ["ninja", "wrapped"])
def test_kill_9_of_tritonbuild_takes_its_compilers_with_it(tmp_path: Path, shape: str) -> None:
    """``ninja``: the death signal reaches Ninja, which stops its commands; ``wrapped``: it reaches only the
    interpreter above Ninja, and the watchdog stops the rest."""
    work = tmp_path / "build"
    work.mkdir()
    (work / "build.ninja").write_text(SLOW_NINJA)
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(work), shape], start_new_session=True)
    try:
        assert wait_for(lambda: len(sleepers(work)) == 2, 30), "ninja did not start its two slow edges"
        record = json.loads((work / ".tritonbuild.pgid").read_text())
        assert record["pid"] == driver.pid and len(record["groups"]) == 1
        group = record["groups"][0]
        assert group != os.getpgid(driver.pid)  # the children have a group of their own
        driver.kill()  # kill -9: no finally, no handler runs in tritonbuild
        driver.wait()
        assert wait_for(lambda: not sleepers(work), 10), f"still running: {sleepers(work)}"
    finally:
        for pid in sleepers(work):
            os.kill(pid, signal.SIGKILL)


def test_the_next_run_stops_what_a_dead_run_left_in_the_build_dir(tmp_path: Path) -> None:
    from tritonbuild.execute.lock import lock
    from tritonbuild.gather.request import Request, make_plan

    tree = example.write_tree(tmp_path / "src" / "triton")
    plan = make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(tmp_path / "cache"), "llvm": LLVM},
                                      os.environ, tmp_path, warn=silent))
    root = Path(plan.cmake.build_dir)
    (root / "cmake").mkdir(parents=True)
    # what survives a run whose Ninja died without passing the signal on: two compilers in process groups of their
    # own (as Ninja starts them), in the session tritonbuild started, with no parent left
    orphaner = subprocess.run([sys.executable, "-c", ORPHANER], cwd=root / "cmake", capture_output=True, text=True,
                              check=True, start_new_session=True)
    session = int(orphaner.stdout.split()[0])
    orphans = [int(p) for p in orphaner.stdout.split()[1:]]
    unrelated = subprocess.Popen(["sleep", "37"], cwd=tmp_path, start_new_session=True)  # not in the build dir
    try:
        assert wait_for(lambda: len(sleepers(root)) == 2, 10)
        (root / ".tritonbuild.pgid").write_text(json.dumps({"pid": 999999, "groups": [unrelated.pid, session]}))
        out = io.StringIO()
        start = time.monotonic()
        held_lock = lock(plan, PlainReporter(out))
        try:
            said = out.getvalue().splitlines()
            assert not sleepers(root), "the next run started beside the old compilers"
            assert time.monotonic() - start < 8
            assert unrelated.poll() is None  # its group is recorded, but it works elsewhere: not ours to stop
            assert len(said) == 1 and f"process group {session}" in said[0] and str(root) in said[0], said
            assert "earlier tritonbuild run (pid 999999)" in said[0]
            assert (root / MARKER).is_file()
        finally:
            held_lock.release()
        assert not (root / ".tritonbuild.pgid").exists()
    finally:
        unrelated.kill()
        unrelated.wait()
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# Starts two `sleep 37` in process groups of their own and exits, leaving them to init.
ORPHANER = textwrap.dedent("""
    import os, subprocess
    kids = [subprocess.Popen(["sleep", "37"], process_group=0, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(2)]
    print(os.getsid(0), *[k.pid for k in kids])
""")


# 4. the output dir is checked before any work


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return example.write_tree(tmp_path / "src" / "triton")


def build_args(tree: Path, cache: Path, out: Path) -> list[str]:
    return ["build", "--source", str(tree), "--cache-dir", str(cache), "--llvm", LLVM, "--out", str(out)]


def test_an_output_dir_that_cannot_take_the_wheel_is_refused_before_any_work(tmp_path: Path, tree: Path) -> None:
    cache = tmp_path / "cache"
    key = one_of(run_cli("plan", "--json", "--source", str(tree), "--cache-dir", str(cache), "--llvm", LLVM,
                         cwd=tmp_path).stdout, "plans")["key"]
    a_file = tmp_path / "a-file"
    a_file.write_text("not a dir\n")
    cases = {
        cache / "build" / key / "last-wheel": "inside tritonbuild's build dirs",
        cache / "llvm" / "wheels": "inside tritonbuild's LLVM cache",
        a_file: "it is a file, not a directory",
        tree / "python" / "triton" / "dist": "inside the source's Python package",
        a_file / "sub": "it cannot be written (Not a directory)",
        cache / "compat" / "trees": "inside tritonbuild's cache (compat/)",  # a reviewer's: wheels among its dirs
        cache / "patched" / "x": "inside tritonbuild's cache (patched/)",
        cache: "it is tritonbuild's cache root itself",
    }
    for out, why in cases.items():
        start = time.monotonic()
        proc = run_cli(*build_args(tree, cache, out), cwd=tmp_path, check=False)
        assert proc.returncode == 2, (out, proc.stderr)
        one_paragraph(proc.stderr)
        assert why in flat(proc.stderr) and "Nothing was built" in flat(proc.stderr), proc.stderr
        assert time.monotonic() - start < 30
        assert not (cache / "build").exists()  # no build dir made, nothing locked or provisioned
    assert not (tree / "python" / "triton" / "dist").exists()


def test_a_read_only_output_dir_is_refused_before_any_work(tmp_path: Path, tree: Path) -> None:
    cache = tmp_path / "cache"
    with read_only(tmp_path / "ro", lambda root: (root / "dist").mkdir()):
        proc = run_cli(*build_args(tree, cache, tmp_path / "ro" / "dist"), cwd=tmp_path, check=False)
    assert proc.returncode == 2, proc.stderr
    one_paragraph(proc.stderr)
    assert "it cannot be written (Read-only file system)" in flat(proc.stderr)
    assert not (cache / "build").exists()


def test_a_full_output_disk_at_publish_time_names_the_output_dir(tmp_path: Path) -> None:
    from tritonbuild.errors import DiskProblem
    from tritonbuild.wheel.publish import publish

    wheel = tmp_path / "triton-3.0.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(os.urandom(512 * 1024))
    with small_tmpfs(tmp_path / "out", "256k") as out:
        (out / "old-1.0-py3-none-any.whl").write_bytes(b"kept")
        with pytest.raises(DiskProblem) as err:
            publish(wheel, out)
        assert sorted(p.name for p in out.iterdir()) == ["old-1.0-py3-none-any.whl"]  # no half-written wheel
    assert f"the output dir {out} failed. Writing {out}/.{wheel.name}.{os.getpid()}.partial failed: No space left " \
        f"on device (on the file system mounted at {out}, with " in str(err.value)
    assert "build dir" not in str(err.value).split(".")[0]
    assert err.value.exit_code == 3


def test_a_wheel_is_linked_into_an_output_dir_on_the_same_file_system_and_stays_as_published(tmp_path: Path) -> None:
    """No copy of a 180 MB wheel when the output dir shares the build dir's file system (#45); the build dir's copy
    is only ever unlinked, so the published wheel keeps its bytes when the next build writes a new one."""
    from tritonbuild.wheel.publish import publish

    wheel = tmp_path / "tmp-wheels" / "triton-3.0.0-cp311-cp311-linux_x86_64.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"first")
    final = publish(wheel, tmp_path / "out")
    assert final.read_bytes() == b"first" and final.stat().st_ino == wheel.stat().st_ino
    shutil.rmtree(wheel.parent)  # what the next build does first
    wheel.parent.mkdir()
    wheel.write_bytes(b"second")
    assert final.read_bytes() == b"first"
    assert publish(wheel, tmp_path / "out").read_bytes() == b"second"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [wheel.name]


# 5. a user's own compile_commands.json link is kept


def test_only_a_compile_commands_link_tritonbuild_made_is_replaced(tmp_path: Path, tree: Path) -> None:
    from tritonbuild.execute.prepare import link_compile_commands
    from tritonbuild.gather.request import Request, make_plan

    plan = make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(tmp_path / "cache"), "llvm": LLVM,
                                       "stable_paths": False}, os.environ, tmp_path, warn=silent))
    db = Path(plan.cmake.build_dir) / "cmake" / "compile_commands.json"
    db.parent.mkdir(parents=True)
    db.write_text("[]\n")
    mine = tmp_path / "my-build" / "compile_commands.json"
    mine.parent.mkdir()
    mine.write_text("[]\n")
    link = tree / "compile_commands.json"
    link.symlink_to(mine)
    notes = link_compile_commands(plan, db)
    assert os.readlink(link) == str(mine)
    assert notes == [f"{link} is your own link (to {mine}), left alone (the build's is {db})"]
    old = tmp_path / "cache" / "build" / "0000000000000000" / "cmake" / "compile_commands.json"  # an older plan's
    link.unlink()
    link.symlink_to(old)
    assert link_compile_commands(plan, db) == []
    assert os.readlink(link) == str(db)
    link.unlink()
    link.write_text("[]\n")
    assert link_compile_commands(plan, db) == [f"{link} is not a link, left alone (the build's is {db})"]


# 6. Ctrl-C is "Interrupted.", exit 130 (SIGTERM: "Terminated.", 143), never a failed build


@pytest.mark.parametrize("how", ["terminal", "children", "sigterm"])
def test_an_interrupted_build_is_interrupted_not_failed_and_leaves_no_compiler(tmp_path: Path, tree: Path,
                                                                               how: str) -> None:
    """``terminal``: Ctrl-C to tritonbuild's foreground group; ``children``: the interrupt reaches only the build's
    own processes (Ninja, its compilers), which fail saying so before tritonbuild sees anything; ``sigterm``: a
    plain ``kill`` of tritonbuild."""
    from tritonbuild.system.proc import session_members

    cache = tmp_path / "cache"
    env = {**os.environ, "CCACHE_DISABLE": "1", "NO_COLOR": "1", "CUDA_HOME": cuda_stub()}
    argv = [sys.executable, "-m", "tritonbuild", *build_args(tree, cache, tmp_path / "dist"), "--no-ccache", "-j", "2"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        log = None
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:  # wait until Ninja is compiling
            logs = list(cache.glob("build/*/build.log"))
            if logs and "[1/" in logs[0].read_text(errors="replace"):
                log = logs[0]
                break
            time.sleep(0.2)
        assert log is not None, "the build did not reach its compile step"
        if how == "terminal":
            os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        elif how == "sigterm":
            os.kill(proc.pid, signal.SIGTERM)
        else:
            session = json.loads((log.parent / ".tritonbuild.pgid").read_text())["groups"][0]
            for group in set(session_members(session).values()):
                with contextlib.suppress(ProcessLookupError):  # a compile that ended since it was listed
                    os.killpg(group, signal.SIGINT)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    want = (143, "Terminated.") if how == "sigterm" else (130, "Interrupted.")
    assert (proc.returncode, err.strip().splitlines()[-1]) == want, err
    assert "failed" not in err and "Aborted" not in err and "Traceback" not in err
    build = log.parent
    assert wait_for(lambda: not _in_dir(build), 10), "processes still work in the build dir"
    assert not (build / ".tritonbuild.pgid").exists()


def _in_dir(where: Path) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if Path(os.readlink(f"/proc/{name}/cwd")).is_relative_to(where):
                    found.append(int(name))
    return found


# 7. (#35 finding 11) the commands that only look into the cache root check it as plan and build do


@pytest.mark.parametrize("cmd", [["status"], ["status", "--json"], ["clean", "--all"], ["clean", "--all", "--dry-run"],
                                 ["llvm", "gc"], ["llvm", "gc", "--dry-run"]])
def test_status_clean_and_gc_refuse_a_cache_dir_that_is_a_file(tmp_path: Path, cmd: list[str]) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("precious\n")
    for given in (a_file, a_file / "sub"):
        proc = run_cli(*cmd, "--cache-dir", str(given), cwd=tmp_path, check=False)
        assert proc.returncode == 2, (cmd, proc.stdout, proc.stderr)
        one_paragraph(proc.stderr)
        assert f"{a_file} exists and is not one" in flat(proc.stderr), proc.stderr
        assert "0 build dir(s)" not in proc.stdout and "freed" not in proc.stdout
    assert a_file.read_text() == "precious\n"
    ok = run_cli(*cmd, "--cache-dir", str(tmp_path / "not-yet"), cwd=tmp_path, check=False)
    assert ok.returncode == 0, ok.stderr  # a cache root that does not exist yet is only empty
    assert not (tmp_path / "not-yet").exists()


def test_a_recipe_that_is_a_directory_is_named_so(tmp_path: Path, tree: Path) -> None:
    (tmp_path / "adir").mkdir()
    for given, shown in (("/etc", "/etc"), ("adir/", str(tmp_path / "adir"))):
        proc = run_cli("plan", "--recipe", given, "--source", str(tree), "--llvm", LLVM, "--cache-dir",
                       str(tmp_path / "cache"), cwd=tmp_path, check=False)
        assert proc.returncode == 2, proc.stderr
        one_paragraph(proc.stderr)
        assert f"The recipe file {shown} is a directory, not a recipe file" in flat(proc.stderr), proc.stderr
    proc = run_cli("plan", "--recipe", "none.toml", "--source", str(tree), "--llvm", LLVM, cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "none.toml does not exist" in flat(proc.stderr), proc.stderr


# 8. (#35 finding 9) a build's children keep their temporary files in the build dir, never in the user's TMPDIR


def test_a_build_leaves_nothing_in_tmpdir_and_removes_what_a_killed_build_left(tmp_path: Path, tree: Path) -> None:
    cache, out, user_tmp = tmp_path / "cache", tmp_path / "dist", tmp_path / "user-tmp"
    user_tmp.mkdir()
    key = one_of(run_cli("plan", "--json", "--source", str(tree), "--cache-dir", str(cache), "--llvm", LLVM,
                         cwd=tmp_path).stdout, "plans")["key"]
    build_tmp = cache / "build" / key / "tmp"
    left = build_tmp / "tmpk1lled" / "wheel" / "platlib"  # scikit-build-core's staging dir of a killed build
    left.mkdir(parents=True)
    (left / "libtriton.so").write_bytes(b"\0" * 4096)
    left.chmod(0o500)
    proc = run_cli(*build_args(tree, cache, out), cwd=tmp_path, env={"TMPDIR": str(user_tmp)}, timeout=600,
                   check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert list(out.glob("*.whl"))
    assert list(user_tmp.iterdir()) == []  # nothing of the build's children, nor of tritonbuild's
    assert not build_tmp.exists()  # the killed build's leftovers and this build's own temporary files are gone


def test_a_build_killed_with_sigterm_leaves_nothing_in_tmpdir(tmp_path: Path, tree: Path) -> None:
    """The reviewer's case: scikit-build-core's wheel staging dir (made before CMake runs) is not removed when its
    process is killed; it must be in the build dir, where the next build empties it, not in the user's TMPDIR."""
    cache, user_tmp = tmp_path / "cache", tmp_path / "user-tmp"
    user_tmp.mkdir()
    env = {**os.environ, "CCACHE_DISABLE": "1", "NO_COLOR": "1", "CUDA_HOME": cuda_stub(), "TMPDIR": str(user_tmp)}
    argv = [sys.executable, "-m", "tritonbuild", *build_args(tree, cache, tmp_path / "dist"), "--no-ccache", "-j", "2"]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        def compiling() -> bool:
            return any("[1/" in log.read_text(errors="replace") for log in cache.glob("build/*/build.log"))

        assert wait_for(compiling, 240), "the build did not reach its compile step"
        staged = list(cache.glob("build/*/tmp/*"))
        os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 143 and "Traceback" not in err, err
    assert staged, "the build's children made no temporary files in the build dir"
    assert wait_for(lambda: not list(user_tmp.iterdir()), 10), list(user_tmp.iterdir())


# 9. review 42 (#48): llvm gc errs towards keeping; clean and status name what they cannot read; a removal cut
# short is finished or still known; clean --dry-run writes nothing


def gc(cache: Path, *extra: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_cli("llvm", "gc", "--cache-dir", str(cache), *extra, cwd=cwd, check=check)


@pytest.mark.parametrize("plan", ["{not json", "[1, 2]", '{"llvm": "x"}', '{"llvm": {"prefix": 7}}',
                                  '{"llvm": {"prefix": "llvm/llvm-maybe-used"}}', "FIFO", "DIR"])
def test_a_plan_gc_cannot_read_keeps_every_llvm(tmp_path: Path, plan: str) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-maybe-used")
    d = build_dir(cache, "0123456789abcdef")
    if plan == "FIFO":
        os.mkfifo(d / "plan.json")  # read without blocking: gc must not hang on it either
    elif plan == "DIR":
        (d / "plan.json").mkdir()
    else:
        (d / "plan.json").write_text(plan)
    out = gc(cache, cwd=tmp_path)
    assert entry.is_dir() and (entry / "lib" / "libLLVM.a").is_file()
    assert f"keep {entry} (the plan of build dir {d} cannot be read" in flat(out.stdout)


def test_a_plan_without_an_llvm_keeps_nothing_and_an_unused_entry_goes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-unused")
    d = build_dir(cache, "0123456789abcdef")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "llvm": {"prefix": None}}))
    build_dir(cache, "fedcba9876543210")  # no plan, no lock file, not in use: uses no LLVM
    gc(cache, cwd=tmp_path)
    assert not entry.exists()


def test_a_build_root_that_is_no_directory_stops_gc_before_anything_is_removed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-a")
    (cache / "build").symlink_to(tmp_path / "unmounted-disk")  # a link to nowhere
    for extra in ((), ("--dry-run",)):
        out = gc(cache, *extra, cwd=tmp_path, check=False)
        assert out.returncode == 3, out.stderr
        one_paragraph(out.stderr)
        assert f"{cache / 'build'} is not a directory" in flat(out.stderr) and "nothing was removed" in out.stderr
        assert "would remove" not in out.stdout and entry.is_dir()


def test_a_cache_root_named_through_a_link_matches_the_plans_made_through_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real-cache"
    used, unused = llvm_entry(real, "llvm-used"), llvm_entry(real, "llvm-unused")
    (tmp_path / "linked-cache").symlink_to(real)
    d = build_dir(real, "0123456789abcdef")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "llvm": {"prefix": str(tmp_path / "linked-cache" / "llvm"
                                                                                  / "llvm-used")}}))
    for root in (real, tmp_path / "linked-cache"):
        out = flat(gc(root, "--dry-run", cwd=tmp_path).stdout)
        assert "llvm-used (used by a build dir)" in out and "would remove" in out, out
        assert not [line for line in out.split("would remove")[1:] if "llvm-used" in line.split(" (")[0]], out
    gc(tmp_path / "linked-cache", cwd=tmp_path)
    assert used.is_dir() and not unused.exists()


def test_gc_finishes_what_an_earlier_removal_left_and_leaves_a_running_ones(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    llvm_entry(cache, "llvm-a")
    left = cache / "llvm" / ".removing-llvm-old-2147483646"  # no process has that pid
    (left / "lib").mkdir(parents=True)
    (left / "lib" / "libLLVM.a").write_bytes(b"\0" * 4096)
    running = cache / "llvm" / f".removing-llvm-busy-{os.getpid()}"  # a removal in progress
    running.mkdir()
    dry = flat(gc(cache, "--dry-run", cwd=tmp_path).stdout)
    assert f"would remove {left} (0.0 MiB, left by an earlier run)" in dry and left.is_dir()
    gc(cache, cwd=tmp_path)
    assert not left.exists() and running.is_dir() and not (cache / "llvm" / "llvm-a").exists()


def test_clean_dry_run_writes_nothing_and_names_a_dir_in_use(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    idle, busy = build_dir(cache, "idleidleidleidle"), build_dir(cache, "busybusybusybusy")
    for d in (idle, busy):
        (d / MARKER).write_text("tritonbuild build dir\n")
    with held(busy / ".tritonbuild.lock"):
        before = sorted(p.relative_to(cache) for p in cache.rglob("*"))
        out = flat(run_cli("clean", "--all", "--dry-run", "--cache-dir", str(cache), cwd=tmp_path).stdout)
        assert sorted(p.relative_to(cache) for p in cache.rglob("*")) == before  # no lock file made anywhere
    assert f"would remove {idle}" in out and f"{busy} is in use by a running tritonbuild" in out


def test_a_removal_cut_short_leaves_a_dir_clean_still_knows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    d = build_dir(cache, "0123456789abcdef")
    (d / MARKER).write_text("tritonbuild build dir\n")
    (d / "plan.json").write_text(json.dumps({"key": d.name}))
    (d / "zzz-last").mkdir()
    real_remove = builddirs.remove_tree

    def stuck(path: Path) -> None:  # what an immutable file or a read-only disk does (as root, nothing else does)
        if path.name == "zzz-last":
            raise OSError(errno.EPERM, "Operation not permitted", str(path / "stuck"))
        real_remove(path)

    monkeypatch.setattr(builddirs, "remove_tree", stuck)
    done = builddirs.remove_build_dirs([d], dry_run=False)
    assert done.failed == [f"{d / 'zzz-last' / 'stuck'}: Operation not permitted"]  # the whole path
    assert builddirs.is_build_dir(d) and not (d / "cmake").exists()
    monkeypatch.setattr(builddirs, "remove_tree", real_remove)
    assert builddirs.remove_build_dirs([d], dry_run=False).removed == [d] and not d.exists()


def test_status_and_clean_name_a_dir_they_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    (cache / "patched" / "copy").mkdir(parents=True)
    other = build_dir(cache, "0123456789abcdef")
    mine = build_dir(cache, "fedcba9876543210")
    (mine / MARKER).write_text("tritonbuild build dir\n")
    real_iterdir = Path.iterdir

    def iterdir(self: Path) -> Iterator[Path]:  # EACCES, which root (who runs CI) never meets
        if self in (cache / "patched", other):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(builddirs, "is_build_dir", lambda d: d == mine or (d == other and list(d.iterdir()) == []))
    with pytest.raises(EnvironmentProblem, match=f"Cannot read {cache / 'patched'} .*Permission denied"):
        builddirs.cache_copies(cache)
    done = builddirs.remove_build_dirs([other, mine], dry_run=True)
    assert done.failed == [f"{other}: Permission denied"] and done.removed == [mine]
    copies = builddirs.remove_cache_copies(cache, dry_run=True)
    assert copies.failed == [f"{cache / 'patched'}: Permission denied"]


def test_a_build_root_that_is_a_link_is_followed_by_status_clean_and_gc_alike(tmp_path: Path) -> None:
    """Review 43: status listed the dirs behind a linked build root, gc read their plans, and clean --all named the
    link and cleaned nothing. The build dirs live where the link points (a bigger disk): all three follow it, none
    follows a link inside it, and a root linked to nowhere is exit 3 for each."""
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    d = build_dir(elsewhere, "0123456789abcdef")
    (d / MARKER).write_text("tritonbuild build dir\n")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "llvm": {"prefix": str(cache / "llvm" / "llvm-used")}}))
    used, unused = llvm_entry(cache, "llvm-used"), llvm_entry(cache, "llvm-unused")
    (cache / "build").symlink_to(elsewhere / "build")
    row = one_of(run_cli("status", "--json", "--cache-dir", str(cache), cwd=tmp_path).stdout, "build_dirs")
    assert row["key"] == d.name, row
    gc(cache, cwd=tmp_path)
    assert used.is_dir() and not unused.exists()
    out = flat(run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert f"removed {cache / 'build' / d.name}" in out and not d.exists() and (cache / "build").is_symlink(), out
    (cache / "build").unlink()
    (cache / "build").symlink_to(tmp_path / "unmounted")
    tree = example.write_tree(tmp_path / "src" / "triton")
    (tree / "compile_commands.json").symlink_to(cache / "build" / d.name / "dev" / "compile_commands.json")
    for cmd in (["status"], ["clean", "--all"], ["llvm", "gc"], ["clean", "--source", str(tree)]):
        res = run_cli(*cmd, "--cache-dir", str(cache), cwd=tmp_path, check=False)
        assert res.returncode == 3 and f"{cache / 'build'} is not a directory" in flat(res.stderr), (cmd, res.stderr)
        one_paragraph(res.stderr)
    assert used.is_dir() and (tree / "compile_commands.json").is_symlink()  # review 44: plain clean removed it


# 10. review 43 (#48): gc keeps a linked entry's target, a linked build dir's LLVM and an LLVM a running build
# holds; hostile names and plans under the cache are no traceback; clean --dry-run makes no lock file anywhere


def test_gc_keeps_the_target_of_a_linked_entry_and_the_llvm_of_a_linked_build_dir(tmp_path: Path) -> None:
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    target, used, unused = (llvm_entry(cache, n) for n in ("llvm-target", "llvm-used", "llvm-unused"))
    (cache / "llvm" / "llvm-link").symlink_to(target)
    d = build_dir(elsewhere, "0123456789abcdef")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "llvm": {"prefix": str(used)}}))
    (cache / "build").mkdir()
    (cache / "build" / d.name).symlink_to(d)  # a build dir on another disk
    out = flat(gc(cache, cwd=tmp_path).stdout)
    assert f"keep {target} (the target of the link {cache / 'llvm' / 'llvm-link'})" in out, out
    assert f"keep {used} (used by a build dir)" in out and not unused.exists() and target.is_dir() and used.is_dir()


def test_a_build_dir_linked_to_nowhere_keeps_every_llvm_and_lost_found_keeps_none(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-a")
    (cache / "build").mkdir()
    lost = cache / "build" / "lost+found"
    (lost / "plan.json").mkdir(parents=True)  # no plan gc can read, in a dir no build could have made
    (cache / "build" / "0123456789abcdef").symlink_to(tmp_path / "unmounted-disk" / "0123456789abcdef")
    out = flat(gc(cache, cwd=tmp_path).stdout)
    assert f"build dir {cache / 'build' / '0123456789abcdef'} is a link to nowhere" in out and entry.is_dir()
    (cache / "build" / "0123456789abcdef").unlink()
    gc(cache, cwd=tmp_path)
    assert not entry.exists() and lost.is_dir()


def _with_llvm(plan: Any, entry: Path) -> Any:
    return dataclasses.replace(plan, llvm=dataclasses.replace(plan.llvm, prefix=str(entry), strategy="download"))


def test_a_running_build_holds_its_cached_llvm_so_gc_started_after_it_leaves_it(tmp_path: Path) -> None:
    from tritonbuild.execute.lock import lock
    from tritonbuild.gather.request import Request, make_plan

    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-in-use")
    tree = example.write_tree(tmp_path / "src" / "triton")
    plan = _with_llvm(make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(cache), "llvm": LLVM},
                                                 os.environ, tmp_path, warn=silent)), entry)
    root = Path(plan.cmake.build_dir)
    root.mkdir(parents=True)
    (root / "plan.json").write_text(json.dumps({"key": root.name, "llvm": {"prefix": None}}))  # what gc read first
    taken = lock(plan, PlainReporter(io.StringIO()))
    try:
        for extra in (("--dry-run",), ()):
            out = flat(gc(cache, *extra, cwd=tmp_path).stdout)
            assert f"keep {entry} (in use by another tritonbuild run (its lock is held))" in out, out
            assert entry.is_dir()
    finally:
        taken.release()
    gc(cache, cwd=tmp_path)
    assert not entry.exists()


def test_a_build_whose_llvm_gc_removed_after_provisioning_provisions_it_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tritonbuild.execute import lock as lock_module
    from tritonbuild.gather.request import Request, make_plan
    from tritonbuild.llvm import provision

    cache = tmp_path / "cache"
    tree = example.write_tree(tmp_path / "src" / "triton")
    plan = _with_llvm(make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(cache), "llvm": LLVM},
                                                 os.environ, tmp_path, warn=silent)), cache / "llvm" / "llvm-gone")
    (cache / "llvm").mkdir(parents=True)
    calls: list[str] = []

    def download(p: Any, r: Any, e: Any) -> Path:  # the network: what a download would put there
        calls.append(p.llvm.prefix)
        return llvm_entry(cache, "llvm-gone")

    monkeypatch.setattr(provision, "ensure", download)
    reporter = PlainReporter(io.StringIO())
    lock_module.lock(plan, reporter).release()
    assert calls == [str(cache / "llvm" / "llvm-gone")]
    monkeypatch.setattr(provision, "ensure", lambda p, r, e: calls.append("again"))
    shutil.rmtree(cache / "llvm" / "llvm-gone")
    with pytest.raises(EnvironmentProblem, match=r"was removed .* each time this run provisioned it again"):
        lock_module.lock(plan, reporter)
    assert calls[1:] == ["again"] * 3 and not lock_module.held(Path(plan.cmake.build_dir))


@pytest.mark.parametrize("pid", ["\u00b2", "1" * 20, "0", "4194305", "\u0661\u0662"])
def test_a_removal_leftover_whose_pid_no_process_has_is_finished_and_one_with_no_pid_is_no_leftover(
        tmp_path: Path, pid: str) -> None:
    cache = tmp_path / "cache"
    left = cache / "llvm" / f".removing-llvm-x-{pid}"
    (left / "lib").mkdir(parents=True)
    out = gc(cache, cwd=tmp_path)
    assert "Traceback" not in out.stderr, out.stderr
    assert left.exists() == (not pid.isascii()), out.stdout  # review 45: a name with no pid is no run's leftover


def test_a_nul_in_a_plan_is_no_traceback_for_gc_status_or_clean(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-a")
    d = build_dir(cache, "0123456789abcdef")
    (d / MARKER).write_text("tritonbuild build dir\n")
    (d / "dev").mkdir()
    (d / "develop-request.json").write_text("{}")
    (d / "plan.json").write_text(json.dumps({
        "key": d.name, "llvm": {"prefix": "/x\0y"}, "source": {"root": str(tmp_path / "src\0")},
        "backends": [{"name": "nvidia", "path": "/p\0", "origin": "plugin"}],
        "wheel": {"out_dir": str(tmp_path), "name": "/**/["}}))
    (tmp_path / "_**_[-1.0-py3-none-any.whl").write_text("")
    out = gc(cache, cwd=tmp_path)
    assert f"the plan of build dir {d} cannot be read" in flat(out.stdout) and entry.is_dir()
    for cmd in (["status", "--json"], ["clean", "--all"]):
        done = run_cli(*cmd, "--cache-dir", str(cache), cwd=tmp_path)
        assert "Traceback" not in done.stderr
    assert not d.exists()


def test_clean_all_dry_run_makes_no_lock_file_for_patched_copies_or_exports(tmp_path: Path) -> None:
    from tritonbuild.gather.commits import MARKER as EXPORT_MARK
    from tritonbuild.gather.patches import COPY_MARK

    cache = tmp_path / "cache"
    copy = cache / "patched" / "0123456789abcdef"
    copy.mkdir(parents=True)
    (copy / COPY_MARK).write_text("patched copy of /src\n")
    export = cache / "compat" / "trees" / ("a" * 40)
    export.mkdir(parents=True)
    (export / EXPORT_MARK).write_text("{}\n")
    user = build_dir(cache, "fedcba9876543210")
    (user / MARKER).write_text("tritonbuild build dir\n")
    (user / "plan.json").write_text(json.dumps({"key": user.name, "source": {"root": str(export)}}))
    before = sorted(p.relative_to(cache) for p in cache.rglob("*"))
    out = flat(run_cli("clean", "--all", "--dry-run", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert sorted(p.relative_to(cache) for p in cache.rglob("*")) == before
    assert "2 patched copy or llvm compat dir(s)" in out, out
    with held(copy.parent / f"{copy.name}.lock"), held(user / ".tritonbuild.lock"):
        out = flat(run_cli("clean", "--all", "--dry-run", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert f"{copy} is in use by a running tritonbuild" in out and f"{export} is in use by a running" in out, out
    assert "0 patched copy or llvm compat dir(s)" in out, out


def test_a_planted_locks_link_makes_gc_write_nothing_where_it_points(tmp_path: Path) -> None:
    cache, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    entry = llvm_entry(cache, "llvm-a")
    elsewhere.mkdir()
    (cache / "llvm" / ".locks").symlink_to(elsewhere)
    out = gc(cache, cwd=tmp_path, check=False)
    assert out.returncode == 3 and entry.is_dir() and not list(elsewhere.iterdir()), out.stderr
    assert f"{cache / 'llvm' / '.locks'}: a link where tritonbuild keeps its lock files" in flat(out.stderr)
    one_paragraph(out.stderr)


TEXT = st.text(alphabet="/\0*[]?-._a1\u00b2 ", max_size=12) | st.text(max_size=12) | st.sampled_from(["/tmp", "/"])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
                    max_leaves=12)
FIELDS = st.fixed_dictionaries({}, optional={
    "key": JSON, "llvm": st.fixed_dictionaries({}, optional={"prefix": JSON | TEXT}) | JSON,
    "source": st.fixed_dictionaries({}, optional={"root": JSON | TEXT,
                                                  "checkout": TEXT}) | JSON,
    "backends": st.lists(st.fixed_dictionaries({}, optional={"name": JSON, "path": TEXT | JSON,
                                                             "origin": st.sampled_from(["plugin", "in-tree"])}),
                         max_size=2) | JSON,
    "wheel": st.fixed_dictionaries({}, optional={"out_dir": TEXT | JSON,
                                                 "name": TEXT | JSON}) | JSON})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@hypothesis.given(plan=FIELDS, pid=TEXT | st.from_regex(r"[0-9]{1,24}", fullmatch=True))
def test_any_plan_or_leftover_name_under_the_cache_is_read_without_a_traceback(tmp_path: Path, plan: dict[str, Any],
                                                                              pid: str) -> None:
    from tritonbuild.execute import llvmgc
    from tritonbuild.llvm import cache as llvm_cache

    cache = tmp_path / "cache"
    d = cache / "build" / "0123456789abcdef"
    d.mkdir(parents=True, exist_ok=True)
    (d / "plan.json").write_text(json.dumps(plan))
    llvmgc._used_prefixes(cache / "build")
    prefix, blocker = llvmgc._prefix_of(d)
    assert prefix is None or Path(prefix).is_absolute()
    no_llvm = isinstance(plan.get("llvm"), dict) and "prefix" in plan["llvm"] and plan["llvm"]["prefix"] is None
    assert bool(prefix or blocker) != no_llvm  # a prefix, or why every LLVM is kept, or a plan with none
    builddirs._row(d)
    builddirs._backend_links(d)
    builddirs._links_into(d)
    builddirs.sources_of(d)
    assert llvm_cache._running(pid) in (True, False)


def test_a_cached_llvm_that_cannot_be_locked_is_used_with_a_note(tmp_path: Path) -> None:
    """A cache this user may read but not lock (a read-only mount: here `.locks` is a file, as root meets no EACCES)
    is used as it is, and the run says gc could remove it meanwhile."""
    from tritonbuild.execute.lock import lock
    from tritonbuild.gather.request import Request, make_plan

    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-read-only")
    (cache / "llvm" / ".locks").write_text("")
    tree = example.write_tree(tmp_path / "src" / "triton")
    plan = _with_llvm(make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(cache), "llvm": LLVM},
                                                 os.environ, tmp_path, warn=silent)), entry)
    out = io.StringIO()
    lock(plan, PlainReporter(out)).release()
    assert f"cannot hold the LLVM {entry} in use" in flat(out.getvalue()), out.getvalue()


def test_clean_all_leaves_a_patched_copy_a_running_build_compiles_from(tmp_path: Path) -> None:
    """Review 44 (HIGH): the copy's own lock is held only while --patch syncs it; the build compiling from it holds
    its build dir's lock, which clean --all now takes (as for compat trees) before it removes the copy."""
    from tritonbuild.gather.patches import COPY_MARK

    cache = tmp_path / "cache"
    copy = cache / "patched" / "0123456789abcdef"
    (copy / "src").mkdir(parents=True)
    (copy / COPY_MARK).write_text("patched copy of /src\n")
    user = build_dir(cache, "fedcba9876543210")
    (user / MARKER).write_text("tritonbuild build dir\n")
    (user / "plan.json").write_text(json.dumps({"key": user.name, "source": {"root": str(copy / "src"),
                                                                              "checkout": "/src"}}))
    with held(user / ".tritonbuild.lock"):
        for extra in (("--dry-run",), ()):
            out = flat(run_cli("clean", "--all", *extra, "--cache-dir", str(cache), cwd=tmp_path).stdout)
            assert f"{copy} is in use by a running tritonbuild (the build dir {user} made from it is locked)" in out
            assert (copy / "src").is_dir(), out
    run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path)
    assert not copy.exists() and not user.exists()


def test_a_build_holds_an_llvm_of_another_cache_root_given_as_its_prefix(tmp_path: Path) -> None:
    """Review 44: `--llvm <other cache>/llvm/<entry>` (as `llvm path` prints it) was not held, so gc of that
    cache removed it under the running build."""
    from tritonbuild.execute.lock import lock
    from tritonbuild.gather.request import Request, make_plan

    other = tmp_path / "other-cache"
    entry = llvm_entry(other, "llvm-shared")
    tree = example.write_tree(tmp_path / "src" / "triton")
    plan = make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(tmp_path / "cache"), "llvm": LLVM},
                                      os.environ, tmp_path, warn=silent))
    plan = dataclasses.replace(plan, llvm=dataclasses.replace(plan.llvm, prefix=str(entry), strategy="prefix"))
    taken = lock(plan, PlainReporter(io.StringIO()))
    try:
        out = flat(gc(other, cwd=tmp_path).stdout)
        assert f"keep {entry} (in use by another tritonbuild run" in out and entry.is_dir(), out
    finally:
        taken.release()
    gc(other, cwd=tmp_path)
    assert not entry.exists()


def test_clean_all_leaves_an_unreadable_dir_no_build_has_the_name_of(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 44: a root-owned lost+found under build/ made clean --all exit 3 (status and gc skip it)."""
    cache = tmp_path / "cache"
    lost, mine = cache / "build" / "lost+found", build_dir(cache, "fedcba9876543210")
    lost.mkdir()
    (mine / MARKER).write_text("tritonbuild build dir\n")
    real = builddirs.is_build_dir

    def is_build_dir(d: Path) -> bool:  # EACCES, which root (who runs CI) never meets
        if d == lost:
            raise PermissionError(errno.EACCES, "Permission denied", str(d / MARKER))
        return real(d)

    monkeypatch.setattr(builddirs, "is_build_dir", is_build_dir)
    for dry_run in (True, False):
        done = builddirs.remove_build_dirs(builddirs.listed(cache / "build"), dry_run=dry_run)
        assert done.failed == [] and done.removed == [mine], done
        assert done.notes == [f"{lost} cannot be read (Permission denied) and is no build dir: left alone"]


def test_selftest_with_a_cache_dir_that_is_a_file_is_one_paragraph(tmp_path: Path) -> None:
    """Review 44: selftest wrote its example tree before any check and gave a NotADirectoryError traceback."""
    a_file = tmp_path / "a-file"
    a_file.write_text("precious\n")
    proc = run_cli("selftest", "--cache-dir", str(a_file), "--out", str(tmp_path / "out"), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Pass --cache-dir with a directory this user can write" in flat(proc.stderr)
    one_paragraph(proc.stderr)
    assert a_file.read_text() == "precious\n"


def test_an_output_dir_under_a_dir_this_user_cannot_search_is_refused_not_a_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 44: exists() of an --out under /root raised PermissionError (as root, injected)."""
    from tritonbuild.execute import outdir
    from tritonbuild.gather.request import Request, make_plan

    tree = example.write_tree(tmp_path / "src" / "triton")
    hidden = tmp_path / "root-only" / "out"
    plan = make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(tmp_path / "cache"), "llvm": LLVM},
                                      os.environ, tmp_path, warn=silent, out=str(hidden)))
    real_exists = Path.exists

    def exists(self: Path, **kw: Any) -> bool:
        if self == hidden:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_exists(self, **kw)

    monkeypatch.setattr(Path, "exists", exists)
    with pytest.raises(UserError, match=r"cannot take the wheel: it cannot be written \(Permission denied\)"):
        outdir.check([plan])


def test_a_fetch_waiting_for_an_entry_another_run_holds_says_so(tmp_path: Path) -> None:
    """Review 44: `llvm fetch` replacing an entry a running build holds waited in silence."""
    import threading

    from tritonbuild.llvm import cache as llvm_cache

    entry = tmp_path / "cache" / "llvm" / "llvm-busy"
    said: list[str] = []
    with held(entry.parent / ".locks" / f"{entry.name}.lock") as holder:
        threading.Timer(0.5, holder.kill).start()
        with llvm_cache.making(entry, said.append):
            assert holder.poll() is not None  # got it only once the holder was gone
    assert said == [f"waiting for another tritonbuild run that holds {entry} (a build using it, a fetch or a gc)"]


def test_gc_removes_what_a_killed_fetch_or_source_build_left_and_keeps_a_running_ones(tmp_path: Path) -> None:
    """Review 44: staging dirs, replaced entries and partial downloads of a killed run (GiBs each) stayed forever."""
    cache = tmp_path / "cache"
    llvm = cache / "llvm"
    dead = [llvm / ".staging-llvm-x-2147483646", llvm / ".replaced-llvm-y-2147483646"]
    for d in dead:
        (d / "lib").mkdir(parents=True)
    (llvm / ".downloads").mkdir()
    partial = llvm / ".downloads" / "llvm-x.tar.gz.2147483646"
    partial.write_bytes(b"\0" * 4096)
    running = [llvm / f".staging-llvm-z-{os.getpid()}", llvm / ".downloads" / f"llvm-z.tar.gz.{os.getpid()}"]
    running[0].mkdir()
    running[1].write_bytes(b"")
    kept = [llvm / ".staging-noname", llvm / ".downloads" / "keepme.txt"]  # no pid: no run's leftover
    kept[0].mkdir()
    kept[1].write_text("")
    elsewhere = [llvm / ".staging-llvm-w-4000000", llvm / ".downloads" / "llvm-w.tar.gz.4000000"]
    elsewhere[0].mkdir()
    elsewhere[1].write_bytes(b"\0" * 2**20)
    with held(llvm / ".locks" / "llvm-w.lock"):  # review 45: a fetch on another host sharing the cache holds it
        dry = flat(gc(cache, "--dry-run", cwd=tmp_path).stdout)
        assert f"keep {elsewhere[0]} (in use by another tritonbuild run" in dry, dry
        gc(cache, cwd=tmp_path)
        assert all(p.exists() for p in [*running, *kept, *elsewhere])
    assert not any(p.exists() for p in [*dead, partial])
    out = flat(gc(cache, cwd=tmp_path).stdout)
    assert f"remove {elsewhere[1]} (1.0 MiB, left by an earlier run)" in out and not elsewhere[0].exists(), out


def test_clean_of_a_checkout_path_that_is_a_typo_is_refused_and_of_a_removed_one_cleans_it(tmp_path: Path) -> None:
    """Review 44: `clean --source /nonexistent` said "0 build dir(s)" with exit 0, as if there were nothing."""
    cache, gone = tmp_path / "cache", tmp_path / "removed-checkout"
    typo = run_cli("clean", "--source", str(tmp_path / "tritn"), "--cache-dir", str(cache), cwd=tmp_path, check=False)
    assert typo.returncode == 2 and f"{tmp_path / 'tritn'} (--source) does not exist" in flat(typo.stderr)
    one_paragraph(typo.stderr)
    d = build_dir(cache, "0123456789abcdef")
    (d / MARKER).write_text("tritonbuild build dir\n")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "source": {"root": str(gone)}}))
    run_cli("clean", "--source", str(gone), "--cache-dir", str(cache), cwd=tmp_path)
    assert not d.exists()


def test_clean_of_a_checkout_finds_its_build_dirs_behind_a_linked_build_root(tmp_path: Path) -> None:
    cache, elsewhere, checkout = tmp_path / "cache", tmp_path / "elsewhere", tmp_path / "checkout"
    checkout.mkdir()
    d = build_dir(elsewhere, "0123456789abcdef")
    (d / MARKER).write_text("tritonbuild build dir\n")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "source": {"root": str(checkout)}}))
    cache.mkdir()
    (cache / "build").symlink_to(elsewhere / "build")
    run_cli("clean", "--source", str(checkout), "--cache-dir", str(cache), cwd=tmp_path)
    assert not d.exists() and (cache / "build").is_symlink()


def test_clean_all_keeps_every_copy_while_a_locked_build_dir_has_no_plan_yet(tmp_path: Path) -> None:
    """Review 45: a build locks its dir before it writes the plan that names its patched copy; in between, the
    copy it may build from was removed."""
    from tritonbuild.gather.patches import COPY_MARK

    cache = tmp_path / "cache"
    copy = cache / "patched" / "0123456789abcdef"
    copy.mkdir(parents=True)
    (copy / COPY_MARK).write_text("patched copy of /src\n")
    starting = build_dir(cache, "fedcba9876543210")
    (starting / MARKER).write_text("tritonbuild build dir\n")
    with held(starting / ".tritonbuild.lock"):
        out = flat(run_cli("clean", "--all", "--cache-dir", str(cache), cwd=tmp_path).stdout)
    assert copy.is_dir() and f"{copy} is in use by a running tritonbuild" in out, out


def test_clean_of_a_checkout_names_a_build_dir_it_cannot_read(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 45: another user's unreadable build dir made `clean --source` a PermissionError traceback."""
    cache = tmp_path / "cache"
    other = build_dir(cache, "bbbbbbbbbbbbbbbb")

    def is_build_dir(d: Path) -> bool:  # EACCES, which root (who runs CI) never meets
        raise PermissionError(errno.EACCES, "Permission denied", str(d / MARKER))

    monkeypatch.setattr(builddirs, "is_build_dir", is_build_dir)
    with pytest.raises(EnvironmentProblem, match=f"Cannot read {other / MARKER} .*Permission denied"):
        builddirs.of_source(cache / "build", tmp_path / "checkout")
