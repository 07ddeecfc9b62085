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
