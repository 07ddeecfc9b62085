"""What probe programs answered (``llvm-config``, ``ptxas --version``, an interpreter, git's facts of a commit,
which package installed a file, the compiler's ``--version``), remembered in the cache dir so a second ``plan`` (or
a no-op build, or a rebuild's SBOM) runs none of them (edge: reads and writes one small JSON file per kind of probe
under ``<cache>/probes``).

Each answer is kept under a key of the stat of the files that decide it (real path, device, inode, size, mtime and
ctime: a file replaced, rewritten or touched changes it), taken before the program runs, so a change made while it
runs shows up next time. A memo file is the cache dir's content and read as hostile: a link, a file of more than
``MAX_BYTES``, one that is no JSON of this shape, or an entry whose answer the caller's check refuses is not used
(the program runs and the file is written again); nothing in it is ever an error. Memos are kept only while
``keep_in`` names a cache dir (the plan's); without one every probe runs. ``per_file`` is the same for what a
parse of each of many files gave (their includes, the names their Python reads), kept by path, size and mtime.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from tritonbuild.system import proc
from tritonbuild.system.fileutil import plain_file_problem, read_owned_json, replace_with, write_if_changed

MAX_BYTES = 64 << 10  # a memo file larger than this is not read (a real one is a few hundred bytes an entry)
MAX_ENTRIES = 16  # answers kept per kind (LLVM prefixes, interpreters, commits), the newest last
VERSION = 1
MAX_PER_FILE_BYTES = 64 << 20  # of a per_file memo (a real tree's includes: a few MiB)
KINDS = ("llvm-config", "mlir-tblgen", "llvm-prefix", "ptxas", "python", "git-commit", "dpkg", "compiler")

T = TypeVar("T")
_dir: list[Path] = []  # the cache dir's probes/ while a plan is made


@contextlib.contextmanager
def kept_in(cache_root: Path | None) -> Iterator[None]:
    """Within: memos are kept in ``cache_root``'s ``probes/`` (None: none, every probe runs); after: as before."""
    old = _dir[:]
    _dir[:] = [cache_root / "probes"] if cache_root is not None else []
    try:
        yield
    finally:
        _dir[:] = old


def file_key(path: str | Path) -> list[Any]:
    """What identifies the file at ``path`` as it is now: its real path and the stat of it (links followed);
    ``[real path, None]`` when it cannot be stat'ed (absent: a later one is a change)."""
    real = os.path.realpath(path)
    try:
        st = Path(real).stat()
    except OSError:
        return [real, None]
    return [real, [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode]]


def files_key(paths: Iterable[str | Path]) -> list[Any]:
    return [file_key(p) for p in paths]


def _memo_file(kind: str) -> Path | None:
    if kind not in KINDS:
        raise ValueError(f"unknown probe kind {kind!r}")
    return _dir[0] / f"{kind}.json" if _dir else None


def _entries(path: Path) -> list[dict[str, Any]]:
    """The well-formed entries of the memo file at ``path``; [] for anything else (absent, a link, a fifo, too
    large, no JSON, another shape)."""
    data = read_owned_json(path, MAX_BYTES, plain_file_problem)
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("entries"), list):
        return []
    found = data["entries"][-MAX_ENTRIES:]
    return [e for e in found if isinstance(e, dict) and set(e) == {"key", "value"}]


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples are lists), for comparing a key with a stored one."""
    return json.loads(json.dumps(value))


def recall(kind: str, key: Mapping[str, Any], valid: Callable[[Any], bool]) -> Any | None:
    """The answer remembered for ``key``, when there is one and ``valid`` (the caller's check of its shape) takes
    it; None otherwise (run the probe)."""
    path = _memo_file(kind)
    if path is None:
        return None
    wanted = _plain(dict(key))
    for entry in reversed(_entries(path)):
        if entry["key"] == wanted:
            with contextlib.suppress(Exception):  # a hostile value a check trips over is no answer, never an error
                if valid(entry["value"]):
                    return entry["value"]
            return None
    return None


def remember(kind: str, key: Mapping[str, Any], value: Any) -> None:
    """Keep ``value`` as the answer for ``key`` (replacing the key's old one; the oldest entries dropped past
    ``MAX_ENTRIES`` or ``MAX_BYTES``), written atomically; a cache dir that cannot be written keeps nothing."""
    path = _memo_file(kind)
    if path is None:
        return
    new = {"key": _plain(dict(key)), "value": _plain(value)}
    kept = [e for e in _entries(path) if e["key"] != new["key"]]
    entries = [*kept[-(MAX_ENTRIES - 1):], new]
    while entries:
        text = json.dumps({"version": VERSION, "entries": entries}, sort_keys=True) + "\n"
        if len(text.encode()) <= MAX_BYTES:
            break
        entries = entries[1:]
    if not entries:
        return
    with contextlib.suppress(OSError):  # a read-only or full cache dir: the probe just runs next time too
        path.parent.mkdir(exist_ok=True)  # never the cache root itself: a plan of a new cache leaves the disk as it was
        replace_with(path, text)


def per_file(paths: Iterable[str], store: Path | None, tag: str | int, parse: Callable[[str], T],
             load: Callable[[Any], T | None], parallel_from: int) -> dict[str, T]:
    """What ``parse`` gives for each of ``paths`` that can be stat'ed, parsing only those whose size or mtime
    changed since the answers kept in ``store`` under ``tag`` (many on several cores: ``proc.fork_map``). The store
    is read as hostile (as a memo file is): one of another tag or shape, or an entry ``load`` (the caller's check,
    the entry as ``parse`` gives it or None) refuses, is parsed again. It is written only while the cache root (its
    dir's parent) exists, so a first plan leaves the disk as it found it; a read-only one costs the next the parse."""
    whole: Any = read_owned_json(store, MAX_PER_FILE_BYTES, plain_file_problem) if store else None
    ok = isinstance(whole, dict) and whole.get("scanner") == tag and isinstance(whole.get("files"), dict)
    kept = whole["files"] if ok else {}
    known = {p: (e, v) for p, e in kept.items()
             if isinstance(e, list) and len(e) == 3 and (v := load(e[2])) is not None}
    stats: dict[str, list[int]] = {}
    for path in paths:
        with contextlib.suppress(OSError):
            st = Path(path).stat()
            stats[path] = [st.st_size, st.st_mtime_ns]
    stale = [p for p, st in stats.items() if p not in known or known[p][0][:2] != st]
    parsed = dict(zip(stale, proc.fork_map(parse, stale, parallel_from), strict=True))
    fresh = {p: [*stats[p], parsed[p]] if p in parsed else known[p][0] for p in stats}
    if store and (fresh != kept or not ok) and store.parent.parent.is_dir():
        with contextlib.suppress(OSError):  # a read-only cache only costs the next plan the parse
            write_if_changed(store, json.dumps({"scanner": tag, "files": fresh}, separators=(",", ":")))
    return {p: parsed[p] if p in parsed else known[p][1] for p in stats}
