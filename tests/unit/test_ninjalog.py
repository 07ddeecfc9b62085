from __future__ import annotations

from tritonbuild.execute import ninjalog

# Two runs: the first is replaced by the second (its end times start again from 0). In the second, b waits for a,
# d waits for b (c ran beside them), and the link waits for d: the critical path is a -> b -> d -> link.
LOG = """# ninja log v7
0\t50000\t1\told.o\taaa
0\t1000\t1\ta.o\th1
50\t3000\t1\tc.o\th2
1000\t4000\t1\tb.o\th3
1000\t4000\t1\tb.d\th3
4000\t9000\t1\td.o\th4
9000\t9500\t1\tlibtriton.so\th5
"""


def test_the_last_run_and_its_critical_path_and_slowest_edges() -> None:
    edges = ninjalog.parse(LOG)
    assert [e.output for e in edges] == ["a.o", "c.o", "b.o", "d.o", "libtriton.so"]  # b.d: same edge as b.o
    assert [e.output for e in ninjalog.critical_path(edges)] == ["a.o", "b.o", "d.o", "libtriton.so"]
    r = ninjalog.report(edges, top=2)
    assert (r["wall_seconds"], r["edges"], r["critical_path_seconds"]) == (9.5, 5, 9.5)
    assert r["slowest"] == [{"output": "d.o", "seconds": 5.0}, {"output": "b.o", "seconds": 3.0}]
    assert ninjalog.report([]) == {} and ninjalog.parse("# ninja log v5\n") == []


def test_a_build_of_several_rounds_lists_each_rounds_wall_time_and_reports_the_last(tmp_path) -> None:
    # what the build dir held before this build, then a failed round, then the round that made the wheel: its
    # first edge ends later than the failed round's last one, so only the marks tell the rounds apart
    before = "# ninja log v7\n0\t70000\t1\tstale.o\tzz\n"
    failed = "0\t400\t1\tunity_0.o\tu1\n"
    second = LOG.replace("# ninja log v7\n0\t50000\t1\told.o\taaa\n", "")
    (tmp_path / ".ninja_log").write_text(before + failed + second)
    went = ninjalog.where_time_went(tmp_path, [len(before), len(before + failed)])
    assert went["runs"] == [{"wall_seconds": 0.4, "edges": 1}, {"wall_seconds": 9.5, "edges": 5}]
    assert (went["wall_seconds"], went["critical_path"][-1]["output"]) == (9.5, "libtriton.so")
    # read whole, end times that do not decrease look like one run: why the build marks its rounds
    assert [len(r) for r in ninjalog.runs(failed + second)] == [6]
    assert [len(r) for r in ninjalog.runs(before + failed)] == [1, 1]
    # one round: no list of rounds; a log Ninja rewrote meanwhile (shorter than a mark): its last run
    assert "runs" not in ninjalog.where_time_went(tmp_path, [len(before + failed)])
    whole = ninjalog.where_time_went(tmp_path, [10**9])
    assert whole["edges"] == len(ninjalog.parse(before + failed + second)) == 6 and "runs" not in whole
    assert ninjalog.where_time_went(tmp_path / "none") == {}
