"""The compile check's child answers a ptxas run from the build dir's memo when the same ptxas already assembled the
same PTX with the same arguments (#45): run here with a stand-in ptxas (a real program that counts its runs; this
machine has no CUDA) through the child's own setup, ``corpus_kernels.use_ptxas_memo``, and Triton's call form."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tritonbuild.wheel import compilecheck_run

PTXAS = """#!{python}
import hashlib, os, sys
with open(os.environ["RUNS"], "a") as f:
    f.write("run\\n")
args = sys.argv[1:]
src = next(a for a in args if a.endswith(".ptx"))
text = open(src, "rb").read()
if b"bad" in text:
    sys.stderr.write("ptxas fatal : bad PTX\\n")
    sys.exit(255)
out = args[args.index("-o") + 1]
open(out, "wb").write(b"CUBIN" + hashlib.sha256(text + " ".join(a for a in args if a != src and a != out)
                                                  .encode()).digest())
sys.stderr.write("ptxas info    : Used 40 registers\\n")
"""

# What Triton's nvidia backend does in make_cubin: a temp .ptx, ptxas into a temp .o, its log into a temp file.
CHILD = """
import json, os, subprocess, sys, tempfile
sys.argv = ["corpus_kernels.py"]
sys.path.insert(0, {wheel_dir!r})
import corpus_kernels
corpus_kernels.use_ptxas_memo()
out = []
for ptx in {ptxs!r}:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as fsrc, \\
            tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as flog:
        fsrc.write(ptx)
        fsrc.flush()
        fbin = fsrc.name + ".o"
        try:
            subprocess.run([{ptxas!r}, "-v", "--gpu-name=sm_90a", fsrc.name, "-o", fbin], check=True,
                           close_fds=False, stderr=flog)
            got = open(fbin, "rb").read().hex()
        except subprocess.CalledProcessError as exc:
            got = "failed %d" % exc.returncode
    out.append([got, open(flog.name).read()])
print(json.dumps(out))
"""


def _child(tmp: Path, ptxs: list[str], memo: Path | None) -> list[list[str]]:
    env = compilecheck_run.child_env(os.environ, tmp, True, tmp / "cache", ptxas_memo=memo)
    env["RUNS"] = str(tmp / "runs")
    code = CHILD.format(wheel_dir=str(compilecheck_run.SCRIPT.parent), ptxs=ptxs, ptxas=str(tmp / "bin" / "ptxas"))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _runs(tmp: Path) -> int:
    return len((tmp / "runs").read_text().splitlines()) if (tmp / "runs").exists() else 0


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "ptxas"
    tool.write_text(textwrap.dedent(PTXAS).format(python=sys.executable))
    tool.chmod(0o755)
    return tmp_path


def test_the_same_ptx_is_assembled_once_and_its_answer_replayed_whole(tmp: Path) -> None:
    memo = tmp / "memo"
    memo.mkdir(mode=0o700)
    ptxs = [".version 8.0 // a", ".version 8.0 // b", "bad"]
    without = _child(tmp, ptxs, None)
    assert _runs(tmp) == 3
    first = _child(tmp, ptxs, memo)
    assert _runs(tmp) == 6 and first == without  # a miss runs ptxas: the same cubins, logs and failure
    again = _child(tmp, ptxs, memo)
    assert _runs(tmp) == 7, "only the failing PTX (never kept) ran ptxas again"
    assert again == without and "Used 40 registers" in again[0][1] and again[2][0] == "failed 255"
    assert "bad PTX" in again[2][1]
    changed = _child(tmp, [".version 8.0 // c"], memo)
    assert _runs(tmp) == 8 and changed[0][0] != without[0][0]


def test_another_ptxas_or_a_memo_others_can_write_is_not_used(tmp: Path) -> None:
    memo = tmp / "memo"
    memo.mkdir(mode=0o700)
    _child(tmp, [".version 8.0"], memo)
    _child(tmp, [".version 8.0"], memo)
    assert _runs(tmp) == 1
    tool = tmp / "bin" / "ptxas"
    tool.write_text(tool.read_text() + "# another release\n")
    _child(tmp, [".version 8.0"], memo)
    assert _runs(tmp) == 2, "a ptxas with other bytes is another key"
    memo.chmod(0o777)
    _child(tmp, [".version 8.0"], memo)
    assert _runs(tmp) == 3, "a memo dir anyone can write to is not used"
    memo.chmod(0o700)
    env = compilecheck_run.child_env({"TRITONBUILD_PTXAS_MEMO": str(memo), "PATH": "/usr/bin"}, tmp, True,
                                     tmp / "cache")
    assert "TRITONBUILD_PTXAS_MEMO" not in env, "only the build's own check chooses a memo"
