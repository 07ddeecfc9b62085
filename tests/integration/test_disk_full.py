"""A full disk names the file being written, its file system and that file system's free space (#44): staging the
CUDA toolkit's files into the build dir on a full cache disk named the toolkit's file (the copy's source) and the
free space of the toolkit's file system."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from tests.integration.conftest import cuda_stub, small_tmpfs
from tritonbuild import example
from tritonbuild.errors import DiskProblem
from tritonbuild.execute.lock import disk_problem
from tritonbuild.gather.request import Request, make_plan
from tritonbuild.nvidia.stage import stage, stage_dir
from tritonbuild.reporter import silent

LLVM = "/usr/lib/llvm-22"


def fill(mnt: Path) -> None:
    """Write into ``mnt`` until its file system is full."""
    with open(mnt / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc


def test_staging_nvidia_files_on_a_full_cache_names_the_destination_and_its_file_system(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    with small_tmpfs(tmp_path / "small", "1m") as mnt:
        env = {**os.environ, "CUDA_HOME": cuda_stub()}
        plan = make_plan(Request.from_cli({"source": str(tree), "cache_dir": str(mnt / "cache"), "llvm": LLVM,
                                           "stable_paths": False}, env, tmp_path, warn=silent))
        assert any(p.name == "cupti" or p.dest.startswith("lib") for p in plan.nvidia), plan.nvidia
        fill(mnt)
        with pytest.raises(OSError) as raised:
            stage(plan, log=lambda m: None)
        err = disk_problem(plan, raised.value, Path(plan.cmake.build_dir))
        assert isinstance(err, DiskProblem), raised.value
        text = str(err)
    assert text.startswith(f"Writing {stage_dir(plan)}/"), text
    assert f"failed: No space left on device (on the file system mounted at {mnt}, with 0 KiB free now)." in text, text
    assert cuda_stub() not in text  # the copy's source is not what was being written
    assert f"The disk under the build dir {plan.cmake.build_dir} is full" in text and "the next run resumes" in text
    assert err.exit_code == 3



def test_a_full_disk_that_no_stage_catches_is_exit_3_naming_the_destination(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]
                                                                            ) -> None:
    """A write no stage catches (a command's own file, a log) on a full disk: exit 3 naming the destination and its
    file system, never a traceback (it was an OSError out of main: exit 1)."""
    import click

    from tritonbuild.cli import main as cli_main

    with small_tmpfs(tmp_path / "small", "256k") as mnt:
        fill(mnt)

        (tmp_path / "big").write_bytes(b"x" * 65536)

        @click.command("write-one")
        @click.argument("how")
        def write_one(how: str) -> None:
            if how == "copy":  # a copy names its destination (filename2)
                shutil.copyfile(tmp_path / "big", mnt / "out.txt")
            else:  # a write to an open file names none
                (mnt / "open.txt").write_bytes(b"x" * 65536)

        cli_main.cli.add_command(write_one)
        said = []
        try:
            for how in ("copy", "open"):
                with pytest.raises(SystemExit) as stopped:
                    cli_main.main(["write-one", how])
                said.append((stopped.value.code, " ".join(capsys.readouterr().err.split())))
        finally:
            cli_main.cli.commands.pop("write-one")
    (copied, copy_err), (opened, open_err) = said
    assert copied == opened == 3 and "Traceback" not in copy_err + open_err
    assert f"Writing {mnt / 'out.txt'} failed: No space left on device (on the file system mounted at {mnt}" \
        in copy_err
    assert "A write failed: No space left on device" in open_err and "mounted at /," not in open_err
