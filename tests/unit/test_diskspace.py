"""The one wording of a full disk (#44): the destination of a copy, not its source; the mount point found by
walking up while the device stays the same; sizes as a person reads them."""

from __future__ import annotations

import errno
from pathlib import Path

from tritonbuild.system.diskspace import destination, file_system, is_disk_problem, mount_point, size_text, write_failed


def test_a_copy_is_named_by_its_destination() -> None:
    copy = OSError(errno.ENOSPC, "No space left on device", "/toolkit/lib/libnvperf_host.so", None, "/c/x.so")
    assert destination(copy, Path("/default")) == Path("/c/x.so")
    assert destination(OSError(errno.ENOSPC, "full", "/c/y"), Path("/d")) == Path("/c/y")
    assert destination(OSError(errno.ENOSPC, "full"), Path("/d")) == Path("/d")  # a write names no file
    assert is_disk_problem(copy) and is_disk_problem(OSError(errno.EROFS, "ro"))
    assert not is_disk_problem(OSError(errno.EACCES, "no")) and not is_disk_problem(ValueError())


def test_the_mount_point_is_where_the_device_changes(tmp_path: Path) -> None:
    assert mount_point(Path("/proc/self/status")) == Path("/proc")
    assert mount_point(Path("/")) == Path("/")
    mount = mount_point(tmp_path / "not" / "yet" / "there")  # the nearest existing dir's file system
    assert mount is not None and mount.stat().st_dev == tmp_path.stat().st_dev
    assert mount == Path("/") or mount.parent.stat().st_dev != mount.stat().st_dev


def test_the_sentence_names_the_destination_its_file_system_and_free_space(tmp_path: Path) -> None:
    exc = OSError(errno.ENOSPC, "No space left on device", "/elsewhere/src", None, str(tmp_path / "dest\nx"))
    text = write_failed(exc, tmp_path)
    assert text.startswith(f"Writing '{tmp_path}/dest\\nx' failed: No space left on device (on ")  # printable
    assert f"the file system mounted at {mount_point(tmp_path)}, with " in text and " free now)." in text
    assert "/elsewhere/src" not in text
    assert file_system(Path("/proc/self")).startswith("the file system mounted at /proc, with ")


def test_sizes_read_as_a_person_reads_them() -> None:
    assert [size_text(n) for n in (0, 1023, 5 << 20, 3 << 30)] == ["0 KiB", "1 KiB", "5.0 MiB", "3.0 GiB"]
