"""The search of ``tritonbuild llvm compat`` (pure): over a first-parent history, oldest commit first, find the
boundary between the commits that build with an LLVM and those that do not, testing as few as it can.

It assumes the usual shape: old commits build with this LLVM and new ones do not (the tree moved on to a newer LLVM
API), or every commit builds. The newest commit is tested first (when it passes, it is the answer: one step); then
the oldest; then the interval between the newest known pass and the oldest known fail after it is halved until they
are neighbours. For any pass/fail sequence that has that shape, the answer is its boundary, found in at most
ceil(log2(n)) + 2 steps; for any other sequence with a pass, the answer is still a real boundary: a passing commit
whose next commit fails.

A system LLVM often sits between two of a fork's LLVM bumps: the oldest commits are too old for it and the newest
too new (upstream's January 2026 against LLVM 22.1.8: the first half hangs, the last commit bumps past it), so both
ends fail and a window of passing commits lies inside. When both ends fail and no pass is known, up to ``probes(n)``
more commits are tested, each the middle of the widest interval between tested commits (newest first on a tie);
the first pass found is bisected up to its boundary as above. Every window wider than ``window_found(n)`` commits
is found; a narrower one may be missed, and then the answer is that none was found.

``next_step`` says what to test given what is known (the edge runs the tests, prints and caches them);
``search`` runs the whole search with a predicate.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    """Indexes into the history, oldest first. ``newest_passing`` None: no commit was found to build (then
    ``first_failing`` is None too: the oldest and the newest both fail); ``first_failing`` None with a passing
    one: the newest commit builds."""

    newest_passing: int | None
    first_failing: int | None

    @property
    def found(self) -> bool:
        return self.newest_passing is not None


def probes(n: int) -> int:
    """How many commits between two failing ends are tested for a window of passing ones: ceil(log2(n))."""
    return math.ceil(math.log2(n)) if n > 2 else 0


def most_steps(n: int) -> int:
    """The most steps a search of ``n`` commits takes: both ends, the probes, and the halving after a pass."""
    return 1 if n <= 1 else math.ceil(math.log2(n)) + 2 + probes(n)


def window_found(n: int) -> int:
    """A window of passing commits between failing ends at least this wide is always found: after the probes, no
    interval between tested commits is wider than n / 2**floor(log2(probes + 1)), rounded up."""
    return math.ceil((n - 1) / 2 ** int(math.log2(probes(n) + 1))) if n > 2 else 1


def next_step(n: int, known: Mapping[int, bool]) -> int | Answer:
    """The index to test next for a history of ``n`` commits given ``known`` results (index -> passed), or the
    answer when the known results settle it."""
    if n < 1:
        raise ValueError("an empty history has no commit to test")
    newest = n - 1
    if newest not in known:
        return newest
    if known[newest]:
        return Answer(newest, None)
    if n == 1:
        return Answer(None, None)
    if 0 not in known:
        return 0
    passing = [i for i, ok in known.items() if ok and i < newest]
    if not passing:
        return _probe(n, known)
    lo = max(passing)
    hi = min(i for i, ok in known.items() if not ok and i > lo)
    if hi - lo <= 1:
        return Answer(lo, hi)
    return (lo + hi) // 2


def _probe(n: int, known: Mapping[int, bool]) -> int | Answer:
    """Both ends fail and nothing passes yet: the middle of the widest untested interval, while probes are left."""
    tested = sorted(known)
    if len(tested) - 2 >= probes(n):
        return Answer(None, None)
    width, lo = max((b - a, a) for a, b in itertools.pairwise(tested))  # newest interval first on a tie
    if width <= 1:
        return Answer(None, None)
    return lo + width // 2


def search(n: int, passes: Callable[[int], bool]) -> tuple[Answer, tuple[int, ...]]:
    """The answer for a history of ``n`` commits and the indexes tested, in order (``passes(i)``: does commit
    ``i`` build)."""
    known: dict[int, bool] = {}
    order: list[int] = []
    while True:
        step = next_step(n, known)
        if isinstance(step, Answer):
            return step, tuple(order)
        known[step] = passes(step)
        order.append(step)


def kept(known: Mapping[int, bool]) -> set[int]:
    """The tested commits worth keeping a tree of: the newest known pass and the first known fail after it (the
    boundary so far); with no pass known, the oldest and the newest known fails (the two shown)."""
    passing = [i for i, ok in known.items() if ok]
    failing = [i for i, ok in known.items() if not ok]
    if passing:
        lo = max(passing)
        after = [i for i in failing if i > lo]
        return {lo, min(after)} if after else {lo}
    return {min(failing), max(failing)} if failing else set()
