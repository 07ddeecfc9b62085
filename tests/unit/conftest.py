from __future__ import annotations

import subprocess

import pytest


@pytest.fixture(autouse=True)
def _no_subprocesses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unit tests cover pure logic: any subprocess is a bug in the test or a side effect in pure code."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"unit tests must not run subprocesses: {args[:1]}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
