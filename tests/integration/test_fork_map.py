"""proc.fork_map: the one forked pool of the gather edge (include scan, backend-interface parse)."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import running

SCRIPT = """
import signal, sys
from tritonbuild.system import proc
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
    from tritonbuild.system import proc

    assert proc.fork_map(str.upper, ["a", "b"], parallel_from=16) == ["A", "B"]


def test_an_interrupted_thread_map_stops_its_running_children_at_once() -> None:
    """The canary's compilers ran on ~8 s after Ctrl-C: a thread pool joins its threads, each waiting on its
    compile. Now the children stop at once, and the items not started never start."""
    import os
    import signal
    import threading
    import time

    import pytest

    from tritonbuild.system import proc

    started: list[str] = []

    def one(item: str) -> int:
        started.append(item)
        return proc.run(["sleep", "61.25"], timeout=None).returncode

    # Ctrl-C: SIGINT to this process, raised as KeyboardInterrupt in the thread that waits on the map
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
    begin = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        proc.thread_map(one, ["a", "b", "never-1", "never-2"], workers=2)
    assert time.monotonic() - begin < 10
    assert running("sleep 61.25") == []
    assert sorted(started) == ["a", "b"]

    def failing(item: str) -> int:  # an error in one item ends the map at once, whatever the others do
        if item == "boom":
            time.sleep(0.5)
            raise ValueError("boom")
        return proc.run(["sleep", "61.5"], timeout=None).returncode

    begin = time.monotonic()
    with pytest.raises(ValueError, match="boom"):
        proc.thread_map(failing, ["a", "boom"], workers=2)
    assert time.monotonic() - begin < 10 and running("sleep 61.5") == []
    # and the next map runs normally (the stop applies only while an interrupted map winds down)
    assert proc.thread_map(lambda x: proc.run(["true"]).returncode, ["x", "y"], workers=2) == [0, 0]


def test_work_beside_the_caller_is_stopped_at_once_when_the_caller_is_interrupted_and_starts_nothing_after() -> None:
    """A quick rebuild's import and compile checks run in threads beside its packaging: Ctrl-C or SIGTERM while the
    main thread writes the wheel or waits on the checks stops their children at once, and a thread that would go
    on with a new child (the compile check replaces a dead one) starts none."""
    import os
    import signal
    import threading
    import time

    import pytest

    from tritonbuild.system import proc

    starts: list[int] = []

    def checks() -> None:  # like the compile check's group: a child after another until the cases are done
        for _ in range(3):
            child = proc.start(["sleep", "62.25"])
            starts.append(child.pid)
            try:
                child.wait()
            finally:
                proc.end(child)
                assert child.stdout is not None
                child.stdout.close()

    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()
    begin = time.monotonic()
    with pytest.raises(KeyboardInterrupt), proc.beside(2) as pool:
        pool.submit(checks)
        time.sleep(30)  # the caller's own work (packaging), interrupted
    assert time.monotonic() - begin < 10
    assert running("sleep 62.25") == [] and len(starts) == 1
    with proc.beside(1) as pool:  # and the next pool runs normally
        assert pool.submit(lambda: proc.run(["true"]).returncode).result() == 0
