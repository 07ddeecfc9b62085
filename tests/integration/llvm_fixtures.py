"""Fake LLVM prefixes, archives (good and hostile) and a local HTTP server, for the LLVM provider tests."""

from __future__ import annotations

import http.server
import io
import tarfile
import threading
import time
from collections import Counter
from pathlib import Path

LLVM_CONFIG = """#!/bin/sh
case "$1" in
  --version) echo 99.0.0git ;;
  --targets-built) echo "@TARGETS@" ;;
  --prefix) cd "$(dirname "$0")/.." && pwd ;;
  *) exit 1 ;;
esac
"""


def prefix_files(targets: str = "AMDGPU NVPTX X86") -> dict[str, tuple[bytes, int]]:
    """The files of a minimal LLVM prefix the probe accepts: path -> (content, mode)."""
    script = LLVM_CONFIG.replace("@TARGETS@", targets).encode()
    return {
        "bin/llvm-config": (script, 0o755),
        "bin/mlir-tblgen": (b"#!/bin/sh\necho mlir-tblgen 99\n", 0o755),
        "bin/FileCheck": (b"#!/bin/sh\nexit 0\n", 0o755),
        "lib/cmake/llvm/LLVMConfig.cmake": (b"set(LLVM_PACKAGE_VERSION 99.0.0)\n", 0o644),
        "lib/cmake/mlir/MLIRConfig.cmake": (b"# fake\n", 0o644),
        "lib/cmake/lld/LLDConfig.cmake": (b"# fake\n", 0o644),
    }


def make_archive(top: str, *, evil: str | None = None) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, (data, mode) in prefix_files().items():
            info = tarfile.TarInfo(f"{top}/{rel}")
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))
        if evil:
            info = tarfile.TarInfo(f"{top}/bin/evil")
            info.mode = 0o644
            if evil == "dotdot":
                info.name = f"{top}/../../escaped.txt"
            elif evil == "absolute":
                info.name = "/tmp/tritonbuild-absolute-escape.txt"
            elif evil == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, "../../../../../../etc/passwd"
            elif evil == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, "../outside.txt"
            elif evil == "device":
                info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
            data = b"escaped" if info.type == tarfile.REGTYPE else b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Server:
    """Serves ``/<mode>/<archive name>``; modes: good, truncated, flaky (500 once), stall, slow, missing."""

    def __init__(self, archives: dict[str, bytes]) -> None:
        self.archives = archives
        self.hits: Counter[str] = Counter()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                _, mode, name = self.path.split("/", 2)
                server.hits[self.path] += 1
                data = server.archives.get(name)
                if data is None or mode == "missing":
                    self.send_error(404)
                    return
                if mode == "flaky" and server.hits[self.path] == 1:
                    self.send_error(500)
                    return
                if mode == "stall":
                    time.sleep(4)
                if mode == "slow":
                    time.sleep(1.0)
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if mode == "truncated":
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def fake_prefix(path: Path, targets: str = "AMDGPU NVPTX X86") -> Path:
    for rel, (data, mode) in prefix_files(targets).items():
        f = path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)
        f.chmod(mode)
    return path
