"""Review 42 (#48): ``llvm gc`` errs towards keeping (a plan it cannot read, a ``build`` that is no directory, a
cache root named through a link), finishes what an earlier removal left, and ``clean``/``status`` name a dir they
cannot read instead of a traceback; ``clean --dry-run`` writes nothing; a removal cut short leaves a build dir that
``clean`` still knows as its own."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from tests.integration.conftest import flat, run_cli
from tests.integration.test_nothing_lost import build_dir, held, llvm_entry, one_paragraph
from tritonbuild.errors import EnvironmentProblem
from tritonbuild.execute import builddirs
from tritonbuild.execute.lock import MARKER


def gc(cache: Path, *extra: str, cwd: Path, check: bool = True):  # type: ignore[no-untyped-def]
    return run_cli("llvm", "gc", "--cache-dir", str(cache), *extra, cwd=cwd, check=check)


@pytest.mark.parametrize("plan", ["{not json", "[1, 2]", '{"llvm": "x"}', "FIFO", "DIR"])
def test_a_plan_gc_cannot_read_keeps_every_llvm(tmp_path: Path, plan: str) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-maybe-used")
    d = build_dir(cache, "0123456789abcdef")
    if plan == "FIFO":
        os.mkfifo(d / "plan.json")  # read without blocking: gc must not hang on it either
    elif plan == "DIR":
        (d / "plan.json").mkdir()
    else:
        (d / "plan.json").write_text(plan)
    out = gc(cache, cwd=tmp_path)
    assert entry.is_dir() and (entry / "lib" / "libLLVM.a").is_file()
    assert f"keep {entry} (the plan of build dir {d} cannot be read" in flat(out.stdout)


def test_a_plan_without_an_llvm_keeps_nothing_and_an_unused_entry_goes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-unused")
    d = build_dir(cache, "0123456789abcdef")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "llvm": {"prefix": None}}))
    build_dir(cache, "fedcba9876543210")  # no plan, no lock file, not in use: uses no LLVM
    gc(cache, cwd=tmp_path)
    assert not entry.exists()


def test_a_build_root_that_is_no_directory_stops_gc_before_anything_is_removed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry = llvm_entry(cache, "llvm-a")
    (cache / "build").symlink_to(tmp_path / "unmounted-disk")  # a link to nowhere
    for extra in ((), ("--dry-run",)):
        out = gc(cache, *extra, cwd=tmp_path, check=False)
        assert out.returncode == 3, out.stderr
        one_paragraph(out.stderr)
        assert f"{cache / 'build'} is not a directory" in flat(out.stderr) and "nothing was removed" in out.stderr
        assert "would remove" not in out.stdout and entry.is_dir()


def test_a_cache_root_named_through_a_link_matches_the_plans_made_through_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real-cache"
    used, unused = llvm_entry(real, "llvm-used"), llvm_entry(real, "llvm-unused")
    (tmp_path / "linked-cache").symlink_to(real)
    d = build_dir(real, "0123456789abcdef")
    (d / "plan.json").write_text(json.dumps({"key": d.name, "llvm": {"prefix": str(tmp_path / "linked-cache" / "llvm"
                                                                                  / "llvm-used")}}))
    for root in (real, tmp_path / "linked-cache"):
        out = flat(gc(root, "--dry-run", cwd=tmp_path).stdout)
        assert "llvm-used (used by a build dir)" in out and "would remove" in out, out
        assert not [line for line in out.split("would remove")[1:] if "llvm-used" in line.split(" (")[0]], out
    gc(tmp_path / "linked-cache", cwd=tmp_path)
    assert used.is_dir() and not unused.exists()


def test_gc_finishes_what_an_earlier_removal_left_and_leaves_a_running_ones(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    llvm_entry(cache, "llvm-a")
    left = cache / "llvm" / ".removing-llvm-old-2147483646"  # no process has that pid
    (left / "lib").mkdir(parents=True)
    (left / "lib" / "libLLVM.a").write_bytes(b"\0" * 4096)
    running = cache / "llvm" / f".removing-llvm-busy-{os.getpid()}"  # a removal in progress
    running.mkdir()
    dry = flat(gc(cache, "--dry-run", cwd=tmp_path).stdout)
    assert f"would remove {left} (0.0 MiB, left by an earlier removal)" in dry and left.is_dir()
    gc(cache, cwd=tmp_path)
    assert not left.exists() and running.is_dir() and not (cache / "llvm" / "llvm-a").exists()


def test_clean_dry_run_writes_nothing_and_names_a_dir_in_use(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    idle, busy = build_dir(cache, "idleidleidleidle"), build_dir(cache, "busybusybusybusy")
    for d in (idle, busy):
        (d / MARKER).write_text("tritonbuild build dir\n")
    with held(busy / ".tritonbuild.lock"):
        before = sorted(p.relative_to(cache) for p in cache.rglob("*"))
        out = flat(run_cli("clean", "--all", "--dry-run", "--cache-dir", str(cache), cwd=tmp_path).stdout)
        assert sorted(p.relative_to(cache) for p in cache.rglob("*")) == before  # no lock file made anywhere
    assert f"would remove {idle}" in out and f"{busy} is in use by a running tritonbuild" in out


def test_a_removal_cut_short_leaves_a_dir_clean_still_knows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    d = build_dir(cache, "0123456789abcdef")
    (d / MARKER).write_text("tritonbuild build dir\n")
    (d / "plan.json").write_text(json.dumps({"key": d.name}))
    (d / "zzz-last").mkdir()
    real_remove = builddirs.remove_tree

    def stuck(path: Path) -> None:  # what an immutable file or a read-only disk does (as root, nothing else does)
        if path.name == "zzz-last":
            raise OSError(errno.EPERM, "Operation not permitted", str(path / "stuck"))
        real_remove(path)

    monkeypatch.setattr(builddirs, "remove_tree", stuck)
    done = builddirs.remove_build_dirs([d], dry_run=False)
    assert done.failed == [f"{d / 'zzz-last' / 'stuck'}: Operation not permitted"]  # the whole path
    assert builddirs.is_build_dir(d) and not (d / "cmake").exists()
    monkeypatch.setattr(builddirs, "remove_tree", real_remove)
    assert builddirs.remove_build_dirs([d], dry_run=False).removed == [d] and not d.exists()


def test_status_and_clean_name_a_dir_they_cannot_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    (cache / "patched" / "copy").mkdir(parents=True)
    other = build_dir(cache, "0123456789abcdef")
    mine = build_dir(cache, "fedcba9876543210")
    (mine / MARKER).write_text("tritonbuild build dir\n")
    real_iterdir = Path.iterdir

    def iterdir(self: Path):  # type: ignore[no-untyped-def]  # EACCES, which root (who runs CI) never meets
        if self in (cache / "patched", other):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    monkeypatch.setattr(builddirs, "is_build_dir", lambda d: d == mine or (d == other and list(d.iterdir()) == []))
    with pytest.raises(EnvironmentProblem, match=f"Cannot read {cache / 'patched'} .*Permission denied"):
        builddirs.cache_copies(cache)
    done = builddirs.remove_build_dirs([other, mine], dry_run=True)
    assert done.failed == [f"{other}: Permission denied"] and done.removed == [mine]
    copies = builddirs.remove_cache_copies(cache, dry_run=True)
    assert copies.failed == [f"{cache / 'patched'}: Permission denied"]
