"""A full disk names the file being written, its file system and that file system's free space (#44): staging the
CUDA toolkit's files into the build dir on a full cache disk named the toolkit's file (the copy's source) and the
free space of the toolkit's file system."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tests.integration.conftest import cuda_stub, small_tmpfs
from tritonbuild import example
from tritonbuild.errors import DiskProblem
from tritonbuild.execute.lock import disk_problem
from tritonbuild.nvidia.stage import stage, stage_dir
from tritonbuild.request import Request, make_plan

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
                                           "stable_paths": False}, env, tmp_path))
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
