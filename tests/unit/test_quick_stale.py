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


def test_a_file_a_later_file_rule_installs_or_a_rule_excludes_is_never_copied_from_a_directory_source(
        tmp_path: Path) -> None:
    """The bench of review 49's fix: develop's python/triton/_C/libtriton.so link (to a libtriton linked against
    the shared libLLVM) lies in the source dir that install(DIRECTORY) copies, which excludes it by a REGEX; the
    installed libtriton comes from a later FILE rule (and is stripped or patched after): it is never compared with
    the link and never replaced by it."""
    plan, src, dst = _layout(tmp_path)
    build = Path(plan.cmake.build_dir)
    script = build / "cmake" / "cmake_install.cmake"
    stage = build / "cmake" / "stage" / "libtriton.so"
    stage.parent.mkdir(parents=True)
    stage.write_bytes(b"\x7fELF built")
    libs = 'REGEX "/triton/_C/[^/]*\\\\.(so|pyd)(\\\\.[0-9]+)*$" EXCLUDE'  # as tritonbuild's CMake writes it
    text = script.read_text().replace('EXCLUDE)', f'EXCLUDE {libs})')
    script.write_text(text + f'file(INSTALL DESTINATION "${{CMAKE_INSTALL_PREFIX}}/triton/_C" TYPE FILE FILES '
                             f'"{stage}")\n')
    lib = Path(plan.cmake.build_dir) / quick.PREFIX / "triton" / "_C" / "libtriton.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"\x7fELF installed, stripped")
    (src.parent / "_C").mkdir()
    dev = tmp_path / "dev-libtriton.so"
    dev.write_bytes(b"\x7fELF develop's, shared libLLVM")
    (src.parent / "_C" / "libtriton.so").symlink_to(dev)
    (build / "cmake" / "install_manifest_tritonbuild.txt").write_text(f"{dst}\n{lib}\n")
    rules = quick._rules(build / "cmake")
    assert quick._source_of("triton/_C/libtriton.so", rules) is None
    assert quick._source_of("triton/a.py", rules) == src
    assert quick.copy_stale(plan) == [] and lib.read_bytes() == b"\x7fELF installed, stripped"
    (src.parent / "_C" / "libtriton.so").unlink()
    (src.parent / "_C" / "libtriton.so").write_bytes(b"\x7fELF a real file")  # excluded by the REGEX all the same
    assert quick.copy_stale(plan) == [] and lib.read_bytes() == b"\x7fELF installed, stripped"
