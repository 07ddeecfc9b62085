"""execute.quick.copy_stale: what ``cmake --install`` takes for up to date (a source within a second of its copy)
is compared and copied again; its record of the sources it made sure of is the build dir's content, read as
hostile (review 49, #45)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.execute import quick


def _layout(root: Path) -> tuple[SimpleNamespace, Path, Path]:
    """A build dir whose cmake_install.cmake installs src/python/triton/ into triton/, one file installed."""
    build, src = root / "build", root / "src" / "python" / "triton"
    (build / "cmake").mkdir(parents=True)
    src.mkdir(parents=True)
    (src / "a.py").write_text("x = 1\n")
    (build / "cmake" / "cmake_install.cmake").write_text(
        'if(CMAKE_INSTALL_COMPONENT STREQUAL "tritonbuild" OR NOT CMAKE_INSTALL_COMPONENT)\n'
        f'  file(INSTALL DESTINATION "${{CMAKE_INSTALL_PREFIX}}/triton" TYPE DIRECTORY FILES "{src}/" '
        'REGEX "/\\\\_\\\\_pycache\\\\_\\\\_$" EXCLUDE)\nendif()\n')
    dst = build / quick.PREFIX / "triton" / "a.py"
    dst.parent.mkdir(parents=True)
    dst.write_text("x = 1\n")
    (build / "cmake" / "install_manifest_tritonbuild.txt").write_text(f"{dst}\n")
    plan = SimpleNamespace(cmake=SimpleNamespace(build_dir=str(build), install_component="tritonbuild"))
    return plan, src / "a.py", dst


def test_a_source_saved_again_within_the_second_of_its_copy_is_copied_again_then_remembered(tmp_path: Path) -> None:
    plan, src, dst = _layout(tmp_path)
    assert quick.copy_stale(plan) == []  # the same bytes: nothing to copy, the source remembered
    st = src.stat()
    src.write_text("x = 22\n")  # a second save within the second: cmake --install would leave the copy
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert quick.copy_stale(plan) == ["triton/a.py"] and dst.read_text() == "x = 22\n"
    assert dst.stat().st_mtime_ns % 10**9 == 0  # whole seconds, as CMake sets them
    dst.write_text("x = 3\n")  # the copy changed under an unchanged source: the build dir is trusted
    assert quick.copy_stale(plan) == []


def test_whatever_the_record_holds_a_changed_source_reaches_its_copy(tmp_path_factory) -> None:
    """Generated records (JSON of any shape and bytes, up to 4 KiB, 150 cases; a link, other writers): the copy
    ends as the source, unless the record names the source's exact size and time (trusted as the build dir)."""
    base = tmp_path_factory.mktemp("stale")
    plan, src, dst = _layout(base)
    record = Path(plan.cmake.build_dir) / quick.SOURCES
    number = st.integers(-2**62, 2**62).filter(lambda n: n != 7)  # 7: the source's size below
    value = st.one_of(st.lists(st.one_of(number, st.text(max_size=5), st.booleans(), st.none()), max_size=3),
                      number, st.text(max_size=10))
    doc = st.one_of(st.dictionaries(st.sampled_from([str(src), "x"]), value, max_size=3).map(json.dumps),
                    st.binary(max_size=4096).map(lambda b: b.decode("latin-1")))

    @settings(max_examples=150, deadline=2000)
    @given(doc, st.booleans())
    def check(text: str, writable: bool) -> None:
        src.write_text("x = 77\n")  # 7 bytes
        dst.write_text("x = 1\n")
        record.unlink(missing_ok=True)
        record.write_text(text)
        record.chmod(0o666 if writable else 0o644)
        quick.copy_stale(plan)
        assert dst.read_text() == "x = 77\n"
        assert quick._read_sources(record) == {str(src): [7, src.stat().st_mtime_ns]}

    check()
