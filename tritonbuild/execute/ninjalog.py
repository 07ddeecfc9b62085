"""Where a build's time went, from Ninja's log: the critical path (the chain of edges that the build waited on) and
the slowest edges. ``where_time_went`` reads the text; the rest is arithmetic on it.

Ninja appends one line per finished edge (``start end mtime output hash``, milliseconds from the start of that
run), in the order edges finish. The build reads what its own run appended (from the log's size before it); a log
read whole is split where the end times decrease (a new run), and only the last run counts. The log has no
dependency edges, so the path is walked back from the last edge to finish, each time to the edge that finished
last before the current one started (the one it most likely waited for): on a build bounded by a chain of heavy
translation units and links, that is the chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Edge:
    start: float  # seconds from the start of the run
    end: float
    output: str

    @property
    def seconds(self) -> float:
        return self.end - self.start


def parse(text: str) -> list[Edge]:
    """The edges of the last run in the log (an edge with several outputs counted once)."""
    run: list[Edge] = []
    seen: set[tuple[str, str, str]] = set()
    last_end = -1.0
    for line in text.splitlines():
        parts = line.split("\t")
        if line.startswith("#") or len(parts) < 5:
            continue
        try:
            start, end = int(parts[0]) / 1000, int(parts[1]) / 1000
        except ValueError:
            continue
        if end < last_end:  # a new run began
            run, seen = [], set()
        last_end = end
        key = (parts[0], parts[1], parts[4])
        if key not in seen:
            seen.add(key)
            run.append(Edge(start, end, parts[3]))
    return run


def critical_path(edges: list[Edge]) -> list[Edge]:
    """The chain ending with the last edge to finish, walked back as the module docstring says (first to last)."""
    if not edges:
        return []
    path = [max(edges, key=lambda e: e.end)]
    while True:
        before = [e for e in edges if e.end <= path[-1].start + 0.001 and e is not path[-1]]
        if not before:
            return path[::-1]
        path.append(max(before, key=lambda e: (e.end, e.seconds)))


def report(edges: list[Edge], top: int = 5) -> dict[str, Any]:
    """The figures for the manifest and the summary."""
    if not edges:
        return {}
    path = critical_path(edges)
    return {
        "wall_seconds": round(max(e.end for e in edges), 2),
        "edges": len(edges),
        "critical_path_seconds": round(sum(e.seconds for e in path), 2),
        "critical_path": [{"output": e.output, "seconds": round(e.seconds, 2)} for e in path],
        "slowest": [{"output": e.output, "seconds": round(e.seconds, 2)}
                    for e in sorted(edges, key=lambda e: -e.seconds)[:top]],
    }


def log_size(build_dir: Path) -> int:
    try:
        return (build_dir / ".ninja_log").stat().st_size
    except OSError:
        return 0


def where_time_went(build_dir: Path, offset: int = 0) -> dict[str, Any]:
    """The report of the Ninja run that appended to the build dir's log after ``offset`` bytes (the whole log's
    last run when Ninja rewrote the log meanwhile); {} when there is no log."""
    try:
        data = (build_dir / ".ninja_log").read_bytes()
    except OSError:
        return {}
    return report(parse(data[offset if offset <= len(data) else 0:].decode(errors="replace")))
