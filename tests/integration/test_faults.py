"""Faults a real build meets, reported as what they are, with nothing lost."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import run_cli
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
