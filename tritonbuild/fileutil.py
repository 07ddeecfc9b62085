"""Small file helpers shared by the edge modules."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def record_hash(data: bytes, algo: str = "sha256") -> str:
    """A wheel RECORD digest: urlsafe base64 without padding (PEP 376/427)."""
    return base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()


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
