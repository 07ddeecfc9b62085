"""HTTP downloads with bounded retries and partial files (edge: network). Used for LLVM archives and NVIDIA
wheels; ``file://`` URLs work too (a local mirror)."""

from __future__ import annotations

import errno
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tritonbuild.errors import EnvironmentProblem
from tritonbuild.settings.model import SPEC_BY_NAME

Progress = Callable[[int, int | None], None]
# The declared settings' defaults (TRITONBUILD_HTTP_RETRIES / _TIMEOUT, read and checked by the settings model).
RETRIES: int = SPEC_BY_NAME["http_retries"].default
TIMEOUT: float = SPEC_BY_NAME["http_timeout"].default


class NetworkError(EnvironmentProblem):
    """A download failed after retries: a network problem, not a bad file."""


class NotFound(Exception):
    """The server answered that the file is not there (HTTP 403, 404 or 409)."""

    def __init__(self, url: str, code: int) -> None:
        super().__init__(f"{url}: HTTP {code}")
        self.url, self.code = url, code


def _open(url: str, timeout: float):  # type: ignore[no-untyped-def]
    request = urllib.request.Request(url, headers={"User-Agent": "tritonbuild"})
    return urllib.request.urlopen(request, timeout=timeout)


def _stream(url: str, part: Path, timeout: float, progress: Progress) -> None:
    with _open(url, timeout) as resp, open(part, "wb") as out:
        length = resp.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        done = 0
        while True:
            chunk = resp.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
            done += len(chunk)
            progress(done, total)
        if total is not None and done != total:
            raise NetworkError(f"truncated transfer: got {done} of {total} bytes")


def _retrying(url: str, attempt_once: Callable[[], object], retries: int, log: Callable[[str], None],
              hint: str) -> object:
    last = ""
    for attempt in range(1, retries + 1):
        try:
            return attempt_once()
        except urllib.error.HTTPError as exc:
            if exc.code in (403, 404, 409):
                raise NotFound(url, exc.code) from None
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, TimeoutError, ConnectionError, NetworkError, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EROFS):
                raise  # the local disk, not the network: retrying cannot help
            last = str(getattr(exc, "reason", exc))
        log(f"download attempt {attempt}/{retries} of {url} failed: {last}")
        if attempt < retries:
            time.sleep(min(0.5 * 2 ** (attempt - 1), 5.0))
    raise NetworkError(f"Could not download {url} after {retries} attempts ({last}). {hint}")


def fetch(url: str, dest: Path, *, retries: int = RETRIES, timeout: float = TIMEOUT, progress: Progress | None = None,
          log: Callable[[str], None] = print, hint: str = "Check the network.") -> Path:
    """Stream ``url`` to ``dest.part`` (retrying), then rename it to ``dest``. NotFound when the server says
    the file does not exist; NetworkError after the retries."""
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)

    def once() -> Path:
        try:
            _stream(url, part, timeout, progress or (lambda d, t: None))
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        part.rename(dest)
        return dest

    _retrying(url, once, retries, log, hint)
    return dest


def get_text(url: str, *, retries: int = RETRIES, timeout: float = TIMEOUT, log: Callable[[str], None] = print,
             hint: str = "Check the network.") -> str:
    def once() -> str:
        with _open(url, timeout) as resp:
            return str(resp.read().decode("utf-8", errors="replace"))

    return str(_retrying(url, once, retries, log, hint))
