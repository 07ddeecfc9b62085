"""Small file helpers shared by the edge modules."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_if_changed(path: Path, text: str) -> bool:
    """Atomically (re)write ``path`` only when its content differs; return whether it was written.

    Unchanged files keep their mtime, so Ninja/CMake see nothing new on a no-op run.
    """
    if path.is_file() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return True


def read_text(path: Path) -> str:
    """A text file's content, "" when it cannot be read (undecodable bytes replaced)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
