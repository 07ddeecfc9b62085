"""gather.git.git_state: a plain directory runs no git (a minimal --container image has none; this conftest also
fails any subprocess) (#46)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild.gather.git import git_state


def test_a_plain_directory_is_no_checkout_without_git_installed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "src"))  # no git on PATH, as in a minimal image
    assert git_state(tmp_path / "src") is None
