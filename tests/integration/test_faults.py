"""Faults a real build meets, reported as what they are, with nothing lost."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import WHEEL_ONLY, one_of
from tests.integration.conftest import flat, run_cli, small_tmpfs
from tritonbuild import example


def test_a_compiler_killed_by_the_kernel_is_reported_as_out_of_memory(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    killer = tmp_path / "oom-compiler"
    # stands in for the OOM killer: one compile is SIGKILLed, with gcc's own message
    killer.write_text('#!/bin/sh\ncase "$*" in *Core.cpp*)\n'
                      '  echo "g++: fatal error: Killed signal terminated program cc1plus" >&2; kill -9 $$;;\n'
                      'esac\nexec "$@"\n')
    killer.chmod(0o755)
    out = tmp_path / "dist"
    proc = run_cli("build", "--source", str(tree), "--no-ccache", "-j", "2", "--link-jobs", "2", "--no-proton",
                   f"--cmake-arg=-DCMAKE_CXX_COMPILER_LAUNCHER={killer}", "--cache-dir", str(tmp_path / "cache"),
                   "--out", str(out), cwd=tmp_path, check=False)
    err = " ".join(proc.stderr.split())
    assert proc.returncode == 1, proc.stderr
    assert "The kernel killed a compiler (signal 9): the build ran out of memory with -j2 compile and 2 link jobs" \
        in err
    assert "`-j 1 --link-jobs 2`" in err and "GiB" in err
    assert not out.exists() or not any(out.glob("*.whl"))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "small-disk", "24m") as mnt:
        yield mnt


def test_a_full_disk_stops_with_the_directory_and_the_space_needed_and_the_next_run_resumes(
        tmp_path: Path, small_disk: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    out = tmp_path / "dist"
    out.mkdir()
    previous = out / "triton-3.6.0-cp311-cp311-linux_x86_64.whl"
    previous.write_bytes(b"the previous wheel")
    args = ["build", "--source", str(tree), "--no-proton", "--cache-dir", str(small_disk / "cache"),
            "--out", str(out)]
    env = {**WHEEL_ONLY}  # the shared compiler cache: a cache hit fills the small disk as a compile does
    proc = run_cli(*args, cwd=tmp_path, env=env, check=False)
    err = flat(proc.stderr)
    assert proc.returncode == 3, proc.stderr
    assert f"The disk under the build dir {small_disk}/cache/build/" in err and "is full" in err
    assert "needs about 3 GiB" in err and "the next run resumes" in err
    assert previous.read_bytes() == b"the previous wheel" and sorted(p.name for p in out.iterdir()) == [previous.name]
    subprocess.run(["mount", "-o", "remount,size=1g", str(small_disk)], check=True)
    again = run_cli(*args, "--json", cwd=tmp_path, env=env)
    assert one_of(again.stdout, "wheels")["wheel"] == str(previous)  # the real wheel replaced the stand-in


def test_a_read_only_cache_is_named(tmp_path: Path, small_disk: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    proc = run_cli("build", "--source", str(tree), "--cache-dir", str(small_disk / "cache"), "--out",
                   str(tmp_path / "dist"), cwd=tmp_path, check=False)
    assert proc.returncode == 3 and "is read-only (EROFS)" in flat(proc.stderr), proc.stderr
    assert not (tmp_path / "dist").exists()


def test_a_child_stopped_by_ctrl_c_is_the_users_interrupt_not_a_failed_build(tmp_path: Path) -> None:
    """When the terminal's SIGINT reaches ninja before tritonbuild sees it, ninja's exit (130, or killed by the
    signal) must still end the run as "Interrupted." (exit 130), not as a failed build (exit 1): seen under load."""
    import io

    from tests.helpers import PlainReporter
    from tritonbuild.system.proc import run_logged
    from tritonbuild.system.progress import Tracker

    for script in ("exit 130", "kill -INT $$"):
        with pytest.raises(KeyboardInterrupt):
            run_logged(["sh", "-c", script], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, log=io.StringIO(),
                       tracker=Tracker(), reporter=PlainReporter(io.StringIO()), label="build")
    assert run_logged(["sh", "-c", "exit 1"], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, log=io.StringIO(),
                      tracker=Tracker(), reporter=PlainReporter(io.StringIO()), label="build") == 1
