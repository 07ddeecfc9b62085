"""gather.git.git_state on real checkouts: a directory inside one is none, a checkout gives its commit and
needs git (a plain directory needs none: tests/unit/test_git_state.py) (#46)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.gather.git import git_state


def _commit(repo: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    (repo / "f").write_text("x")
    git("add", "f")
    git("commit", "-q", "-m", "one")
    return git("rev-parse", "HEAD")


def test_a_directory_inside_a_checkout_is_no_checkout(tmp_path: Path) -> None:
    _commit(tmp_path)
    (tmp_path / "sub").mkdir()
    assert git_state(tmp_path / "sub") is None


def test_a_checkout_gives_its_commit_and_needs_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    commit = _commit(repo)
    state = git_state(repo)
    assert state is not None and state.commit == commit and not state.dirty
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # a checkout's commit is never dropped silently: no git,
    # no build
    with pytest.raises(UserError, match="git: not found"):
        git_state(repo)
