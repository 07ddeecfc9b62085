"""Hostile wheels and trees through the real CLI (#35, #36): `verify` runs no code of a wheel that failed its RECORD
check, and names from a wheel or a source tree never reach the terminal with their control characters."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

from tests.helpers import DIST, digest, make_wheel
from tritonbuild import example

from .conftest import LLVM, flat, run_cli

NAME = "triton-3.6.0-py3-none-any.whl"
# enough of Triton that `import triton; from triton.backends import backends` works in a fresh venv
PACKAGE = {"triton/__init__.py": b"", "triton/backends/nvidia/__init__.py": b"",
           "triton/backends/__init__.py": b"from importlib.metadata import entry_points\n"
           b"backends = {ep.name: ep.value for ep in entry_points(group='triton.backends')}\n"}
ESC_NAME = "triton/\x1b[2J\x1b]0;pwned\x07x.py"  # clears the screen and retitles the terminal when printed raw
FORGED = "python/src/a\x1b[31m\nnewest passing: FAKE.cc"  # a file name that forges a line of the output


def info_for() -> dict[str, object]:
    return {"backends": [{"name": "nvidia"}], "wheel": {"reproducible": False, "system_libs": []},
            "llvm": {"prefix": None}}


def verify(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = run_cli("verify", *args, cwd=cwd, check=False)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def marker_package(marker: Path) -> dict[str, bytes]:
    return {**PACKAGE, "triton/__init__.py": f"open({str(marker)!r}, 'w').close()\n".encode()}


def record_of(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(f"{DIST}/RECORD").decode()


def test_verify_runs_no_code_of_a_wheel_whose_record_it_failed(tmp_path: Path) -> None:
    """The honest wheel's __init__ runs at the import check (the marker appears); the same code under a RECORD
    that vouches for the original __init__ is FAIL RECORD and the import is skipped: no marker."""
    honest_marker, tampered_marker = tmp_path / "honest-ran", tmp_path / "tampered-ran"
    (tmp_path / "honest").mkdir()
    honest = make_wheel(tmp_path / "honest" / NAME, marker_package(honest_marker), info=info_for())
    proc = verify(str(honest), cwd=tmp_path)
    assert "ok import" in flat(proc.stdout) and honest_marker.exists(), proc.stdout

    (tmp_path / "original").mkdir()
    record = record_of(make_wheel(tmp_path / "original" / NAME, PACKAGE, info=info_for()))  # __init__.py empty
    wheel = make_wheel(tmp_path / NAME, marker_package(tampered_marker), info=info_for(), record=record)
    proc = verify(str(wheel), "--compile", cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 1, out
    assert "FAIL RECORD: triton/__init__.py does not match its RECORD hash" in out, out
    assert "skip import: not run: the wheel failed RECORD" in out, out
    assert "skip compile: not run: the wheel failed RECORD" in out, out
    assert "ok import" not in out and not tampered_marker.exists()


def test_a_record_path_with_escapes_is_printed_escaped(tmp_path: Path) -> None:
    members = {**PACKAGE, "triton/_build_info.json": json.dumps(info_for()).encode()}
    rows = [f"{n},{digest(d)},{len(d)}" for n, d in members.items()] + [f"{ESC_NAME},{digest(b'')},0"]
    record = "\n".join([*rows, f"{DIST}/RECORD,,"]) + "\n"
    proc = verify("--no-import", str(make_wheel(tmp_path / NAME, PACKAGE, info=info_for(), record=record)),
                  cwd=tmp_path)
    assert proc.returncode == 1 and "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
    assert (r"names 'triton/\x1b[2J\x1b]0;pwned\x07x.py': it holds a control character" in flat(proc.stdout)), \
        proc.stdout


def test_a_member_named_with_an_escape_fails_the_wheel(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / NAME, {**PACKAGE, "triton/\x1b[31mred.py": b""}, info=info_for())
    proc = verify("--no-import", str(wheel), cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 1 and "\x1b" not in proc.stdout + proc.stderr, out
    assert r"FAIL wheel: not a readable wheel: member 'triton/\x1b[31mred.py' is unsafe: it holds a control " \
        "character" in out, out


def test_a_file_name_of_the_tree_cannot_forge_a_line_of_the_plan(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    (tree / FORGED).write_text(f'#include "{example.OLD_PASS_PLUGIN}"\n')
    cache = tmp_path / "cache"
    cache.mkdir()
    proc = run_cli("plan", "--source", str(tree), "--llvm", str(LLVM), "--cache-dir", str(cache), "--offline",
                   cwd=tmp_path, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Traceback" not in text and "\x1b" not in text, text
    assert not any(line.lstrip().startswith("newest passing") for line in text.splitlines()), text
    assert r"'python/src/a\x1b[31m\nnewest passing: FAKE.cc':1 includes" in flat(text), text
