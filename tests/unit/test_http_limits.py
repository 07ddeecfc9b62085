"""Issue 44: a download has an overall deadline, a minimum rate and a size cap, against a real HTTP server on
127.0.0.1 that drips, lies about its Content-Length, sends too much or answers errors. Each test takes a few seconds at
most: the limits and the rate window are passed small."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tritonbuild.errors import UserError
from tritonbuild.nvidia.stage import http_limits
from tritonbuild.settings.model import SPEC_BY_NAME, Settings, env_float, env_int, resolve_settings
from tritonbuild.system import http as tb_http
from tritonbuild.system.http import Limits, NetworkError, NotFound, Stopped


@dataclass
class Script:
    """What the server does with the next requests."""

    chunks: list[bytes] = field(default_factory=list)
    status: int = 200
    declared: int | str | None = -1  # Content-Length: -1 the true length, None none (the body ends when it closes)
    chunked: bool = False
    delay: float = 0.0  # after each chunk
    head_delay: float = 0.0  # after the headers, before the body
    garbage: bool = False  # a status line that is no HTTP
    location: str | None = None  # a redirect (302) of the first path to this URL; other paths get the body

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


class Scripted:
    def __init__(self) -> None:
        self.script = Script()
        self.hits = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                outer.hits += 1
                s = outer.script
                if s.garbage:
                    self.wfile.write(b"NOT HTTP AT ALL\r\n\r\n")
                    return
                if s.location and self.path == "/file.bin":
                    self.send_response(302)
                    self.send_header("Location", s.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if s.status != 200:
                    self.send_error(s.status)
                    return
                self.send_response(200)
                if s.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                elif s.declared is not None:
                    self.send_header("Content-Length", str(len(s.body) if s.declared == -1 else s.declared))
                self.end_headers()
                self.wfile.flush()
                time.sleep(s.head_delay)
                try:
                    for c in s.chunks:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(c), c) if s.chunked and c else c)
                        self.wfile.flush()
                        time.sleep(s.delay)
                    if s.chunked:
                        self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client stopped reading
                    return

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/file.bin"

    def run(self, script: Script) -> Scripted:
        self.script, self.hits = script, 0
        return self


@pytest.fixture(scope="module")
def server() -> Iterator[Scripted]:
    s = Scripted()
    thread = threading.Thread(target=s.httpd.serve_forever, daemon=True)
    thread.start()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


QUIET: dict[str, Any] = {"log": lambda m: None, "hint": "HINT."}


def leftovers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.rglob("*"))


def test_a_drip_under_the_read_timeout_is_stopped_at_the_deadline_of_all_attempts(server: Scripted,
                                                                                 tmp_path: Path) -> None:
    server.run(Script([b"x"] * 100, delay=0.2))  # a byte every 0.2 s: each read is far under the 5 s timeout
    start = time.monotonic()
    with pytest.raises(Stopped) as info:
        tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=3, timeout=5, deadline=1.0, min_rate=0),
                      **QUIET)
    assert time.monotonic() - start < 2.0
    message = str(info.value)
    assert "was not done after 1 s, the deadline of all its attempts together (1 of at most 3 made" in message
    assert server.url in message and "TRITONBUILD_HTTP_DEADLINE" in message and message.endswith("HINT.")
    assert server.hits == 1 and leftovers(tmp_path) == []


def test_a_slow_rate_is_stopped_after_the_window_and_retried(server: Scripted, tmp_path: Path) -> None:
    server.run(Script([b"x"] * 100, delay=0.05))  # about 20 bytes/s
    start = time.monotonic()
    with pytest.raises(NetworkError) as info:
        tb_http.fetch(server.url, tmp_path / "f",
                      limits=Limits(retries=2, timeout=5, deadline=10, min_rate=200, window=0.4), **QUIET)
    assert time.monotonic() - start < 2.5
    assert type(info.value) is NetworkError  # the retries ran out, each stopped by the rate
    message = str(info.value)
    assert f"Could not download {server.url} after 2 attempts" in message
    assert "bytes/s), under the minimum of 200 bytes/s over 0.4 s" in message
    assert "TRITONBUILD_HTTP_MIN_RATE" in message and "0 turns the check off" in message
    assert server.hits == 2 and leftovers(tmp_path) == []


def test_retries_of_a_stall_do_not_outlast_the_deadline(server: Scripted, tmp_path: Path) -> None:
    server.run(Script([b"x"] * 100, delay=0.05))
    start = time.monotonic()
    with pytest.raises(Stopped, match=r"after 1 s, the deadline of all its attempts together \(2 of at most 50"):
        tb_http.fetch(server.url, tmp_path / "f",
                      limits=Limits(retries=50, timeout=5, deadline=1.0, min_rate=200, window=0.4), **QUIET)
    assert time.monotonic() - start < 2.0 and server.hits == 2 and leftovers(tmp_path) == []


def test_a_fast_enough_download_passes_the_rate_check(server: Scripted, tmp_path: Path) -> None:
    server.run(Script([bytes([i]) * 1000 for i in range(12)], delay=0.05))  # 20 KB/s for 0.6 s
    got = tb_http.fetch(server.url, tmp_path / "f",
                        limits=Limits(retries=1, timeout=5, deadline=5, min_rate=200, window=0.2), **QUIET)
    assert got.read_bytes() == server.script.body and leftovers(tmp_path) == ["f"]


def test_a_content_length_over_the_cap_is_refused_before_the_body_is_read(server: Scripted, tmp_path: Path) -> None:
    server.run(Script([b"x" * 5000], head_delay=2.0))  # the body would come after 2 s
    seen: list[int] = []
    start = time.monotonic()
    with pytest.raises(Stopped) as info:
        tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=3, max_bytes=1000),
                      progress=lambda d, t: seen.append(d), **QUIET)
    assert time.monotonic() - start < 1.0 and seen == []
    message = str(info.value)
    assert "the server declares 5000 bytes (Content-Length), over the cap of 1000 bytes" in message
    assert "TRITONBUILD_HTTP_MAX_BYTES" in message and "not retried" in message and server.url in message
    assert server.hits == 1 and leftovers(tmp_path) == []


@pytest.mark.parametrize("how", ["undeclared", "chunked"])
def test_a_body_over_the_cap_is_stopped_while_it_is_read(server: Scripted, tmp_path: Path, how: str) -> None:
    server.run(Script([b"y" * 400] * 10, declared=None, chunked=how == "chunked"))
    seen: list[int] = []
    with pytest.raises(Stopped, match="its body passed 1000 bytes while it was read, over the cap of 1000"):
        tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=3, max_bytes=1000),
                      progress=lambda d, t: seen.append(d), **QUIET)
    assert max(seen, default=0) <= 1000 and server.hits == 1 and leftovers(tmp_path) == []


def test_a_content_length_of_thousands_of_digits_is_no_length_and_the_body_is_still_counted(
        server: Scripted, tmp_path: Path) -> None:
    server.run(Script([b"z" * 3000], declared="9" * 5000))
    with pytest.raises(Stopped, match="its body passed 1000 bytes while it was read"):
        tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=1, max_bytes=1000), **QUIET)
    server.run(Script([b"z" * 300], declared="9" * 5000))
    assert tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=1, max_bytes=1000),
                         **QUIET).read_bytes() == b"z" * 300


def test_a_page_is_capped_at_16_mib_whatever_the_download_cap(server: Scripted) -> None:
    server.run(Script([b"<html>"], declared=(16 << 20) + 1, head_delay=2.0))
    with pytest.raises(Stopped, match=r"declares 16777217 bytes .*cap of 16777216 bytes that tritonbuild for a page"):
        tb_http.get_text(server.url, limits=Limits(max_bytes=1 << 40), **QUIET)
    assert server.hits == 1
    assert Limits().max_bytes == 4 << 30 and Limits().deadline > tb_http.TEXT_DEADLINE


def test_the_limits_come_from_the_settings_and_refuse_other_digits() -> None:
    env = {"TRITONBUILD_HTTP_DEADLINE": "90", "TRITONBUILD_HTTP_MIN_RATE": "0", "TRITONBUILD_HTTP_MAX_BYTES": "4096"}
    resolved = resolve_settings({}, env)
    assert resolved["http_deadline"].origin == "env TRITONBUILD_HTTP_DEADLINE"
    limits = http_limits(Settings.of(resolved))
    assert (limits.deadline, limits.min_rate, limits.max_bytes) == (90.0, 0, 4096)
    # http.py declares its own defaults (it reads no setting): they are the settings' defaults
    assert http_limits(Settings.of(resolve_settings({}, {}))) == Limits()
    assert {f: getattr(Limits(), f) for f in ("retries", "timeout", "deadline", "min_rate", "max_bytes")} == {
        f: SPEC_BY_NAME[f"http_{f}"].default for f in ("retries", "timeout", "deadline", "min_rate", "max_bytes")}
    readers = {"TRITONBUILD_HTTP_DEADLINE": env_float, "TRITONBUILD_HTTP_MIN_RATE": env_int,
               "TRITONBUILD_HTTP_MAX_BYTES": env_int}
    for name, parser in readers.items():
        spec = next(s for s in SPEC_BY_NAME.values() if name in s.env_names)
        assert spec.env_names == (name,) and parser(env, name) is not None
        for bad in ("\uff14", "1\u0664", "-5", "1e99", "abc", "nan" if parser is env_float else "1.5"):
            with pytest.raises(UserError, match=name):
                resolve_settings({}, {name: bad})
    with pytest.raises(UserError, match=r"http_deadline = 0\.0"):
        resolve_settings({}, {"TRITONBUILD_HTTP_DEADLINE": "0"})


# --- the property: any server behaviour ends in the exact bytes, or a typed failure with nothing left -------------

BEHAVIOURS = st.builds(
    Script,
    chunks=st.lists(st.binary(max_size=64) | st.integers(0, 1500).map(lambda n: bytes(i % 251 for i in range(n))),
                    max_size=5),
    status=st.sampled_from([200, 200, 200, 200, 404, 403, 500]),
    declared=st.one_of(st.just(-1), st.none(), st.integers(0, 4000), st.just(10 ** 15)),
    chunked=st.booleans(),
    delay=st.sampled_from([0.0, 0.0, 0.005]),
    garbage=st.sampled_from([False] * 7 + [True]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=BEHAVIOURS, cap=st.sampled_from([100, 2000, 100_000]), text=st.booleans())
def test_any_server_behaviour_gives_the_exact_bytes_or_a_typed_failure_and_no_partial_file(
        server: Scripted, tmp_path: Path, script: Script, cap: int, text: bool) -> None:
    server.run(script)
    out = tmp_path / f"f{time.monotonic_ns()}"
    limits = Limits(retries=1, timeout=2, deadline=2, min_rate=0, max_bytes=cap)
    start = time.monotonic()
    try:
        got = tb_http.get_text(server.url, limits=limits, **QUIET).encode("utf-8", "surrogateescape") if text \
            else tb_http.fetch(server.url, out, limits=limits, **QUIET).read_bytes()
    except (NetworkError, NotFound, UserError) as exc:
        got, failure = None, exc
    elapsed = time.monotonic() - start
    assert elapsed < 4.0  # the deadline and one read timeout
    assert not out.with_name(out.name + ".part").exists()
    served = script.status == 200 and not script.garbage
    declared = None if script.chunked or script.declared is None else \
        len(script.body) if script.declared == -1 else script.declared
    body = script.body if declared is None else script.body[:declared]  # HTTP reads what the header declares
    if got is None:
        assert not out.exists()
        if script.status in (403, 404) and not script.garbage:
            assert isinstance(failure, NotFound)
        if isinstance(failure, Stopped):
            assert "over the cap of" in str(failure) and server.hits == 1
    else:
        assert served and len(body) <= cap
        assert got == (body.decode("utf-8", "replace").encode("utf-8", "surrogateescape") if text else body)
    if served and declared is not None and declared > cap:
        assert isinstance(failure, Stopped) and "(Content-Length)" in str(failure)  # refused before the body
    elif served and len(body) > cap:
        assert isinstance(failure, Stopped) and "while it was read" in str(failure)
    elif served and declared is not None and declared > len(script.body):
        assert type(failure) is NetworkError and "truncated" in str(failure)  # the server closed early
    elif served:
        assert got is not None


@pytest.mark.parametrize("target", ["ftp://127.0.0.1:1/llvm.tar.gz", "file:///etc/passwd", "gopher://127.0.0.1:1/x"])
def test_a_redirect_leaves_http_never(server: Scripted, tmp_path: Path, target: str) -> None:
    """urllib follows a mirror's redirect to ftp:// (any port, as another protocol); only http and https are
    followed, and a refused redirect is said and not retried (#44, review)."""
    server.run(Script(chunks=[b"x" * 10], location=target))
    with pytest.raises(Stopped, match=r"redirected it \(HTTP 302\) to .*http:// and https:// only") as stopped:
        tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=3), **QUIET)
    assert not stopped.value.retry and server.hits == 1 and leftovers(tmp_path) == []


def test_a_redirect_to_http_is_followed(server: Scripted, tmp_path: Path) -> None:
    server.run(Script(chunks=[b"the file"], location=server.url.replace("/file.bin", "/moved.bin")))
    assert tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=1), **QUIET).read_bytes() == b"the file"


def test_a_redirect_loop_is_said_and_not_retried(server: Scripted, tmp_path: Path) -> None:
    """A server that 302s to itself was reported as a bare "HTTP 302" (urllib's own loop check) and retried: the
    chain is cut after MAX_REDIRECTS, named, and not tried again (#44, review)."""
    server.run(Script(chunks=[b"never"], location=server.url))
    with pytest.raises(Stopped, match=r"too many redirects \(more than 5; the last to http://127\.0\.0\.1") as got:
        tb_http.fetch(server.url, tmp_path / "f", limits=Limits(retries=3), **QUIET)
    assert not got.value.retry and "HINT." in str(got.value) and server.url in str(got.value)
    assert server.hits == tb_http.MAX_REDIRECTS + 1 and leftovers(tmp_path) == []
    with pytest.raises(Stopped, match="too many redirects"):
        tb_http.get_text(server.url, limits=Limits(retries=2), **QUIET)
