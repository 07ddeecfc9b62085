"""What a build made: the value ``execute`` returns and ``report`` and the manifest read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class BuildResult:
    wheel: Path
    size: int
    sha256: str
    seconds: float
    timings: dict[str, float]
    ccache: dict[str, Any] = field(default_factory=dict)
    sccache: dict[str, Any] = field(default_factory=dict)  # hits, misses, errors, location (its storage backend)
    distcc: dict[str, int] = field(default_factory=dict)  # objects compiled remotely / locally
    ninja_no_work: bool = False
    log: Path | None = None
    repaired: dict[str, Any] = field(default_factory=dict)  # sizes before/after and the platform tag
    targets: dict[str, str | None] = field(default_factory=dict)  # --target name -> its output in the build dir
    bundled: dict[str, Any] = field(default_factory=dict)  # tritonbuild.wheel.bundle's report: copied/dropped/run paths
    republished: bool = False  # nothing changed since the last build: its wheel was published again
    compile_check: dict[str, Any] = field(default_factory=dict)  # tritonbuild.resolve.compilecheck's report
    strategy: str = "full"  # how it was made: republish, quick or full (tritonbuild.execute.strategies)
    reason: str = ""  # why that strategy: its reason code (tritonbuild.execute.strategies.Reason)
    time_report: dict[str, Any] = field(default_factory=dict)  # Ninja's critical path and slowest edges
    unity_learned: tuple[str, ...] = ()  # targets this build found clash when joined (tritonbuild.execute.unity)
