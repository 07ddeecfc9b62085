"""A passing compile check is not run again while nothing it judges changed (#45): the same build dir, interpreter,
LLVM and corpus, and the wheel's libraries, Python files and executables byte for byte (other files by size). The
skip is said in one line and the manifest keeps the last report; a failing check leaves no record."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

from tests.helpers import PlainReporter, plan_for
from tritonbuild.plan import Plan
from tritonbuild.wheel import compilecheck_run as run
from tritonbuild.wheel.checks.base import BuildSide
from tritonbuild.wheel.checks.compile import _at_build


def _setup(tree, tmp_path: Path) -> tuple[Plan, Path]:  # type: ignore[no-untyped-def]
    plan = plan_for(tree())
    assert plan.compile_check is not None and plan.compile_check.enabled
    build = tmp_path / "build" / plan.key
    build.mkdir(parents=True)
    plan = replace(plan, cmake=replace(plan.cmake, build_dir=str(build)))
    wheel = tmp_path / "wheel"
    for rel, data in (("triton/_C/libtriton.so", b"\x7fELF one"), ("triton/compiler.py", b"x = 1\n"),
                      ("triton/backends/nvidia/bin/ptxas", b"ptxas 1"), ("triton/data/big.bin", b"a" * 100)):
        (wheel / rel).parent.mkdir(parents=True, exist_ok=True)
        (wheel / rel).write_bytes(data)
    (wheel / "triton/backends/nvidia/bin/ptxas").chmod(0o755)
    return plan, wheel


REPORT = {"enabled": True, "seconds": 3.0, "counts": {"ok": 2}, "cases": []}


def test_a_passing_check_is_skipped_until_the_wheel_or_what_it_judges_changes(tree, tmp_path: Path) -> None:
    plan, wheel = _setup(tree, tmp_path)
    now = run.judged(plan, wheel)
    assert run.passed_before(plan, now) is None  # never ran here
    run.remember(plan, now, REPORT)
    log, said = io.StringIO(), io.StringIO()
    found = _at_build(BuildSide(plan, wheel, log, PlainReporter(said)))  # would start the child without the record
    assert found.status == "ok" and found.report["counts"] == {"ok": 2}
    assert found.report["skipped"].startswith("compile check skipped:") and "\n" not in found.report["skipped"]
    assert log.getvalue().startswith("compile check skipped:")
    assert said.getvalue() == f"compile check: {found.report['skipped']}\n"  # and said to the person
    (wheel / "triton/data/big.bin").write_bytes(b"b" * 100)  # data of the same size: not what the check runs
    assert run.passed_before(plan, run.judged(plan, wheel)) is not None
    for rel, data in (("triton/_C/libtriton.so", b"\x7fELF two"), ("triton/compiler.py", b"x = 2\n"),
                      ("triton/backends/nvidia/bin/ptxas", b"ptxas 2")):
        before = (wheel / rel).read_bytes()
        (wheel / rel).write_bytes(data)  # the same size, other bytes
        assert run.passed_before(plan, run.judged(plan, wheel)) is None, rel
        (wheel / rel).write_bytes(before)
    assert run.passed_before(plan, run.judged(plan, wheel)) is not None


def test_another_llvm_interpreter_corpus_or_build_dir_runs_it_and_a_failure_forgets(tree, tmp_path: Path) -> None:
    plan, wheel = _setup(tree, tmp_path)
    run.remember(plan, run.judged(plan, wheel), REPORT)
    check = plan.compile_check
    assert check is not None
    others = [replace(plan, llvm=replace(plan.llvm, version="99.0.0")), replace(plan, python="/other/python"),
              replace(plan, compile_check=replace(check, timeout=check.timeout + 1)),
              replace(plan, compile_check=replace(check, cases=check.cases[1:])), replace(plan, key="0" * 16)]
    for other in others:
        assert run.passed_before(other, run.judged(other, wheel)) is None
    record = Path(plan.cmake.build_dir) / run.PASSED
    record.write_text(json.dumps({"judged": "not a record", "report": REPORT}))
    assert run.passed_before(plan, run.judged(plan, wheel)) is None
    run.remember(plan, run.judged(plan, wheel), REPORT)
    run.remember(plan, run.judged(plan, wheel), None)  # the check failed
    assert not record.exists() and run.passed_before(plan, run.judged(plan, wheel)) is None


def test_an_unchanged_file_is_not_read_again_unless_it_changed_too_recently_to_tell(tree, tmp_path: Path) -> None:
    """A library whose stat key (device, inode, size, mtime) is the record's is not hashed again: what makes a
    quick rebuild's check start at once when only libtriton changed. A file whose mtime was within RACY_NS of the
    hashing is always hashed again, since a second write in the same clock tick keeps the stat key."""
    import os
    import time

    plan, wheel = _setup(tree, tmp_path)
    lib, ptxas = wheel / "triton/_C/libtriton.so", wheel / "triton/backends/nvidia/bin/ptxas"
    old = time.time_ns() - 10 * run.RACY_NS
    os.utime(ptxas, ns=(old, old))  # installed long ago; libtriton just now
    now = run.judged(plan, wheel)
    assert now is not None and str(ptxas) in now["files"] and str(lib) not in now["files"]
    run.remember(plan, now, REPORT)
    for path, when in ((lib, lib.stat().st_mtime_ns), (ptxas, old)):
        path.write_bytes(path.read_bytes()[::-1])  # other bytes, the same size and inode, the mtime put back
        os.utime(path, ns=(when, when))
    assert run.passed_before(plan, run.judged(plan, wheel)) is None, "the recent libtriton is hashed again"
    lib.write_bytes(lib.read_bytes()[::-1])
    os.utime(lib, ns=(old, old))
    run.remember(plan, run.judged(plan, wheel), REPORT)
    kept = ptxas.read_bytes()
    ptxas.write_bytes(kept[::-1])
    os.utime(ptxas, ns=(old, old))
    assert run.passed_before(plan, run.judged(plan, wheel)) is not None, "its stat key is the record's: not read"
    ptxas.write_bytes(b"ptxas 9")
    assert run.passed_before(plan, run.judged(plan, wheel)) is None, "a changed mtime or size is read again"


def test_a_hostile_record_never_raises_and_skips_only_on_an_exact_match(tree, tmp_path: Path) -> None:
    """The record is a file in the build dir, read as hostile: whatever it holds, ``judged`` and ``passed_before``
    never raise, a record skips the check only when its ``judged`` is exactly today's, and ``files`` entries that
    do not name a file's stat key exactly change nothing."""
    import tempfile

    from hypothesis import given, settings
    from hypothesis import strategies as st

    plan, wheel = _setup(tree, tmp_path)
    clean = run.judged(plan, wheel)
    assert clean is not None
    scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=70)
    json_ = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=15)
    files = st.dictionaries(st.sampled_from([str(wheel / "triton/_C/libtriton.so"), "x"]) | st.text(max_size=20),
                            st.lists(st.lists(st.integers(), max_size=5) | json_, max_size=3) | json_, max_size=4)
    record = st.fixed_dictionaries({"judged": st.just(run._compared(clean)) | json_, "files": files | json_,
                                    "report": st.just(REPORT) | json_})
    content = (record.map(lambda r: json.dumps(r).encode()) | st.binary(max_size=200)
               | st.integers(1, 3000).map(lambda n: b"[" * n))

    @settings(max_examples=150, deadline=None)
    @given(content)
    def one(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as build:
            here = replace(plan, cmake=replace(plan.cmake, build_dir=build))
            (Path(build) / run.PASSED).write_bytes(data)
            now = run.judged(here, wheel)
            assert now is not None and now["wheel"] == clean["wheel"]
            kept = run.passed_before(here, now)
            parsed = json.loads(data) if kept is not None else None
            assert kept is None or (parsed["judged"] == run._compared(now) and kept[0] == parsed["report"])

    one()
