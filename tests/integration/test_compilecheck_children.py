"""The compile check's children are tritonbuild's children like any other (#48): started by ``proc.start`` in a
session of their own with the death signal and a watchdog, so they never outlive tritonbuild. Real processes: a
stand-in for the wheel's interpreter that starts a "compiler" and hangs, under a driver that is SIGKILLed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

FAKE_PYTHON = """#!{python}
import json, os, subprocess, sys, time
grand = subprocess.Popen(["sleep", "300"])
with open(os.environ["PIDS"] + ".tmp", "w") as f:
    f.write(f"{{os.getpid()}} {{grand.pid}}")
os.replace(os.environ["PIDS"] + ".tmp", os.environ["PIDS"])
print(json.dumps({{"event": "start", "case": "k@t"}}), flush=True)
time.sleep(300)
"""
DRIVER = """import sys
from pathlib import Path
from tritonbuild.plan import Case
from tritonbuild.wheel.compilecheck_run import _run_child
_run_child(sys.argv[1], [Case("k@t", "k", "x", {})], {"PIDS": sys.argv[2], "PATH": "/usr/bin:/bin"}, 300,
           Path(sys.argv[3]), lambda line: None)
"""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_killed_tritonbuild_takes_the_compile_checks_child_and_its_compilers_with_it(tmp_path: Path) -> None:
    """The check's child is started as every long child is (``proc.start``): tritonbuild SIGKILLed mid-check (the
    OOM killer, a CI timeout) leaves no interpreter compiling kernels in a session of its own."""
    fake, pids = tmp_path / "python", tmp_path / "pids"
    fake.write_text(FAKE_PYTHON.format(python=sys.executable))
    fake.chmod(0o755)
    root = str(Path(__file__).resolve().parents[2])
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(fake), str(pids), str(tmp_path)],
                              env={**os.environ, "PYTHONPATH": root})
    try:
        deadline = time.monotonic() + 30
        while not pids.exists() and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.05)
        assert pids.exists(), "the check's child did not start"
        child, grand = (int(p) for p in pids.read_text().split())
        time.sleep(0.3)  # the watchdog is started right after the child
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 15
        while (_alive(child) or _alive(grand)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child) and not _alive(grand), "the compile check's child outlived tritonbuild"
    finally:
        for pid in (p for p in (locals().get("child"), locals().get("grand")) if p):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
