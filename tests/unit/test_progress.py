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


def test_a_quick_rebuild_counts_the_first_compile_as_compile() -> None:
    t = Tracker()
    t.feed("ninja: Entering directory `/b/cmake'")  # ninja run directly: no configure, no skbuild banner
    assert t.phase == "compile"
    t.feed("[1/2] Building CXX object lib/Analysis/CMakeFiles/TritonAnalysis.dir/Allocation.cpp.o")
    t.feed("[2/2] Linking CXX shared library libtriton.so")
    t.feed("-- Installing: /b/quick-prefix/triton/_C/libtriton.so")
    assert t.phase == "install" and "configure" not in {k for k, v in t.finish().items() if v > 0.5}
