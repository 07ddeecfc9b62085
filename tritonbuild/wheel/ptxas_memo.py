"""ptxas's answers kept for the compile check, keyed by what decides them (stdlib only: the check's child, which
imports nothing of tritonbuild, loads this file beside ``corpus_kernels.py``).

ptxas is not part of what an edit of Triton changes: the same ptxas (by content), the same arguments and the same PTX
give the same cubin and the same log. So the child wraps ``subprocess.run``: a run of a ``ptxas``/``ptxas-blackwell``
executable that reads one ``.ptx`` file and writes ``-o FILE`` is answered from ``TRITONBUILD_PTXAS_MEMO`` (a dir of
the build dir) when its key is there, and kept there after a real run that succeeded. Any other call, or a call with
an argument that names another file, goes through untouched: the memo can only skip work, never change an answer.

An entry is one file ``<key>.entry``: a JSON header line (the sizes of the output, stdout and stderr, the sha256 of
the three) and the bytes. It is read as hostile: no link, this user's regular file writable by no one else, capped,
its sha256 checked; anything else is a miss (and the real run replaces it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TOOLS = ("ptxas", "ptxas-blackwell")
ENTRY_LIMIT = 64 << 20  # bytes: a cubin of the corpus is well under 2 MiB
HEADER_LIMIT = 4096
_digests: dict[str, str] = {}


def _tool_digest(path: str) -> str | None:
    """The sha256 of the executable ``path`` names (its real file), once per process."""
    real = os.path.realpath(path)
    if real not in _digests:
        h = hashlib.sha256()
        try:
            with open(real, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError:
            return None
        _digests[real] = h.hexdigest()
    return _digests[real]


def key_of(argv: Sequence[str]) -> tuple[str, str, str] | None:
    """(key, input, output) for a ptxas run the memo may answer: ``argv[0]`` a ptxas, exactly one existing file
    argument (the ``.ptx``), ``-o OUT`` once and OUT not among the others, no other argument that names a path;
    None for anything else."""
    if not argv or not all(isinstance(a, str) for a in argv) or os.path.basename(argv[0]) not in TOOLS:
        return None
    if argv.count("-o") != 1 or argv.index("-o") + 1 >= len(argv):
        return None
    at = argv.index("-o")
    out, rest = argv[at + 1], [*argv[1:at], *argv[at + 2:]]
    try:
        files = [a for a in rest if Path(a).is_file()]
    except OSError:  # a name too long, a dir not searchable: ptxas judges that argument, not the memo
        return None
    if len(files) != 1 or not files[0].endswith(".ptx") or any("/" in a for a in rest if a != files[0]) \
            or out in rest:
        return None
    tool = _tool_digest(argv[0])
    if tool is None:
        return None
    h = hashlib.sha256(f"{tool}\0{json.dumps(['<ptx>' if a == files[0] else a for a in rest])}\0".encode())
    try:
        with open(files[0], "rb") as f:
            h.update(f.read())
    except OSError:
        return None
    return h.hexdigest(), files[0], out


def read_entry(memo: str, key: str) -> tuple[bytes, bytes, bytes] | None:
    """(output, stdout, stderr) kept under ``key``, or None: no entry, or one that is not this user's regular file
    writable by no one else, too large, malformed or not matching its sha256."""
    try:
        fd = os.open(os.path.join(memo, f"{key}.entry"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022 \
                or st.st_size > ENTRY_LIMIT:
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            head = json.loads(f.readline(HEADER_LIMIT))
            sizes = [head["out"], head["stdout"], head["stderr"]]
            if not all(type(n) is int and 0 <= n <= ENTRY_LIMIT for n in sizes):
                return None
            body = f.read(sum(sizes) + 1)
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    finally:
        os.close(fd)
    if len(body) != sum(sizes) or hashlib.sha256(body).hexdigest() != head.get("sha256"):
        return None
    a, b = sizes[0], sizes[0] + sizes[1]
    return body[:a], body[a:b], body[b:]


def write_entry(memo: str, key: str, out: bytes, stdout: bytes, stderr: bytes) -> None:
    """Keep an answer: written to a temp file of the memo dir and renamed (a reader sees all of it or none)."""
    body = out + stdout + stderr
    if len(body) > ENTRY_LIMIT - HEADER_LIMIT:
        return
    head = json.dumps({"out": len(out), "stdout": len(stdout), "stderr": len(stderr),
                       "sha256": hashlib.sha256(body).hexdigest()})
    try:
        fd, tmp = tempfile.mkstemp(dir=memo, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(head.encode() + b"\n" + body)
        os.replace(tmp, os.path.join(memo, f"{key}.entry"))
    except OSError:
        return


_ALLOWED = {"check", "close_fds", "stdout", "stderr", "timeout"}  # what Triton passes; anything else goes through


def _sink(target: Any, default_fd: int) -> int | None:
    """The file descriptor a stream of the call goes to (None: dropped, DEVNULL); -1: one the memo cannot replay
    (a pipe the caller reads, stderr into stdout)."""
    if target is None:
        return default_fd
    if target is subprocess.DEVNULL:
        return None
    if isinstance(target, int):
        return target if target >= 0 else -1
    try:
        target.flush()
        return int(target.fileno())
    except (AttributeError, OSError, ValueError):
        return -1


def _replay(fd: int | None, data: bytes) -> None:
    view = memoryview(data)
    while fd is not None and view:
        view = view[os.write(fd, view):]


def answer(memo: str, real_run: Any, args: Any, rest: tuple[Any, ...],
           kwargs: dict[str, Any]) -> subprocess.CompletedProcess[bytes] | None:
    """The memo's answer to ``subprocess.run(args, *rest, **kwargs)``, running ptxas on a miss; None: not a call the
    memo answers (the caller runs it as it is)."""
    if rest or not set(kwargs) <= _ALLOWED or not isinstance(args, (list, tuple)):
        return None
    sinks = (_sink(kwargs.get("stdout"), 1), _sink(kwargs.get("stderr"), 2))
    found = key_of(list(args)) if -1 not in sinks else None
    if found is None:
        return None
    key, _src, out = found
    kept = read_entry(memo, key)
    if kept is None:
        done = real_run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, close_fds=kwargs.get("close_fds",
                        True), timeout=kwargs.get("timeout"))
        code, streams = done.returncode, (done.stdout or b"", done.stderr or b"")
        if code == 0:
            try:
                with open(out, "rb") as f:  # one byte over the limit is refused by write_entry
                    write_entry(memo, key, f.read(ENTRY_LIMIT), *streams)
            except OSError:
                pass
    else:
        code, streams = 0, kept[1:]
        try:
            with open(out, "wb") as f:
                f.write(kept[0])
        except OSError:  # no such dir, not writable: ptxas's own run says so (an exit status, its log)
            return None
        with contextlib.suppress(OSError):  # used: the last to go when the memo is pruned
            os.utime(os.path.join(memo, f"{key}.entry"))
    _replay(sinks[0], streams[0])  # (no zip(strict=): the child may run Python 3.9)
    _replay(sinks[1], streams[1])
    if code and kwargs.get("check"):
        raise subprocess.CalledProcessError(code, args)
    return subprocess.CompletedProcess(args, code)


def usable(memo: str) -> bool:
    """Whether ``memo`` may hold answers: a dir (not a link to one) of this user's that no one else may write. The
    one rule, for the build that makes it and the check's child that uses it."""
    try:
        st = os.lstat(memo)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o022


def install(memo: str) -> None:
    """Answer this process's ptxas runs from ``memo`` (``subprocess.run`` wrapped; other calls untouched)."""
    real_run = subprocess.run

    def run(args: Any, *rest: Any, **kwargs: Any) -> Any:
        got = answer(memo, real_run, args, rest, kwargs)
        return got if got is not None else real_run(args, *rest, **kwargs)

    subprocess.run = run


KEEP_BYTES = 256 << 20  # a build dir's memo: the corpus's cubins for a few dozen distinct editions of the PTX


def prune(memo: str, keep: int = KEEP_BYTES) -> None:
    """Keep the most recently used entries up to ``keep`` bytes; drop the rest and any temp file of a dead writer
    (older than an hour). Only this memo's own names are touched; links and other files are left."""
    import time

    entries = []
    with contextlib.suppress(OSError), os.scandir(memo) as it:
        for e in it:
            with contextlib.suppress(OSError):
                st = e.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode):
                    continue
                if e.name.endswith(".entry"):
                    entries.append((st.st_mtime, st.st_size, e.path))
                elif e.name.startswith(".tmp-") and st.st_mtime < time.time() - 3600:
                    Path(e.path).unlink()
    total = 0
    for _mtime, size, path in sorted(entries, reverse=True):
        total += size
        if total > keep:
            with contextlib.suppress(OSError):
                Path(path).unlink()
