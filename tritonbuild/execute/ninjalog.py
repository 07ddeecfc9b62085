"""Where a build's time went, from Ninja's log: the critical path (the chain of edges that the build waited on) and
the slowest edges. ``where_time_went`` reads the text; the rest is arithmetic on it.

Ninja appends one line per finished edge (``start end mtime output hash``, milliseconds from the start of that
run), in the order edges finish. The build reads what each of its rounds appended (from the log's size before each);
a text read whole is split where the end times decrease (a new run), and the last run counts. The path and the
slowest edges are the last round's; a build of several rounds (a unity round that learned its exclusions, then the
one that made the wheel) also lists each round's wall time and edges, so the earlier rounds' time is not hidden.
The log has no dependency edges, so the path is walked back from the last edge to finish, each time to the edge
that finished last before the current one started (the one it most likely waited for): on a build bounded by a
chain of heavy translation units and links, that is the chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
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


def runs(text: str) -> list[list[Edge]]:
    """The edges of each run in the log, oldest first (an edge with several outputs counted once)."""
    found: list[list[Edge]] = []
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
        if not found or end < last_end:  # a new run began
            found.append([])
            seen = set()
        last_end = end
        key = (parts[0], parts[1], parts[4])
        if key not in seen:
            seen.add(key)
            found[-1].append(Edge(start, end, parts[3]))
    return found


def parse(text: str) -> list[Edge]:
    """The edges of the last run in the log."""
    found = runs(text)
    return found[-1] if found else []


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


def wall(edges: list[Edge]) -> float:
    """A run's wall time: when its last edge finished, from the start of the run."""
    return round(max(e.end for e in edges), 2)


def report(edges: list[Edge], top: int = 5) -> dict[str, Any]:
    """The figures for the manifest and the summary."""
    if not edges:
        return {}
    path = critical_path(edges)
    return {
        "wall_seconds": wall(edges),
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


def where_time_went(build_dir: Path, marks: Sequence[int] = (0,)) -> dict[str, Any]:
    """The report of the Ninja runs that appended to the build dir's log: ``marks`` are the log's sizes before each
    round of the build, so each round's part is read on its own (a round's last run counts for it). When Ninja
    rewrote the log meanwhile, the whole log's last run. {} when there is no log."""
    try:
        data = (build_dir / ".ninja_log").read_bytes()
    except OSError:
        return {}
    bounds = [*marks, len(data)]
    if any(a > b for a, b in pairwise(bounds)):  # rewritten: the offsets mean nothing now
        bounds = [0, len(data)]
    found = [run for a, b in pairwise(bounds) if (run := parse(data[a:b].decode(errors="replace")))]
    if not found:
        return {}
    figures = report(found[-1])
    if len(found) > 1:
        figures["runs"] = [{"wall_seconds": wall(run), "edges": len(run)} for run in found]
    return figures
