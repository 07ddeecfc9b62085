"""More wheels nobody should trust, given to `verify` and `compare` through the real CLI (#35): an import that
never ends or leaves processes behind (detached ones included), more entry points than any Triton wheel has,
and a `_build_info.json` whose fields have the wrong types or numbers JSON does not have. Each is a FAIL row or
one paragraph within a time limit, never a hang, a flood of output or a process that outlives tritonbuild."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import PACKAGE, make_wheel, plan_for
from tests.integration.conftest import flat, one_paragraph, run_cli, subdir, verify
from tritonbuild.resolve.source import GitState
from tritonbuild.wheel.checks.provenance import _parse, loads
from tritonbuild.wheel.provenance import provenance

COMMIT = "0123456789abcdef0123456789abcdef01234567"
NAME = "triton-3.6.0-py3-none-any.whl"


def info_for() -> dict[str, object]:
    return {"backends": [{"name": "nvidia"}], "wheel": {"reproducible": False, "system_libs": []},
            "llvm": {"prefix": None}}


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not: it runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def pids_in(folder: Path, count: int) -> list[int]:
    found = sorted(folder.glob("*.pid"))
    assert len(found) == count, [p.name for p in found]
    return [int(p.read_text()) for p in found]


def gone(pids: list[int], within: float = 5.0) -> bool:
    until = time.monotonic() + within
    while any(alive(p) for p in pids) and time.monotonic() < until:
        time.sleep(0.1)
    return not any(alive(p) for p in pids)


def note_pid(folder: Path, name: str) -> str:
    return f"open({str(folder / (name + '.pid'))!r}, 'w').write(str(os.getpid()))\n"


# --- finding 1: an import that blocks, and processes the import starts ------------------------------------------

@pytest.mark.timeout(180)
def test_an_import_that_never_ends_is_a_failed_row_within_the_limit_and_is_killed(tmp_path: Path) -> None:
    pids = subdir(tmp_path, "pids")
    init = ("import os, time\n" + note_pid(pids, "importer") + "time.sleep(100000)\n").encode()
    wheel = make_wheel(subdir(tmp_path, "w") / NAME, {**PACKAGE, "triton/__init__.py": init}, info=info_for())
    start = time.monotonic()
    proc = verify("--compile", "--compile-timeout", "3", str(wheel), cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 1, out
    # --compile-timeout is per kernel: the import gets as long, but at least a minute (as the compile check gives it)
    assert "FAIL import: fresh venv: the import did not finish in 60 s" in out
    assert "compile:" not in out  # the venv of an import that failed is gone: its code is not run again
    assert time.monotonic() - start < 150
    assert gone(pids_in(pids, 1))


DETACHING = (
    "import os, subprocess, time\n"
    # a child in a session of its own (the reviewer's case: it held verify's output pipe, and outlived it)
    "child = subprocess.Popen(['sleep', '9999'], start_new_session=True)\n"
    "open({sleep!r}, 'w').write(str(child.pid))\n"
    # a daemon the classic way: fork, setsid, fork again, the middle one exits (the daemon is orphaned)
    "middle = os.fork()\n"
    "if middle == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        open({daemon!r}, 'w').write(str(os.getpid()))\n"
    "        time.sleep(9999)\n"
    "    os._exit(0)\n"
    "os.waitpid(middle, 0)\n"
    "while not os.path.exists({daemon!r}):\n"
    "    time.sleep(0.01)\n"
)


@pytest.mark.timeout(180)
def test_processes_the_import_starts_are_stopped_detached_ones_too_and_hold_no_pipe(tmp_path: Path) -> None:
    pids = subdir(tmp_path, "pids")
    init = DETACHING.format(sleep=str(pids / "sleep.pid"), daemon=str(pids / "daemon.pid")).encode()
    wheel = make_wheel(subdir(tmp_path, "w") / NAME, {**PACKAGE, "triton/__init__.py": init}, info=info_for())
    proc = verify(str(wheel), cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 0, out + proc.stderr
    assert "ok import: fresh venv discovers nvidia; stopped 2 processes it left running" in out
    assert gone(pids_in(pids, 2))


@pytest.mark.timeout(180)
def test_a_wheel_that_imports_cleanly_is_ok_with_nothing_stopped(tmp_path: Path) -> None:
    wheel = make_wheel(subdir(tmp_path, "w") / NAME, PACKAGE, info=info_for())
    proc = verify(str(wheel), cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 0, out + proc.stderr
    assert "ok import: fresh venv discovers nvidia skip hidden-llvm" in out
    assert "stopped" not in out


@pytest.mark.timeout(180)
def test_an_import_that_fails_names_its_last_line_and_stops_what_it_started(tmp_path: Path) -> None:
    pids = subdir(tmp_path, "pids")
    init = ("import os, subprocess\n"
            f"open({str(pids / 'x.pid')!r}, 'w').write(str(subprocess.Popen(['sleep', '9999']).pid))\n"
            "raise ImportError('no libtriton here')\n").encode()
    wheel = make_wheel(subdir(tmp_path, "w") / NAME, {**PACKAGE, "triton/__init__.py": init}, info=info_for())
    proc = verify(str(wheel), cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 1, out
    assert ("FAIL import: fresh venv: ImportError: no libtriton here; stopped 1 process it left running" in out)
    assert gone(pids_in(pids, 1))


# --- finding 2: entry points by the hundred thousand -----------------------------------------------------------

def many_entry_points(n: int) -> str:
    return "[triton.backends]\n" + "".join(f"b{i} = triton.backends.b{i}\n" for i in range(n))


@pytest.mark.timeout(120)
def test_more_entry_points_than_the_cap_is_a_malformed_wheel_in_verify_and_compare(tmp_path: Path) -> None:
    good = make_wheel(subdir(tmp_path, "a") / NAME, PACKAGE, info=info_for())
    bad = make_wheel(subdir(tmp_path, "b") / NAME, PACKAGE, info=info_for(), eps=many_entry_points(200_000))
    proc = verify("--no-import", str(bad), cwd=tmp_path)
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) < 15, proc.stdout[:2000]
    assert ("FAIL backends: triton-3.6.0.dist-info/entry_points.txt declares 200000 entry points (at most 1000 "
            "are read" in flat(proc.stdout))
    proc = run_cli("compare", str(good), str(bad), cwd=tmp_path, check=False, timeout=100)
    assert proc.returncode == 1, proc.stdout[:2000]
    assert "Traceback" not in proc.stderr
    text = one_paragraph(proc.stderr)
    assert f"{bad} is a malformed wheel: entry points: triton-3.6.0.dist-info/entry_points.txt declares 200000" in text
    assert len(text) < 600


@pytest.mark.timeout(120)
def test_entry_points_at_the_cap_are_read_and_a_row_names_ten_of_them(tmp_path: Path) -> None:
    wheel = make_wheel(subdir(tmp_path, "w") / NAME, PACKAGE, eps=many_entry_points(1000))
    proc = verify("--no-import", str(wheel), cwd=tmp_path)
    assert proc.returncode == 1
    row = next(line for line in proc.stdout.splitlines() if line.startswith("FAIL backends"))
    assert row == ("FAIL backends: entry points ['b0', 'b1', 'b10', 'b100', 'b101', 'b102', 'b103', 'b104', 'b105', "
                   "'b106', and 990 more], backend dirs ['nvidia'] differ"), row


# --- finding 3: _build_info.json with the wrong types, NaN and infinities --------------------------------------

def info_with(**changes: object) -> dict[str, object]:
    info = {**info_for(), "source": {"commit": COMMIT, "dirty": False, "patches": []}}
    backend: dict[str, object] = {"name": "nvidia", "origin": "in-tree", "path": "<source>/x", "commit": None,
                                  "dirty": None}
    for key, value in changes.items():
        where, _, field = key.partition("__")
        if where == "backend":
            backend[field] = value
        else:
            info[where] = {**info[where], field: value}  # type: ignore[dict-item]
    return {**info, "backends": [backend]}


WRONG = [
    (info_with(backend__commit=123), "'backends[0].commit' is 123, not a string or null"),
    (info_with(backend__dirty="yes"), "'backends[0].dirty' is \"yes\", not true or false or null"),
    (info_with(source__dirty=1), "'source.dirty' is 1, not true or false or null"),
    (info_with(wheel__name=["triton"]), "'wheel.name' is [\"triton\"], not a string or null"),
    (info_with(llvm__version={"major": 22}), "'llvm.version' is {\"major\": 22}, not a string or null"),
    (b'{"backends": [{"name": "nvidia"}], "llvm": {"prefix": null}, "x": NaN}', "is not JSON (NaN is not a JSON"),
    (b'{"backends": [{"name": "nvidia"}], "x": -Infinity}', "is not JSON (-Infinity is not a JSON number"),
    (b'{"backends": [{"name": "nvidia"}], "x": 1e999999}', "is not JSON (1e999999 is too big for a number"),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("info", "expected"), WRONG, ids=["commit-int", "dirty-str", "source-dirty-int", "name-list",
                                                           "version-object", "nan", "infinity", "1e999999"])
def test_wrong_typed_or_non_finite_build_info_is_malformed_in_verify_and_compare(tmp_path: Path, info: object,
                                                                                  expected: str) -> None:
    good = make_wheel(subdir(tmp_path, "a") / NAME, PACKAGE, info=info_for())
    bad = make_wheel(subdir(tmp_path, "b") / NAME, PACKAGE, info=info if isinstance(info, bytes)
                     else json.dumps(info).encode())
    proc = verify("--no-import", str(bad), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert f"FAIL provenance: triton/_build_info.json{':' if 'JSON' not in expected else ''} {expected}" in \
        flat(proc.stdout)
    proc = run_cli("compare", str(good), str(bad), cwd=tmp_path, check=False, timeout=100)
    assert proc.returncode == 1, proc.stdout
    assert "Traceback" not in proc.stderr
    assert f"{bad} is a malformed wheel: provenance: triton/_build_info.json" in one_paragraph(proc.stderr)


@pytest.mark.timeout(120)
def test_right_typed_build_info_with_every_field_passes(tmp_path: Path) -> None:
    wheel = make_wheel(subdir(tmp_path, "w") / NAME, PACKAGE, info=info_with(backend__commit=COMMIT,
                                                                              backend__dirty=True))
    proc = verify("--no-import", str(wheel), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "provenance:" not in proc.stdout  # well-formed build info has no row of its own


@pytest.mark.parametrize("cli", [{}, {"reproducible": True}], ids=["plain", "reproducible"])
def test_the_provenance_tritonbuild_writes_is_well_formed(tree, cli: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
    plan = plan_for(tree(), cli=cli, git=GitState(COMMIT, False, "main", 1769723034))
    written = json.dumps(provenance(plan), indent=2)
    parsed = _parse(loads(written))
    assert not isinstance(parsed, str), parsed
    assert parsed.backends == tuple(sorted(b.name for b in plan.backends))


@pytest.mark.timeout(180)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_what_the_import_started_dies_with_tritonbuild_even_of_kill_9(tmp_path: Path, sig: int) -> None:
    pids = subdir(tmp_path, "pids")
    init = ("import os, subprocess, time\n" + note_pid(pids, "importer")
            + f"child = subprocess.Popen(['sleep', '9999'], start_new_session=True)\n"
            f"open({str(pids / 'sleep.pid')!r}, 'w').write(str(child.pid))\n"
            "time.sleep(100000)\n").encode()
    wheel = make_wheel(subdir(tmp_path, "w") / NAME, {**PACKAGE, "triton/__init__.py": init}, info=info_for())
    env = {**os.environ, "NO_COLOR": "1"}
    with subprocess.Popen([sys.executable, "-m", "tritonbuild", "verify", str(wheel)], cwd=tmp_path, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as tb:
        until = time.monotonic() + 120
        while len(list(pids.glob("*.pid"))) < 2 and time.monotonic() < until and tb.poll() is None:
            time.sleep(0.1)
        started = pids_in(pids, 2)
        assert all(alive(p) for p in started)
        tb.send_signal(sig)
        tb.wait(timeout=60)
    assert gone(started, within=15)
