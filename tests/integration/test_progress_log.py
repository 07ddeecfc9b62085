"""A piped build shows progress: ninja's counts reach the log as plain lines at most every LOG_INTERVAL seconds,
through the console the CLI uses when stdout is not a terminal, with no control character (no bar)."""

from __future__ import annotations

import io
import shlex
import sys
from pathlib import Path

import pytest

from tritonbuild import reporter
from tritonbuild.report.render import console
from tritonbuild.system import proc
from tritonbuild.system.progress import Tracker

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


def test_v_shows_the_command_vv_its_output_and_q_nothing_but_the_log_has_it_all(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """-q drops the progress lines, -v adds the command line, -vv every line the command printed; the log is the
    same whatever the verbosity."""
    shown, logs = {}, {}
    for verbosity in (-1, 0, 1, 2):
        log = io.StringIO()
        assert proc.run_logged([sys.executable, "-c", NINJA_LIKE], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                               log=log, tracker=Tracker(), reporter=console(verbosity=verbosity), label="compile") == 0
        shown[verbosity], logs[verbosity] = capsys.readouterr().out.splitlines(), log.getvalue()
    assert shown[-1] == [] and len(set(logs.values())) == 1
    assert not any(line.startswith("$ ") for line in shown[0])
    assert any(line.startswith(f"$ cd {shlex.quote(str(tmp_path))} && {shlex.quote(sys.executable)} -c ")
               for line in shown[1])
    assert "[5/12] Building CXX object u5.o" not in shown[1] and "[5/12] Building CXX object u5.o" in shown[2]


def test_q_and_qq_never_silence_the_error_of_a_refused_build(tmp_path: Path) -> None:
    from tests.integration.conftest import run_cli

    missing = tmp_path / "no-such-tree"
    for flags in (["-q"], ["-qq"], ["-v", "-q", "-q"]):
        res = run_cli("build", *flags, "--source", str(missing), "--no-smoke-test", cwd=tmp_path, check=False)
        assert res.returncode == 2 and res.stdout == "", (flags, res.stdout)
        assert "error:" in res.stderr and "no-such-tree" in res.stderr
    res = run_cli("build", "-qq", "--json", "--source", str(missing), cwd=tmp_path, check=False)
    assert res.returncode == 2 and '"error"' in res.stdout  # --json's envelope whatever the verbosity
