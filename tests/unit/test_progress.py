from __future__ import annotations

from tritonbuild.progress import Tracker


def test_phases_and_failure_tail() -> None:
    t = Tracker()
    for line in ["-- Configuring done", "*** Building project with Ninja...", "[1/3] Building CXX object a.o",
                 "FAILED: b.o", "g++ -c b.cpp", "b.cpp:3:1: error: expected ';'", "ninja: build stopped"]:
        t.feed(line)
    assert t.phase == "compile" and (t.done, t.total) == (1, 3)
    tail = t.failure_tail().splitlines()
    start = tail.index("FAILED: b.o")
    assert tail[start - 1] == "[1/3] Building CXX object a.o"  # a little context before the failure
    assert tail[start:start + 3] == ["FAILED: b.o", "g++ -c b.cpp", "b.cpp:3:1: error: expected ';'"]
    t.feed("[3/3] Linking CXX shared library libtriton.so")
    assert t.phase == "link"
    assert set(t.finish()) >= {"configure", "compile", "link"}


def test_noop_is_noticed() -> None:
    t = Tracker()
    t.feed("ninja: no work to do.")
    assert t.ninja_no_work
