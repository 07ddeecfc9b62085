"""Follow a build's output: Ninja's ``[n/m]`` status, phases, and the error lines worth showing (base layer: the
build, the develop configure, the canary and LLVM's source build all feed one)."""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

_NINJA = re.compile(r"^\[(\d+)/(\d+)\]\s*(.*)$")
_ERROR = re.compile(r"(error:|error\b.*:|FAILED:|fatal error|CMake Error|undefined reference|ninja: build stopped)",
                    re.I)


@dataclass
class Tracker:
    """Fed one output line at a time; knows the phase, the progress and the recent error context. Phases are timed
    by ``clock`` (seconds; the monotonic clock unless a test gives its own)."""

    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)
    phase: str = "configure"
    done: int = 0
    total: int = 0
    phase_start: float = field(init=False)
    timings: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    ninja_no_work: bool = False
    configured: bool = False
    error_block: list[str] = field(default_factory=list)
    _block_open: bool = False
    _last_status: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = self.phase_start = self._last_status = self.clock()

    def _enter(self, phase: str) -> None:
        now = self.clock()
        if phase == "link":
            # the time since the previous status line was spent linking
            self.timings["link"] = self.timings.get("link", 0.0) + now - self._last_status
            self.timings[self.phase] = self.timings.get(self.phase, 0.0) + self._last_status - self.phase_start
            self.phase, self.phase_start, self._last_status = "link", now, now
            return
        self._last_status = now
        if phase == self.phase:
            return
        self.timings[self.phase] = self.timings.get(self.phase, 0.0) + now - self.phase_start
        self.phase, self.phase_start = phase, now

    def feed(self, line: str) -> None:
        line = line.rstrip("\n")
        self.recent.append(line)
        if "-- Configuring done" in line or "-- Build files have been written" in line:
            self.configured = True
        if "ninja: no work to do" in line:
            self.ninja_no_work = True
        m = _NINJA.match(line)
        if m:
            # Ninja prints an edge's status when it finishes: a link line closes the link phase.
            self.done, self.total = int(m.group(1)), int(m.group(2))
            self._enter("link" if m.group(3).startswith("Linking") else "compile")
        elif self.phase in ("compile", "link") and ("Install" in line or "-- Installing" in line
                                                     or "*** Installing" in line):
            self._enter("install")
        elif "*** Making wheel" in line or ("Created " in line and line.endswith(".whl")):
            self._enter("package")
        elif self.phase == "configure" and ("*** Building project" in line or "ninja: no work to do" in line
                                            or line.startswith("ninja: Entering directory")):
            self._enter("compile")
        if self._block_open:
            self.error_block.append(line)
            self._block_open = len(self.error_block) < 30
        if _ERROR.search(line):
            self.errors.append(line)
            if not self.error_block:
                self.error_block = [*list(self.recent)[-4:-1], line]
                self._block_open = True

    def new_round(self) -> None:
        """The commands run again (after a round tritonbuild learned from): only the new round's errors count."""
        self.errors.clear()
        self.error_block = []
        self._block_open = False

    def finish(self) -> dict[str, float]:
        self._enter("done")
        return {k: round(v, 2) for k, v in self.timings.items() if k != "done"}

    def failure_tail(self, limit: int = 25) -> str:
        """The error lines and what surrounds the first compiler error, for a failure report."""
        if self.error_block:
            return "\n".join(self.error_block[:limit])
        return "\n".join(list(self.recent)[-limit:])
