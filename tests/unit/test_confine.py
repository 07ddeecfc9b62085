"""Issue #35: the helpers that keep paths inside their roots (tritonbuild.system.fileutil), the checks of names that
become paths (the platform suffix, a plugin's name and LLVM targets) and the wheel writers' refusal of outside links."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.resolve.facts import HostFacts
from tritonbuild.resolve.llvm_requirement import host_suffix
from tritonbuild.resolve.plugins import PluginFiles, check_plugin
from tritonbuild.settings.model import check_suffix, env_resolved
from tritonbuild.system import archive, fileutil
from tritonbuild.wheel import writer

HOST = HostFacts(machine="x86_64", system="Linux", glibc="2.36", cpus=2, mem_total_gib=8.0, mem_available_gib=4.0,
                 disk_free_gib=10.0)


def test_confined_accepts_plain_names_and_refuses_every_way_out(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    assert fileutil.confined(root, "llvm-2eb709b9-ubuntu-x64") == root / "llvm-2eb709b9-ubuntu-x64"
    assert fileutil.confined(root, "a", "b.txt") == root / "a" / "b.txt"
    (root / "out").symlink_to(tmp_path)  # a link on the way that leaves the root
    for parts in (("x/../../../escaped",), ("..",), ("/etc/passwd",), ("a", "..", "..", "b"), ("out", "x")):
        with pytest.raises(UserError, match="would lead outside"):
            fileutil.confined(root, *parts, what="the entry")


def test_within_names_links_that_leave_dangle_or_loop(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "f.txt").write_text("x")
    (root / "in").symlink_to("f.txt")
    assert fileutil.within(root, root / "in", "a file") == (root / "f.txt").resolve()
    (root / "out").symlink_to(tmp_path / "secret")
    (tmp_path / "secret").write_text("s")
    with pytest.raises(UserError, match=r"is a symlink to .*secret, outside"):
        fileutil.within(root, root / "out", "a file")
    (root / "gone").symlink_to(root / "nothing")
    with pytest.raises(UserError, match="is a dangling symlink"):
        fileutil.within(root, root / "gone", "a file")
    (root / "loop").symlink_to("loop")
    with pytest.raises(UserError, match="is a symlink loop"):
        fileutil.within(root, root / "loop", "a file")


def test_read_checked_reads_utf8_and_refuses_the_rest_in_one_paragraph(tmp_path: Path) -> None:
    root = tmp_path
    f = root / "name.conf"
    assert fileutil.read_checked(f, root, "the name") is None  # absent
    f.write_text("shared\n")
    assert fileutil.read_checked(f, root, "the name") == "shared\n"
    cases = {b"\xff\xfe": "is not UTF-8 text", b"x" * 101: "is larger than 100 bytes"}
    for data, needle in cases.items():
        f.write_bytes(data)
        with pytest.raises(UserError, match=needle) as err:
            fileutil.read_checked(f, root, "the name", limit=100)
        assert "\n" not in str(err.value)
    f.unlink()
    f.mkdir()
    with pytest.raises(UserError, match="not a regular file but a directory"):
        fileutil.read_checked(f, root, "the name")
    fifo = root / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="not a regular file but a fifo"):  # and does not block
        fileutil.read_checked(fifo, root, "the name")


def test_read_text_skips_what_is_no_regular_file_and_caps_what_it_reads(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert fileutil.read_text(fifo) == ""  # a fifo with no writer would block a plain read forever
    assert fileutil.read_text(tmp_path) == ""
    (tmp_path / "big").write_bytes(b"a" * 50 + b"\xff")
    assert fileutil.read_text(tmp_path / "big", limit=10) == "a" * 10
    assert fileutil.read_text(tmp_path / "big").endswith("\ufffd")


def test_unpackable_entries_lists_the_links_a_copy_of_the_dir_cannot_keep(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    (root / "backend" / "sub").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / "backend" / "f.py").write_text("x")
    (root / "backend" / "ok.py").symlink_to("f.py")  # relative, inside backend/: fine
    (root / "backend" / "okdir").symlink_to("sub")
    (root / "backend" / "sub" / "leak.txt").symlink_to("/etc/hostname")
    (root / "backend" / "dangle").symlink_to(root / "none")
    (root / "backend" / "loop").symlink_to("loop")
    (root / "backend" / "lib").symlink_to("../lib")  # inside the plugin but outside backend/: broken in the wheel
    (root / "backend" / "abs.py").symlink_to(root / "backend" / "f.py")  # absolute: the wheel's copy points here
    (root / "lib" / "not-packaged").symlink_to("/etc/hostname")
    bad = {p.name: why for p, why in fileutil.unpackable_entries(root, ("backend",))}
    assert set(bad) == {"leak.txt", "dangle", "loop", "lib", "abs.py"}
    assert bad["leak.txt"].startswith("points outside") and bad["loop"] == "is a symlink loop"
    assert bad["lib"] == f"points outside {root / 'backend'}, to {root / 'lib'}"
    assert bad["dangle"].startswith("dangles") and bad["abs.py"].startswith("is an absolute link")
    # a packaged dir that is itself a link out of the root is reported, not walked; one inside is walked
    (root / "language").symlink_to(tmp_path)
    assert [p.name for p, _ in fileutil.unpackable_entries(root, ("language",))] == ["language"]
    (root / "tools").symlink_to("lib")
    assert [p.name for p, _ in fileutil.unpackable_entries(root, ("tools",))] == ["not-packaged"]
    assert fileutil.unpackable_entries(root, ("backend",), skip=lambda rel: rel.startswith("backend/")) == []


@pytest.mark.parametrize("name,problem", [
    ("nvidia/ok.h", None), ("../x", "contains '..'"), ("nvidia/../../x", "contains '..'"),
    ("/etc/passwd", "is an absolute path"), ("C:/x", "starts with a drive letter"), ("a\\b", "holds a backslash"),
    ("a\x00b", "holds a NUL byte"),
])
def test_zip_member_names(name: str, problem: str | None) -> None:
    assert archive.zip_member_problem(zipfile.ZipInfo(name)) == problem


def test_zip_member_links_and_devices() -> None:
    link, dev = zipfile.ZipInfo("nvidia/l"), zipfile.ZipInfo("nvidia/d")
    link.external_attr, dev.external_attr = 0o120777 << 16, 0o020666 << 16
    assert archive.zip_member_problem(link) == "is a symlink"
    assert archive.zip_member_problem(dev) == "is a device, fifo or socket"


def test_extract_zip_refuses_a_member_leaving_the_target_before_writing_anything(tmp_path: Path) -> None:
    wheel = tmp_path / "w.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/a.py", "a")
        zf.writestr("pkg/../../escaped.txt", "x")
    with pytest.raises(UserError, match=r"'pkg/../../escaped.txt' contains '..'"):
        archive.extract_zip(wheel, tmp_path / "dest", "the wheel w.whl")
    assert not (tmp_path / "dest").exists() and not (tmp_path / "escaped.txt").exists()


@pytest.mark.parametrize("value", ["ubuntu-x64", "almalinux-arm64", "macos-arm64", "rhel8.x64"])
def test_plain_suffixes_pass(value: str) -> None:
    assert check_suffix(value) == value
    given = env_resolved("llvm_system_suffix", {"TRITON_LLVM_SYSTEM_SUFFIX": value})
    assert given.origin == "env TRITON_LLVM_SYSTEM_SUFFIX" and host_suffix(HOST, given.value) == value
    assert host_suffix(HOST, env_resolved("llvm_system_suffix", {"TRITON_LLVM_SYSTEM_SUFFIX": ""}).value) == \
        "ubuntu-x64"  # empty is unset: this host's


@pytest.mark.parametrize("value", ["x/../../../escaped", "..", "a/b", "/abs", "-x", ".hidden", "a..b", "x" * 65,
                                   "ubuntu x64", "ubuntu-x64\n"])
def test_suffixes_that_are_paths_are_refused(value: str) -> None:
    with pytest.raises(UserError, match="is not a platform suffix") as err:
        env_resolved("llvm_system_suffix", {"TRITON_LLVM_SYSTEM_SUFFIX": value})
    assert "Fix or unset TRITON_LLVM_SYSTEM_SUFFIX" in str(err.value)


def _files(tmp_path: Path, **kw: object) -> PluginFiles:
    return PluginFiles(path=str(tmp_path / "p"), is_dir=True, has_backend=True, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("text,needle", [
    ("one\ntwo\n", "holds 2 lines"), ("a\0b\n", "NUL bytes"), ("n" * 65 + "\n", "65 characters long"),
    ("", "is not a C and Python identifier"), ("class\n", "is not a C and Python identifier"),
])
def test_name_conf_must_be_one_short_identifier_line(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        check_plugin(_files(tmp_path, name_conf=text), "--plugin-dir")
    assert check_plugin(_files(tmp_path, name_conf="\n  shared \n\n"), "--plugin-dir").name == "shared"
    assert check_plugin(_files(tmp_path, name_conf="n" * 64), "--plugin-dir").name == "n" * 64


def test_a_plugin_dir_shape_problem_is_reported_with_where_it_came_from(tmp_path: Path) -> None:
    files = PluginFiles(path=str(tmp_path / "p"), problem="is a file, not a directory")
    with pytest.raises(UserError, match=r"The plugin directory .*/p \(from TRITON_PLUGIN_DIRS\) is a file"):
        check_plugin(files, "TRITON_PLUGIN_DIRS")


def test_plugin_llvm_targets_are_names(tmp_path: Path) -> None:
    assert check_plugin(_files(tmp_path, llvm_targets="NVPTX\nAArch64;X86"), "x").llvm_targets == \
        ("NVPTX", "AArch64", "X86")
    with pytest.raises(UserError, match="not an LLVM target name"):
        check_plugin(_files(tmp_path, llvm_targets="NVPTX\n../../escaped"), "x")


def test_outside_links_names_files_reached_through_links_out_of_the_staged_tree(tmp_path: Path) -> None:
    stage = tmp_path / "wheel"
    (stage / "platlib" / "pkg").mkdir(parents=True)
    (stage / "data").mkdir()
    (tmp_path / "secret").write_text("s")
    (stage / "platlib" / "pkg" / "a.py").write_text("a")
    (stage / "platlib" / "pkg" / "in.py").symlink_to("a.py")
    (stage / "data" / "cross").symlink_to(stage / "platlib" / "pkg" / "a.py")  # between wheel dirs: inside
    (stage / "platlib" / "pkg" / "dangling").symlink_to(tmp_path / "none")  # not packaged by anyone
    (stage / "platlib" / "pkg" / "dir").symlink_to(tmp_path)  # a dir link: not descended into by the writer
    assert writer.outside_links([str(stage / "platlib"), str(stage / "data")]) == []
    (stage / "platlib" / "pkg" / "leak.txt").symlink_to(tmp_path / "secret")
    assert writer.outside_links([str(stage / "platlib"), str(stage / "data")]) == [
        f"{stage / 'platlib' / 'pkg' / 'leak.txt'} -> {tmp_path / 'secret'}"]


def test_the_quick_writer_refuses_an_outside_link_in_the_prefix(tmp_path: Path) -> None:
    last = tmp_path / "last.whl"
    with zipfile.ZipFile(last, "w") as zf:
        zf.writestr("t-1.dist-info/RECORD", "")
        zf.writestr("t-1.dist-info/METADATA", "Name: t\n")
    prefix = tmp_path / "prefix"
    (prefix / "t").mkdir(parents=True)
    (prefix / "t" / "a.py").write_text("a")
    (tmp_path / "secret").write_text("s")
    (prefix / "t" / "leak.txt").symlink_to(tmp_path / "secret")
    dest = tmp_path / "new.whl"
    with pytest.raises(UserError, match=r"refusing to write the wheel: .*leak.txt"):
        writer.write_wheel(last, prefix, [prefix / "t" / "a.py", prefix / "t" / "leak.txt"], dest, 1)
    assert not dest.exists()
    (prefix / "t" / "leak.txt").unlink()
    writer.write_wheel(last, prefix, [prefix / "t" / "a.py"], dest, 1)
    assert zipfile.ZipFile(dest).read("t/a.py") == b"a"


def test_unpackable_entries_names_fifos_sockets_odd_names_and_links_back_into_their_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(#35, findings 1, 2, 3, 7, 10) what a copy of a packaged dir cannot carry, besides the links above."""
    import socket

    root = tmp_path / "plugin"
    (root / "backend" / "sub").mkdir(parents=True)
    (root / "backend" / "f.py").write_text("x")
    (root / "backend" / "okdir").symlink_to("sub")  # a link to a sibling dir: fine
    assert fileutil.unpackable_entries(root, ("backend",)) == []
    os.mkfifo(root / "backend" / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        # bound by a relative name: a socket's path may hold only 107 bytes, and a deep tmp_path (pytest-xdist's
        # popen-gwN/ level under CI's TMPDIR) is longer
        monkeypatch.chdir(root / "backend" / "sub")
        sock.bind("sock")
        monkeypatch.undo()
        (root / "backend" / f"{chr(0xDCFF)}.py").write_text("x")  # the name b"\xff.py", as os.walk reads it
        (root / "backend" / "a\nb.py").write_text("x")
        (root / "backend" / "sub" / "self").symlink_to(".")
        (root / "backend" / "sub" / "up").symlink_to("..")
        bad = {p.relative_to(root).as_posix(): why for p, why in fileutil.unpackable_entries(root, ("backend",))}
    assert set(bad) == {"backend/pipe", "backend/sub/sock", f"backend/{chr(0xDCFF)}.py", "backend/a\nb.py",
                        "backend/sub/self", "backend/sub/up", "backend/okdir"}  # okdir/up/okdir/up/...
    assert bad["backend/pipe"].startswith("is a fifo, not a regular file") and "block" in bad["backend/pipe"]
    assert bad["backend/sub/sock"].startswith("is a socket")
    assert bad[f"backend/{chr(0xDCFF)}.py"] == "has a name that is not UTF-8 (rename it)"
    assert bad["backend/a\nb.py"].startswith("has a name with a control character")
    assert bad["backend/sub/self"].startswith("is a symlink loop (-> .")
    assert bad["backend/sub/up"].startswith("is a symlink loop (-> ..")
    # shown() prints an odd name on one line with its bytes escaped
    assert fileutil.shown(root / "backend" / f"{chr(0xDCFF)}.py") == f"'{root}/backend/\\xff.py'"
    assert fileutil.shown(root / "backend" / "a\nb.py") == f"'{root}/backend/a\\nb.py'"
    assert fileutil.shown(root / "backend" / "f.py") == f"{root}/backend/f.py"


def test_two_links_that_lead_into_each_other_are_a_loop(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    (root / "backend" / "a").mkdir(parents=True)
    (root / "backend" / "b").mkdir()
    (root / "backend" / "a" / "to_b").symlink_to("../b")
    assert fileutil.unpackable_entries(root, ("backend",)) == []
    (root / "backend" / "b" / "to_a").symlink_to("../a")
    bad = [p.name for p, why in fileutil.unpackable_entries(root, ("backend",)) if "symlink loop" in why]
    assert bad == ["to_b", "to_a"]
