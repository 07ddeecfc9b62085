"""The small findings of the hostile round 2 (#44), each through the real CLI: plugin dirs checked before any walk,
names with control characters, printed paths, a closed stdout, non-ASCII digits, SHA256SUMS, a full disk."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.integration.conftest import flat, run_cli, small_tmpfs

LLVM = "/usr/lib/llvm-22"


def plan(root: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return run_cli("plan", "--source", str(root), "--llvm", LLVM, "--offline", "--cache-dir", str(tmp_path / "cache"),
                   *args, cwd=tmp_path, env=env, check=False)


def refused(proc, fragment: str) -> str:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: "), proc.stderr
    text = flat(proc.stderr)
    assert fragment in text, text
    return text


@pytest.mark.parametrize(("args", "env", "named"), [
    (("--plugin-dir", "/"), None, "/"),
    ((), {"TRITON_PLUGIN_DIRS": "/etc;/"}, "/etc"),
    (("--plugin-dir", "/usr"), None, "/usr"),
])
def test_a_plugin_dir_without_a_backend_is_refused_before_any_walk(tree, tmp_path: Path, args: tuple[str, ...],
                                                                    env: dict[str, str] | None, named: str) -> None:
    root = tree()
    plan(root, tmp_path)  # the interpreter and the tree warm, so the time below is the plugin dir's
    start = time.monotonic()
    proc = plan(root, tmp_path, *args, env=env)
    took = time.monotonic() - start
    refused(proc, f"The plugin directory {named} (from ")
    assert "has no backend/ directory" in proc.stderr
    assert took < 5, took  # < 1 s unloaded: nothing walks / or /usr (the walk of /usr alone took 10 s)


def test_a_plugin_whose_tree_is_a_whole_disk_is_refused_with_a_cap(tree, plugin, tmp_path: Path) -> None:
    """A plugin dir that is one (backend/ holds compiler.py and driver.py) but whose tree is huge is walked only
    up to the cap, then refused in one paragraph."""
    root, p = tree(), plugin("huge")
    deep = p / "data"
    deep.mkdir()
    for _ in range(70):  # deeper than the walk goes
        deep = deep / "d"
        deep.mkdir()
    text = refused(plan(root, tmp_path, "--plugin-dir", str(p)), f"The plugin {p} holds more than")
    assert "levels of them" in text


def test_a_mount_inside_a_plugin_is_not_walked(tree, plugin, tmp_path: Path) -> None:
    """Another file system under a plugin dir (a tmpfs here) is left out of every walk: its CMake files are not
    read, so a FetchContent it declares is not in the plan."""
    root, p = tree(), plugin("mounted")
    with small_tmpfs(p / "elsewhere", "1m") as mnt:
        (mnt / "CMakeLists.txt").write_text('include(FetchContent)\nFetchContent_Declare(planted GIT_REPOSITORY '
                                            'https://example.com/x.git GIT_TAG v1)\n')
        with (p / "CMakeLists.txt").open("a") as f:
            f.write("\nadd_subdirectory(elsewhere)\n")
        proc = plan(root, tmp_path, "--plugin-dir", str(p), "--json")
        assert proc.returncode == 0, proc.stderr
        assert "planted" not in proc.stdout
    assert os.path.isdir(p)


@pytest.mark.parametrize("args", [
    ("llvm", "compat", "--range", "HEAD\n..HEAD"),
    ("llvm", "compat", "--range", "HEAD~1..HEAD\n"),
    ("plan", "--ref", "main\x9b", "--source", "https://example.com/x.git", "--offline"),
])
def test_a_name_with_a_control_character_never_reaches_git(tree, tmp_path: Path, args: tuple[str, ...]) -> None:
    root = tree()
    proc = run_cli(*args, "--source", str(root), "--cache-dir", str(tmp_path / "c"), cwd=tmp_path, check=False) \
        if args[0] == "llvm" else run_cli(*args, "--cache-dir", str(tmp_path / "c"), cwd=tmp_path, check=False)
    refused(proc, "")
    assert "\\n" in proc.stderr or "\\x9b" in proc.stderr, proc.stderr
    assert not (tmp_path / "c").exists()


def test_a_checkout_path_with_a_newline_prints_no_forged_line(tmp_path: Path) -> None:
    """Every path a report prints goes through ``printable``: the newline of a checkout's path is shown as
    ``\\n``, never as the start of a line the path's owner wrote (plan, backends, llvm status)."""
    from tritonbuild import example

    root = example.write_tree(tmp_path / "x\nFORGED: all good" / "triton")
    for args in (("plan", "--offline", "--llvm", LLVM), ("plan", "--offline"), ("backends", "--check"),
                 ("llvm", "status", "--offline")):
        proc = run_cli(*args, "--cache-dir", str(tmp_path / "cache"), cwd=root, check=False)
        assert proc.returncode in (0, 1), (args, proc.stdout, proc.stderr)
        lines = (proc.stdout + proc.stderr).splitlines()
        assert not [line for line in lines if line.startswith("FORGED")], (args, proc.stdout, proc.stderr)
        assert "x\\nFORGED: all good" in proc.stdout, (args, proc.stdout)


@pytest.mark.parametrize("args", [("plan",), ("plan", "--json"), ("plan", "--help"), ("--version",)])
def test_a_closed_stdout_exits_quietly_with_141(tree, tmp_path: Path, args: tuple[str, ...]) -> None:
    """``tritonbuild plan | head -1``: the reader closes the pipe before tritonbuild writes (here at once). The
    exit is 141, as for a program SIGPIPE stops, never 1 ("the build failed"), and stderr is empty: no traceback,
    no "Exception ignored" from the interpreter's last flush."""
    import subprocess
    import sys

    from tests.integration.conftest import cuda_stub

    root = tree()
    env = {**os.environ, "NO_COLOR": "1", "CUDA_HOME": cuda_stub()}
    argv = [sys.executable, "-m", "tritonbuild", *args]
    if args[0] == "plan" and "--help" not in args:
        argv += ["--source", str(root), "--llvm", LLVM, "--offline", "--cache-dir", str(tmp_path / "cache")]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        proc = subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, cwd=tmp_path, env=env, timeout=300,
                              check=False)
    finally:
        os.close(write)
    assert proc.returncode == 141, (proc.returncode, proc.stderr)
    assert proc.stderr == b"", proc.stderr


@pytest.mark.parametrize("json_out", [False, True])
def test_a_full_disk_under_stdout_is_exit_3_in_one_paragraph(tree, tmp_path: Path, json_out: bool) -> None:
    """``tritonbuild plan > /dev/full``: a write to stdout that the disk refuses was a traceback, exit 1 (#44,
    review); it is the host's problem, said in one paragraph, exit 3, and nothing more at the interpreter's exit."""
    import subprocess
    import sys

    from tests.integration.conftest import cuda_stub

    root = tree()
    env = {**os.environ, "NO_COLOR": "1", "CUDA_HOME": cuda_stub()}
    argv = [sys.executable, "-m", "tritonbuild", "plan", "--source", str(root), "--llvm", LLVM, "--offline",
            "--cache-dir", str(tmp_path / "cache"), *(["--json"] if json_out else [])]
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, cwd=tmp_path, env=env, timeout=300,
                              check=False)
    err = proc.stderr.decode()
    assert proc.returncode == 3, (proc.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err and "No space left on device" in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1, err


def test_a_run_started_with_stdout_closed_is_no_traceback(tmp_path: Path) -> None:
    """``tritonbuild doctor >&-``: Python starts with sys.stdout None, and the first word was an AttributeError
    (review); what it says goes nowhere, as the shell's closed descriptor means."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tritonbuild", "recipes", "list"], stderr=subprocess.PIPE,
                          cwd=tmp_path, timeout=120, check=False, preexec_fn=lambda: os.close(1))
    assert b"Traceback" not in proc.stderr and proc.returncode == 0, proc.stderr


def test_a_fullwidth_job_count_is_refused_by_plan(tree, tmp_path: Path) -> None:
    root = tree()
    refused(plan(root, tmp_path, env={"MAX_JOBS": "\uff14"}), "MAX_JOBS='\uff14' is not a whole number")
    proc = plan(root, tmp_path, "-j", "\u0663")  # ARABIC-INDIC DIGIT THREE
    assert proc.returncode == 2 and "ASCII digits" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
