"""fileutil.walk (#44): the one walk of a source or plugin dir is bounded, stays on one file system, never enters
/proc, /sys or /dev, and turns an unreadable dir into one paragraph."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.errors import UserError
from tritonbuild.system.fileutil import files_under, walk


def test_the_walk_of_root_leaves_out_proc_sys_dev_and_other_file_systems() -> None:
    _, dirs, _ = next(iter(walk(Path("/"), "The plugin")))
    assert not {"proc", "sys", "dev"} & set(dirs), dirs
    dev = Path("/").stat().st_dev
    assert all(Path("/", d).stat().st_dev == dev for d in dirs), dirs


def test_more_entries_than_the_cap_is_one_paragraph(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"f{i}").write_text("")
    assert len(list(walk(tmp_path, "The plugin", limit=30))) == 1
    with pytest.raises(UserError) as info:
        list(walk(tmp_path, "The plugin", limit=29))
    assert f"The plugin {tmp_path} holds more than 29 files and directories" in str(info.value)
    assert "\n" not in str(info.value)


def test_a_dir_that_goes_away_mid_walk_is_one_paragraph(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    it = iter(walk(tmp_path, "The Triton source"))
    next(it)
    shutil.rmtree(tmp_path / "a")
    with pytest.raises(UserError) as info:
        next(it)
    assert "could not be read" in str(info.value) and "No such file or directory" in str(info.value)


def test_links_are_listed_never_followed(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.cmake").write_text("")
    (tmp_path / "up").symlink_to("/")
    assert sorted(p.name for p in files_under(tmp_path, "t")) == ["up", "x.cmake"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=12), st.integers(1, 8))
def test_the_depth_cap_holds_for_any_shape(tmp_path_factory: pytest.TempPathFactory, shape: list[int],
                                           depth: int) -> None:
    """Chains of dirs of generated depths: walked in full when none is deeper than ``depth``, else refused."""
    top = tmp_path_factory.mktemp("t")
    for i, n in enumerate(shape):
        Path(top, f"c{i}", *(["d"] * n)).mkdir(parents=True)
    if max(shape) + 1 <= depth:
        assert len(list(walk(top, "t", depth=depth))) == len(shape) + sum(shape) + 1
    else:
        with pytest.raises(UserError, match="levels of them"):
            list(walk(top, "t", depth=depth))
