from __future__ import annotations

import time
from collections.abc import Iterable

from tritonbuild.system.progress import Tracker


class Clock:
    """A clock the test moves by hand: ``Tracker`` reads the time only through it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def feed_at(tracker: Tracker, clock: Clock, lines: Iterable[tuple[float, str]]) -> None:
    """Feed each line when ``clock`` shows its time (seconds since the test's start)."""
    for at, line in lines:
        clock.now = 100.0 + at
        tracker.feed(line)


def test_phases_and_failure_tail() -> None:
    clock = Clock()
    t = Tracker(clock=clock)
    feed_at(t, clock, [(10, "-- Configuring done"), (12, "*** Building project with Ninja..."),
                       (20, "[1/3] Building CXX object a.o"), (21, "FAILED: b.o"), (21, "g++ -c b.cpp"),
                       (21, "b.cpp:3:1: error: expected ';'"), (22, "ninja: build stopped")])
    assert t.phase == "compile" and (t.done, t.total) == (1, 3)
    tail = t.failure_tail().splitlines()
    start = tail.index("FAILED: b.o")
    assert tail[start - 1] == "[1/3] Building CXX object a.o"  # a little context before the failure
    assert tail[start:start + 3] == ["FAILED: b.o", "g++ -c b.cpp", "b.cpp:3:1: error: expected ';'"]
    feed_at(t, clock, [(30, "[2/3] Building CXX object b.o"), (45, "[3/3] Linking CXX shared library libtriton.so")])
    assert t.phase == "link"
    clock.now = 100.0 + 46.5
    # configure until the build banner; compile until the last status line before the link; the link since then
    assert t.finish() == {"configure": 12.0, "compile": 18.0, "link": 16.5}


def test_each_phase_gets_exactly_the_time_between_its_lines() -> None:
    clock = Clock()
    t = Tracker(clock=clock)
    feed_at(t, clock, [(3, "-- Configuring done"), (4.5, "*** Building project with Ninja..."),
                       (6, "[1/2] Building CXX object a.o"), (9, "[2/2] Linking CXX shared library libtriton.so"),
                       (9.5, "-- Installing: /b/triton/_C/libtriton.so"), (11, "*** Making wheel..."),
                       (11.25, "Created triton-3.0-cp311-cp311-linux_x86_64.whl")])
    assert t.phase == "package"
    clock.now = 100.0 + 12
    assert t.finish() == {"configure": 4.5, "compile": 1.5, "link": 3.5, "install": 1.5, "package": 1.0}


def test_noop_is_noticed() -> None:
    t = Tracker()
    t.feed("ninja: no work to do.")
    assert t.ninja_no_work


def test_a_quick_rebuild_counts_the_first_compile_as_compile() -> None:
    clock = Clock()
    t = Tracker(clock=clock)
    # ninja run directly: no configure, no skbuild banner
    feed_at(t, clock, [(0, "ninja: Entering directory `/b/cmake'")])
    assert t.phase == "compile"
    feed_at(t, clock, [(4, "[1/2] Building CXX object lib/Analysis/CMakeFiles/TritonAnalysis.dir/Allocation.cpp.o"),
                       (9, "[2/2] Linking CXX shared library libtriton.so"),
                       (10, "-- Installing: /b/quick-prefix/triton/_C/libtriton.so")])
    assert t.phase == "install"
    clock.now = 100.0 + 10.25
    assert t.finish() == {"configure": 0.0, "compile": 4.0, "link": 6.0, "install": 0.25}


def test_the_real_clock_is_the_default() -> None:
    assert Tracker().clock is time.monotonic


def test_a_log_gets_a_plain_progress_line_at_most_every_interval() -> None:
    from tritonbuild.reporter import LogBar

    clock, lines = Clock(), list[str]()
    bar = LogBar(lines.append, "compile", interval=30.0, clock=clock)
    for second in range(251):
        clock.now = 100.0 + second
        bar.update(second, 250, "compile: building")
    bar.finish()
    assert lines[0] == "compile 30/250, 0:30 elapsed" and lines[-1] == "compile 250/250, 4:10 in all"
    assert len(lines) == 250 // 30 + 1 and all(line.isprintable() for line in lines)


def test_a_short_task_says_nothing_and_a_transfer_counts_mib() -> None:
    from tritonbuild.reporter import LogBar

    clock, lines = Clock(), list[str]()
    quick = LogBar(lines.append, "compile", interval=30.0, clock=clock)
    quick.update(3, 3)
    quick.finish()
    assert lines == []
    fetch = LogBar(lines.append, "llvm.tar.gz", transfer=True, interval=30.0, clock=clock)
    clock.now += 3661
    fetch.update(3 << 20, 10 << 20)
    assert lines == ["llvm.tar.gz 3.0 MiB of 10.0 MiB, 1:01:01 elapsed"]
