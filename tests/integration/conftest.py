from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import json_out, one_of

LLVM = Path("/usr/lib/llvm-22")


def pytest_configure(config: pytest.Config) -> None:
    missing = [p for p in (LLVM / "bin/llvm-config", LLVM / "lib/cmake/mlir/MLIRConfig.cmake") if not p.exists()]
    if missing and not os.environ.get("TRITONBUILD_SKIP_LLVM_CHECK"):
        raise pytest.UsageError(
            f"integration tests build against Debian's LLVM 22 but {missing[0]} is missing: run .ci/run's apt "
            "step (llvm-22-dev libmlir-22-dev mlir-22-tools liblld-22-dev) or run only tests/unit"
        )


@functools.cache
def cuda_stub() -> str:
    """A CUDA toolkit's shape, so tests do not depend on whether this machine has /usr/local/cuda."""
    from tritonbuild import example

    return str(example.write_cuda_stub(Path(tempfile.mkdtemp(prefix="tritonbuild-cuda-"))))


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, check: bool = True,
            timeout: float = 900) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "CUDA_HOME": cuda_stub(), **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "tritonbuild", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"tritonbuild {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    if "--json" in (args[:args.index("--")] if "--" in args else args) and proc.stdout.strip():
        json_out(proc.stdout, proc.returncode)  # every --json a test runs is held to its shipped schema
    return proc


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path`` (root only; the test is skipped with the reason otherwise)."""
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                           capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root): the disk-full path is untested on this machine")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def flat(text: str) -> str:
    """Console text with rich's line wrapping undone (wrap points depend on path lengths)."""
    return " ".join(text.split())


def git_commit(root: Path, message: str = "fixture", env: dict[str, str] | None = None,
               init: bool = True) -> str:
    """Commit everything under ``root`` (a new repository unless ``init`` is false); return the commit."""
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    full_env = {**os.environ, **(env or {})}
    for argv in ([["init", "-q", "-b", "main"]] if init else []) + [["add", "-A"], ["commit", "-qm", message]]:
        subprocess.run([*git, *argv], cwd=root, env=full_env, check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


def plan_json(*args: str, cwd: Path, env: dict[str, str] | None = None) -> dict:
    """The one plan ``plan --json ARGS`` prints (``plans[0]``; a test of several --python reads ``plans`` itself)."""
    return one_of(run_cli("plan", "--json", *args, cwd=cwd, env=env).stdout, "plans")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def daemon(argv: list[str], port: int, *, cwd: Path | None = None, env: dict[str, str] | None = None,
           log: Path | None = None) -> Iterator[int]:
    """Run a server on 127.0.0.1:``port`` for the block: started, waited for until it accepts, then stopped.
    Its stderr goes to ``log`` when given (opened here, so a daemon that drops privileges can still write it)."""
    err = log.open("ab") if log else subprocess.DEVNULL
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{argv[0]} did not start listening on port {port}")
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log:
            err.close()  # type: ignore[union-attr]


@contextlib.contextmanager
def redis_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    argv = [shutil.which("redis-server") or "redis-server", "--port", str(port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", str(tmp_path)]
    with daemon(argv, port):
        yield f"redis://127.0.0.1:{port}"


def verify(*args: str, cwd: Path, env: dict[str, str] | None = None,
           timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``tritonbuild verify ARGS`` (its exit code is the caller's to check); never a traceback."""
    proc = run_cli("verify", *args, cwd=cwd, env=env, check=False, timeout=timeout)
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    return proc


def subdir(root: Path, name: str) -> Path:
    (root / name).mkdir()
    return root / name


def one_paragraph(text: str) -> str:
    assert text.strip() and "\n\n" not in text.strip(), text
    return flat(text)


def snapshot(tree: Path) -> tuple[dict[str, tuple[int, bytes]], str]:
    """Every file of the checkout but .git (mtime, bytes), and git status: what a run must leave as it was."""
    files = {p.relative_to(tree).as_posix(): (p.lstat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
             for p in tree.rglob("*") if ".git" not in p.relative_to(tree).parts}
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=tree, capture_output=True, text=True,
                            check=True).stdout
    return files, status


def offline_plan(tree: Path, tmp_path: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    """``plan`` of ``tree`` on Debian's LLVM 22, offline, with a cache under ``tmp_path``."""
    return run_cli("plan", "--source", str(tree), "--llvm", str(LLVM), "--cache-dir", str(tmp_path / "cache"),
                   "--offline", *args, cwd=tmp_path, check=check)


def refused(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    """Exit 2, one paragraph, no traceback, each of ``words`` in it; returns the paragraph."""
    err = flat(proc.stderr)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n\n") == 0, proc.stderr
    for word in words:
        assert word in err, err
    return err
