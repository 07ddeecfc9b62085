"""One voice: what library code has to say goes to the callback or reporter its caller hands it, never to print;
the command line hands it the reporter's method (a warning from making a plan: stderr's ``warning:`` line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild.cli.options import warn_on_stderr
from tritonbuild.gather import collect, git
from tritonbuild.request import Request
from tritonbuild.settings.model import resolve_settings

URL = "https://example.invalid/triton.git"


def _triton_shaped(root: Path) -> Path:
    (root / "python" / "triton").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("project(triton CXX C)\n")
    return root


def test_an_offline_recipe_source_falls_back_to_the_checkout_said_through_warn_not_printed(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    cwd = _triton_shaped(tmp_path / "tree")
    o = resolve_settings({"offline": True}, {}, {"source": URL}, "recipe r")
    said: list[str] = []
    assert collect.source_root(o, cwd, tmp_path / "cache", said.append) == cwd
    assert said == [f"offline, and the recipe's source {URL} is not in the source cache: building the Triton "
                    f"checkout in the current directory {cwd} instead (pass --source to choose another)."]
    assert capfd.readouterr() == ("", "")


def test_a_source_given_on_the_command_line_offline_is_refused_with_nothing_said(tmp_path: Path) -> None:
    cwd = _triton_shaped(tmp_path / "tree")
    o = resolve_settings({"offline": True, "source": URL}, {})
    said: list[str] = []
    with pytest.raises(git.OfflineMissing):
        collect.source_root(o, cwd, tmp_path / "cache", said.append)
    assert said == []


def test_the_command_line_says_a_plan_warning_on_stderr_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    warn_on_stderr("offline, and so on")
    out, err = capsys.readouterr()
    assert (out, err) == ("", "warning: offline, and so on\n")


def test_a_request_made_without_a_reporter_says_nothing(capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    request = Request({}, {}, tmp_path)
    request.warn("not shown")
    assert capfd.readouterr() == ("", "")
    assert request == Request({}, {}, tmp_path, warn=print)  # the channel is not part of what was asked
