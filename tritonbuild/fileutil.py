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


def unpack_wheel(wheel: Path, dest: Path, only: str | None = None) -> Path:
    """Unzip ``wheel`` into ``dest`` keeping each member's permission bits, as pip does (zipfile drops them: a
    bundled ptxas would not be executable). ``only``: just the members whose path contains it."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if only and only not in info.filename:
                continue
            path = Path(zf.extract(info, dest))
            mode = (info.external_attr >> 16) & 0o777
            if mode and not info.is_dir():
                path.chmod(mode)
    return dest
