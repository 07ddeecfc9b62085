"""proc.fork_map: the one forked pool of the gather edge (include scan, backend-interface parse)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import signal, sys
from tritonbuild import proc
from tritonbuild.cli.main import _terminated  # tritonbuild's own SIGTERM handler: raises Terminated
signal.signal(signal.SIGTERM, _terminated)
out = proc.fork_map(str.upper, [f"f{i}" for i in range(40)], parallel_from=16)
assert out == [f"F{i}" for i in range(40)], out
print(len(out))
"""


def test_forked_workers_end_quietly_under_tritonbuilds_sigterm_handler() -> None:
    """llvm compat on a real history (a cold backend-interface parse per exported commit) printed a Terminated
    traceback per pool worker: the workers had inherited the handler, and the pool's end terminated them."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "40", proc.stderr
    assert "Traceback" not in proc.stderr and "Terminated" not in proc.stderr, proc.stderr


def test_few_items_run_in_this_process() -> None:
    from tritonbuild import proc

    assert proc.fork_map(str.upper, ["a", "b"], parallel_from=16) == ["A", "B"]
