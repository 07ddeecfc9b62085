"""The libraries check at build time reads the tree the wheel was just written from when, and only when, its ELF
files are the wheel's ELF members by name and size (issue 45: extracting a 280 MB libtriton again cost 1-2.5 s of a
one-edit rebuild)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tritonbuild.wheel.checks.elf import elf_members, same_elves

ELF = b"\x7fELF" + b"\0" * 60


def tree_and_wheel(tmp: Path, files: dict[str, bytes], wheel_files: dict[str, bytes]) -> tuple[Path, Path]:
    root = tmp / "tree"
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    wheel = tmp / "w.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in wheel_files.items():
            zf.writestr(name, data)
    return root, wheel


def test_the_same_elves_are_read_from_the_tree(tmp_path: Path) -> None:
    files = {"triton/_C/libtriton.so": ELF + b"x" * 100, "triton/FileCheck": ELF, "triton/a.py": b"print()"}
    root, wheel = tree_and_wheel(tmp_path, files, files)
    with zipfile.ZipFile(wheel) as zf:
        assert elf_members(zf) == {"triton/_C/libtriton.so": 164, "triton/FileCheck": 64}
        assert same_elves(elf_members(zf), root)


@pytest.mark.parametrize("change", ["extra", "missing", "size", "renamed", "none_at_all"])
def test_a_tree_that_differs_is_not_read(tmp_path: Path, change: str) -> None:
    tmp = tmp_path
    wheel_files = {"triton/_C/libtriton.so": ELF + b"x" * 100, "triton/FileCheck": ELF}
    files = dict(wheel_files)
    if change == "extra":
        files["triton/_C/libstale.so.1"] = ELF  # a library an earlier install left in the prefix
    elif change == "missing":
        del files["triton/FileCheck"]
    elif change == "size":
        files["triton/_C/libtriton.so"] = ELF + b"x" * 99
    elif change == "renamed":
        files["triton/_C/libtriton2.so"] = files.pop("triton/_C/libtriton.so")
    else:
        files, wheel_files = {"a.txt": b"a"}, {"a.txt": b"a"}
    root, wheel = tree_and_wheel(tmp, files, wheel_files)
    with zipfile.ZipFile(wheel) as zf:
        assert not same_elves(elf_members(zf), root)
