"""The probes' memos (#45): a second `plan` of the same request runs only the git that must run (the config read,
rev-parse and status: an edited tracked file is still dirty), and a changed file (llvm-config touched, a library
added to its prefix, an interpreter replaced, a package added where it imports from) runs its probe again."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import LLVM, cuda_stub, git_commit
from tritonbuild.cli.main import main
from tritonbuild.gather import pythons
from tritonbuild.gather.git import git_state
from tritonbuild.llvm.probe import probe
from tritonbuild.system import probememo

MOST = 3  # the git a warm plan still runs: config read, rev-parse, status (the checkout's state is never remembered)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """The argv of every process tritonbuild starts (all through ``subprocess.Popen``), as they start."""
    seen: list[list[str]] = []

    class Counted(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: list[str], *a: object, **kw: object) -> None:
            seen.append([str(x) for x in args])
            super().__init__(args, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess, "Popen", Counted)
    yield seen


def _plan(tree: Path, cache: Path) -> str:
    pythons._probe.cache_clear()  # as a new process: nothing remembered in memory
    cache.mkdir(exist_ok=True)  # memos are kept only in a cache root that exists (a first plan writes nothing)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), pytest.raises(SystemExit) as exc:
        main(["plan", "--source", str(tree), "--llvm", str(LLVM), "--offline", "--cache-dir", str(cache),
              "--python", sys.executable])
    assert exc.value.code in (0, None), out.getvalue()
    return out.getvalue()


def test_a_second_plan_runs_only_the_checkouts_git(tree, tmp_path: Path, started: list[list[str]],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_HOME", cuda_stub())
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # `-c` imports from it: the cache dir made in it would be a change
    root = tree()
    git_commit(root)
    first = _plan(root, tmp_path / "cache")
    cold = [a[1:] for a in started]
    assert any("--version" in a for a in cold) and any("-c" in a for a in cold)  # the probes ran once
    started.clear()
    assert _plan(root, tmp_path / "cache") == first
    assert len(started) <= MOST, started
    assert all(Path(a[0]).name == "git" for a in started), started


def test_a_touched_llvm_config_or_a_new_library_runs_it_again(tmp_path: Path) -> None:
    prefix, runs = tmp_path / "llvm", tmp_path / "runs"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    tool = prefix / "bin" / "llvm-config"
    tool.write_text(f'#!/bin/sh\necho "$1" >> {runs}\ncase "$1" in --version) echo 22.1.8;; *) echo "NVPTX X86";; '
                    "esac\n")
    tool.chmod(0o755)

    def count() -> int:
        return len(runs.read_text().splitlines()) if runs.exists() else 0

    (tmp_path / "cache").mkdir(exist_ok=True)
    with probememo.kept_in(tmp_path / "cache"):
        assert probe(prefix).version == "22.1.8" and count() == 2
        assert probe(prefix).targets_built == ("NVPTX", "X86") and count() == 2  # remembered
        tool.touch()
        assert probe(prefix).version == "22.1.8" and count() == 4
        (prefix / "lib" / "libLLVM.so.22").write_bytes(b"")
        assert probe(prefix).runs and count() == 6
        assert probe(prefix).runs and count() == 6
    assert probe(prefix).runs and count() == 8  # outside a plan nothing is remembered


def test_a_replaced_interpreter_or_a_new_package_runs_the_probe_again(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # `-c` imports from the directory it runs in
    runs, fake = tmp_path / "runs", tmp_path / "python"
    fake.write_text(f'#!/bin/sh\necho run >> {runs}\nexec {sys.executable} "$@"\n')
    fake.chmod(0o755)

    def probed() -> int:
        pythons._probe.cache_clear()
        assert pythons.probe(str(fake), require_headers=False).version == ".".join(map(str, sys.version_info[:3]))
        return len(runs.read_text().splitlines())

    (tmp_path / "cache").mkdir(exist_ok=True)
    with probememo.kept_in(tmp_path / "cache"):
        assert probed() == 1
        assert probed() == 1
        fake.write_text(fake.read_text() + "\n")  # another interpreter in its place
        assert probed() == 2
        (tmp_path / "cwd" / "pybind11").mkdir()  # a package where it imports from: it may now find pybind11
        assert probed() == 3
        assert probed() == 3


def test_a_commit_is_remembered_and_an_edit_is_still_dirty(tmp_path: Path, started: list[list[str]]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "f").write_text("x")
    commit = git_commit(repo)
    (tmp_path / "cache").mkdir(exist_ok=True)
    with probememo.kept_in(tmp_path / "cache"):
        first = git_state(repo)
        started.clear()
        assert git_state(repo) == first and first is not None and first.commit == commit and not first.dirty
        assert [a[4] for a in started] == ["config", "rev-parse", "status"]  # no show, no ls-tree
        (repo / "f").write_text("y")
        assert git_state(repo).dirty  # type: ignore[union-attr]
        (repo / ".git" / "refs" / "replace").mkdir()  # the same hash may now read as another commit
        started.clear()
        git_state(repo)
        assert [a[4] for a in started] == ["config", "rev-parse", "status", "show", "ls-tree"]
