"""A piped build shows progress: ninja's counts reach the log as plain lines at most every LOG_INTERVAL seconds,
through the console the CLI uses when stdout is not a terminal, with no control character (no bar)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tritonbuild import proc, reporter
from tritonbuild.progress import Tracker
from tritonbuild.report.render import console

NINJA_LIKE = "import time\nfor i in range(1, 13):\n    print(f'[{i}/12] Building CXX object u{i}.o', flush=True)\n" \
             "    time.sleep(0.05)\n"


def test_a_piped_compile_prints_its_progress_as_plain_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(reporter, "LOG_INTERVAL", 0.2)
    out = console()  # stdout is captured: not a terminal, as in a CI log
    assert not out.is_terminal
    log = io.StringIO()
    rc = proc.run_logged([sys.executable, "-c", NINJA_LIKE], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, log=log,
                         tracker=Tracker(), reporter=out, label="compile")
    assert rc == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("compile ")]
    assert 2 <= len(lines) <= 6, lines
    assert lines[-1].startswith("compile 12/12, ") and lines[-1].endswith(" in all")
    assert all(line.isprintable() and "/12, 0:0" in line for line in lines)
