"""The compiler cache's and distcc's counters around one build (edge: asks ccache/sccache, reads distcc's log)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path


def ccache_stats(ccache: str, run: Callable[..., object]) -> dict[str, int]:
    out = run([ccache, "--print-stats"], timeout=30)
    stats: dict[str, int] = {}
    for line in getattr(out, "stdout", "").splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isascii() and value.strip().isdigit():
            stats[key] = int(value)
    return {"hits": stats.get("direct_cache_hit", 0) + stats.get("preprocessed_cache_hit", 0),
            "misses": stats.get("cache_miss", 0), "remote_hits": stats.get("remote_storage_hit", 0)}


def sccache_stats(sccache: str, run: Callable[..., object], env: Mapping[str, str]) -> dict[str, object]:
    """Hits and misses of this configuration's sccache server (started with the build's environment when none
    runs), and where it stores: ``cache_location`` names the backend (Local disk, S3, Redis, ...)."""
    run([sccache, "--start-server"], env=env, timeout=60)
    out = run([sccache, "--show-stats", "--stats-format=json"], env=env, timeout=60)
    try:
        data = json.loads(getattr(out, "stdout", "") or "{}")
    except ValueError:
        return {}
    stats = data.get("stats", {})
    return {"hits": sum(stats.get("cache_hits", {}).get("counts", {}).values()),
            "misses": sum(stats.get("cache_misses", {}).get("counts", {}).values()),
            "errors": stats.get("cache_read_errors", 0) + stats.get("cache_write_errors", 0),
            "location": str(data.get("cache_location", ""))}


def delta(before: Mapping[str, object], after: Mapping[str, object]) -> dict[str, object]:
    """The counters this build moved (non-numbers, like sccache's location, as they are after)."""
    out: dict[str, object] = {}
    for key, value in after.items():
        prev = before.get(key, 0)
        out[key] = value - prev if isinstance(value, int) and isinstance(prev, int) else value
    return out


def distcc_counts(log: Path) -> dict[str, int]:
    """Objects compiled on remote hosts and locally, from distcc's log (``compile X on HOST completed ok``)."""
    remote = local = 0
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return {}
    for host in re.findall(r"\] compile \S+ on (\S+) completed ok", text):
        if host.split(":")[0].split("/")[0] == "localhost":
            local += 1
        else:
            remote += 1
    local += len(re.findall(r"failed to distribute .*running locally instead", text))
    return {"remote": remote, "local": local}
