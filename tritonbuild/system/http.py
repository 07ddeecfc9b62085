"""HTTP downloads with bounded retries, an overall deadline, a minimum rate and a size cap, into partial files
(edge: network). Used for LLVM archives, NVIDIA wheels and index pages; ``file://`` URLs work too (a local mirror).

A mirror is not trusted to end a download: one that sends a byte every 20 s never trips the per-read timeout, and
one that sends without end fills the disk. So every download has ``Limits``: the deadline covers all its attempts
together (a CI job's budget is not multiplied by the retries), the minimum rate is each window's average once an
attempt is a window old (a stall is retried while the deadline allows), and the size cap refuses a Content-Length
over it before the body is read and stops a body that grows past it (never retried: the same file comes back).
Whatever stops an attempt, its partial file is removed."""

from __future__ import annotations

import errno
import http.client
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tritonbuild.errors import EnvironmentProblem
from tritonbuild.printable import printable
from tritonbuild.redact import redact_text

Progress = Callable[[int, int | None], None]
# The defaults of a download no caller limits otherwise. A plan's downloads take theirs from the settings
# (http_retries, http_timeout, ... read and checked by the settings model), whose defaults are these
# (tests/unit/test_http_limits.py holds the two the same).
RETRIES = 3
TIMEOUT = 30.0  # seconds of waiting for one read
DEADLINE = 3600.0  # seconds for all the attempts together
MIN_RATE = 1024  # bytes/s
MAX_BYTES = 4 << 30
RATE_WINDOW = 60.0  # seconds: the minimum rate is each window's average, checked once an attempt is this old
TEXT_MAX_BYTES = 16 << 20  # an index page (PyPI's largest simple pages are a few MiB)
TEXT_DEADLINE = 300.0  # seconds for an index page, all attempts together
CHUNK = 1 << 20
_SAMPLES = 64  # rate samples kept per window (one at most every window/64 s): bounded memory at any speed


@dataclass(frozen=True)
class Limits:
    """What one download may take: ``retries`` attempts, ``timeout`` s of waiting for each read, ``deadline`` s for
    all the attempts together, at least ``min_rate`` bytes/s over each ``window`` s once an attempt is that old
    (0: no minimum), and at most ``max_bytes``. ``size_from``/``deadline_from`` name what sets the cap and the
    deadline, as a refusal says it."""

    retries: int = RETRIES
    timeout: float = TIMEOUT
    deadline: float = DEADLINE
    min_rate: int = MIN_RATE
    max_bytes: int = MAX_BYTES
    window: float = RATE_WINDOW
    size_from: str = "TRITONBUILD_HTTP_MAX_BYTES (the http_max_bytes setting)"
    deadline_from: str = "TRITONBUILD_HTTP_DEADLINE (the http_deadline setting)"


DEFAULT_LIMITS = Limits()


class NetworkError(EnvironmentProblem):
    """A download failed after retries: a network problem, not a bad file."""


class Stopped(NetworkError):
    """A limit stopped the download (its deadline, its minimum rate or its size cap): the message says which, with
    the numbers and the setting that changes it. ``retry``: whether another attempt may help (a stall may pass;
    the same file is as large the next time)."""

    def __init__(self, message: str, retry: bool) -> None:
        super().__init__(message)
        self.retry = retry


class _OutOfTime(Exception):
    """The deadline passed during an attempt (``_retrying`` says it with the attempts made)."""


class NotFound(Exception):
    """The server answered that the file is not there (HTTP 403, 404 or 409)."""

    def __init__(self, url: str, code: int) -> None:
        super().__init__(f"{url}: HTTP {code}")
        self.url, self.code = url, code


MAX_REDIRECTS = 5


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Redirects a mirror or an index may give, and no others: to http or https only (urllib's own handler also
    follows ftp://, which reaches any port as another protocol), never from https down to http, at most
    ``MAX_REDIRECTS`` in a row. A refused one is a ``Stopped`` that names it and is not retried."""

    # urllib's own limits (4 visits of one URL, 5 distinct URLs) end a loop with a bare "HTTP 302", which is retried:
    # set past ours, which counts every redirect of the chain and says it
    max_redirections = max_repeats = MAX_REDIRECTS + 1

    def http_error_302(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                       headers: Any) -> Any:
        # checked before urllib's own handler, which refuses file:// only with a bare "HTTP 302" (retried)
        given = headers.get("location") or headers.get("uri") or ""
        newurl = urllib.parse.urljoin(req.full_url, given)
        if sum(getattr(req, "redirect_dict", {}).values()) >= MAX_REDIRECTS:  # a loop, or a chain too long
            fp.close()
            raise Stopped(f"Stopped the download of {redact_text(req.full_url)}: too many redirects (more than "
                          f"{MAX_REDIRECTS}; the last to {redact_text(printable(newurl))}). The server redirects in a "
                          "loop or through a long chain: check the mirror or index URL, or give the final URL "
                          "itself.", retry=False)
        old, new = urllib.parse.urlsplit(req.full_url).scheme, urllib.parse.urlsplit(newurl).scheme.lower()
        if new not in ("http", "https") or (old == "https" and new == "http"):
            fp.close()
            raise Stopped(f"Stopped the download of {redact_text(req.full_url)}: the server redirected it (HTTP "
                          f"{code}) to {redact_text(printable(newurl))}, and tritonbuild follows redirects to "
                          "http:// and https:// only, never from https:// down to http://. Check the mirror or "
                          "index URL, or give the final URL itself.", retry=False)
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


_OPENER = urllib.request.build_opener(_Redirects)


def _open(url: str, timeout: float):  # type: ignore[no-untyped-def]
    request = urllib.request.Request(url, headers={"User-Agent": "tritonbuild"})
    return _OPENER.open(request, timeout=timeout)


def _too_large(url: str, limits: Limits, what: str) -> Stopped:
    return Stopped(f"Stopped the download of {redact_text(url)}: {what}, over the cap of {limits.max_bytes} bytes "
                   f"that {limits.size_from} sets. Nothing of it was kept, and it was not retried (the same file "
                   "would come back). Check the URL; raise the cap only for a file you expect to be that large.",
                   retry=False)


class _Meter:
    """The time and rate checks of one attempt, after each read."""

    def __init__(self, url: str, limits: Limits, end: float) -> None:
        self.url, self.limits, self.end = url, limits, end
        self.start = time.monotonic()
        self.samples: deque[tuple[float, int]] = deque([(self.start, 0)])

    def check(self, done: int) -> None:
        now = time.monotonic()
        if now > self.end:
            raise _OutOfTime(f"{done} bytes had come in its last attempt")
        rate, window = self.limits.min_rate, self.limits.window
        if not rate:
            return
        if now - self.samples[-1][0] >= window / _SAMPLES:
            self.samples.append((now, done))
        while len(self.samples) > 1 and self.samples[1][0] <= now - window:
            self.samples.popleft()
        since, then = self.samples[0]
        if now - self.start >= window and done - then < rate * (now - since):
            got = done - then
            raise Stopped(f"{redact_text(self.url)} sent {got} bytes in the last {now - since:.1f} s "
                          f"({got / (now - since):.0f} bytes/s), under the minimum of {rate} bytes/s over {window:g} s "
                          "that TRITONBUILD_HTTP_MIN_RATE (the http_min_rate setting) sets; 0 turns the check off",
                          retry=True)


def _copy(resp: Any, write: Callable[[bytes], object], url: str, limits: Limits, end: float,
          progress: Progress) -> None:
    """Read the body into ``write`` under the limits (a Content-Length over the cap is refused before any of it)."""
    length = resp.headers.get("Content-Length")
    # a length of thousands of digits is none (int() refuses it; http.client then reads to the connection's end)
    total = int(length) if length and length.isascii() and length.isdigit() and len(length) < 30 else None
    if total is not None and total > limits.max_bytes:
        raise _too_large(url, limits, f"the server declares {total} bytes (Content-Length)")
    meter = _Meter(url, limits, end)
    read = getattr(resp, "read1", resp.read)  # what has come, not a full chunk: a drip is measured as it drips
    done = 0
    while chunk := read(CHUNK):
        done += len(chunk)
        if done > limits.max_bytes:
            raise _too_large(url, limits, f"its body passed {limits.max_bytes} bytes while it was read")
        write(chunk)
        progress(done, total)
        meter.check(done)
    if total is not None and done != total:
        raise NetworkError(f"truncated transfer: got {done} of {total} bytes")


def _out_of_time(url: str, limits: Limits, attempt: int, detail: str, hint: str) -> Stopped:
    return Stopped(f"Stopped the download of {redact_text(url)}: it was not done after {limits.deadline:g} s, the "
                   f"deadline of all its attempts together ({attempt} of at most {limits.retries} made; {detail}). "
                   f"{limits.deadline_from} sets it: raise it for a slow link. {hint}", retry=False)


def _retrying(url: str, attempt_once: Callable[[float, float], object], limits: Limits,
              log: Callable[[str], None], hint: str) -> object:
    """Call ``attempt_once(read timeout, end)`` up to ``limits.retries`` times, all before the deadline."""
    end = time.monotonic() + limits.deadline
    last, attempt = "", 0
    for attempt in range(1, limits.retries + 1):
        left = end - time.monotonic()
        if left <= 0:
            raise _out_of_time(url, limits, attempt - 1, f"the last failed: {last}", hint) from None
        try:
            return attempt_once(min(limits.timeout, left), end)
        except _OutOfTime as exc:
            raise _out_of_time(url, limits, attempt, str(exc), hint) from None
        except Stopped as exc:
            if not exc.retry:
                raise Stopped(f"{exc} {hint}", retry=False) from None
            last = str(exc)
        except urllib.error.HTTPError as exc:
            exc.close()  # its connection: the answer's body is not read
            if exc.code in (403, 404, 409):
                raise NotFound(url, exc.code) from None
            last = f"HTTP {exc.code}"
        except (urllib.error.URLError, TimeoutError, ConnectionError, NetworkError, OSError,
                http.client.HTTPException) as exc:  # HTTPException: a garbled status line, a broken chunk
            if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EROFS):
                raise  # the local disk, not the network: retrying cannot help
            last = str(getattr(exc, "reason", exc))
        log(f"download attempt {attempt}/{limits.retries} of {redact_text(url)} failed: {last}")
        if attempt < limits.retries:
            time.sleep(max(0.0, min(0.5 * 2 ** (attempt - 1), 5.0, end - time.monotonic())))
    raise NetworkError(f"Could not download {redact_text(url)} after {attempt} attempts ({last}). {hint}")


def fetch(url: str, dest: Path, *, limits: Limits = DEFAULT_LIMITS, progress: Progress | None = None,
          log: Callable[[str], None], hint: str = "Check the network.") -> Path:
    """Stream ``url`` to ``dest.part`` (retrying, within ``limits``), then rename it to ``dest``. NotFound when the
    server says the file does not exist; Stopped when a limit stops it; NetworkError after the retries. Whatever
    stops an attempt, ``dest.part`` is removed."""
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)

    def once(timeout: float, end: float) -> Path:
        try:
            with _open(url, timeout) as resp, open(part, "wb") as out:
                _copy(resp, out.write, url, limits, end, progress or (lambda d, t: None))
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        part.rename(dest)
        return dest

    _retrying(url, once, limits, log, hint)
    return dest


def get_text(url: str, *, limits: Limits = DEFAULT_LIMITS, log: Callable[[str], None],
             hint: str = "Check the network.") -> str:
    """A page (an index), read whole into memory: capped at ``TEXT_MAX_BYTES`` and ``TEXT_DEADLINE`` whatever
    larger ``limits`` say."""
    if limits.max_bytes > TEXT_MAX_BYTES:
        limits = replace(limits, max_bytes=TEXT_MAX_BYTES, size_from=f"tritonbuild for a page ({TEXT_MAX_BYTES} "
                         "bytes; TRITONBUILD_HTTP_MAX_BYTES can only lower it)")
    if limits.deadline > TEXT_DEADLINE:
        limits = replace(limits, deadline=TEXT_DEADLINE, deadline_from=f"tritonbuild for a page ({TEXT_DEADLINE:g} "
                         "s; TRITONBUILD_HTTP_DEADLINE can only lower it)")

    def once(timeout: float, end: float) -> str:
        parts: list[bytes] = []
        with _open(url, timeout) as resp:
            _copy(resp, parts.append, url, limits, end, lambda d, t: None)
        return b"".join(parts).decode("utf-8", errors="replace")

    return str(_retrying(url, once, limits, log, hint))
