"""Unity builds that learn which targets clash when joined (edge: two small files).

Under ``--unity-build N`` a target whose files clash when joined (two file-local helpers of one name, MLIR's
generated ``impl::`` pass bases of two files, CUDA's and HIP's vector types) fails to compile. Rather than make
every user find those targets, ``build`` runs Ninja with ``-k 0`` so every unit that can compile does, reads the
failed unity objects from its output, writes their targets to ``unity-learned.txt`` in the build dir, and runs
again: the injected CMake reads that file (a configure dependency) and compiles those targets file by file.

The list is also kept per tree commit in the cache root (``<cache>/unity/<commit>.txt``), so another build dir of
the same commit (another checkout, another Python, a CI runner sharing the cache) starts from it and never pays
for the failed round. Learning is deterministic, so a build that learned and one that started from the list end
with the same exclusions and the same objects. Delete the file to learn afresh.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from tritonbuild.plan import Plan
from tritonbuild.system.fileutil import write_if_changed

LEARNED = "unity-learned.txt"  # in the build dir: the injected CMake reads it (cmake/TritonBuildInject.cmake)
ROUNDS = 3  # failed rounds a build may learn from before the failure is the user's
_HEADER = ("# Targets tritonbuild compiles file by file under --unity-build: their files failed to compile "
           "joined.\n# One per line; delete this file to learn afresh.\n")
# ninja: "FAILED: [code=1] lib/X/CMakeFiles/Target.dir/Unity/unity_0_cxx.cxx.o" (the [code=] from ninja 1.12)
_FAILED = re.compile(r"FAILED: (?:\[code=\d+\] )?\S*?CMakeFiles/([^/\s]+)\.dir/Unity/unity_\d+_\w+\.\w+\.o\b")


def failed_targets(lines: Iterable[str]) -> tuple[str, ...]:
    """The targets whose unity units failed to compile, from a build's output lines (pure)."""
    return tuple(sorted({m.group(1) for line in lines if (m := _FAILED.search(line))}))


def parse(text: str) -> tuple[str, ...]:
    return tuple(sorted({t for line in text.splitlines() if (t := line.strip()) and not t.startswith("#")}))


def shared_file(plan: Plan) -> Path:
    """The cache root's list for this tree: by commit, or by the checkout's path when git knows no commit."""
    key = plan.source.commit or "tree-" + hashlib.sha256(plan.source.root.encode()).hexdigest()[:12]
    return Path(plan.cache_root) / "unity" / f"{key}.txt"


def _read(path: Path) -> tuple[str, ...]:
    try:
        return parse(path.read_text())
    except OSError:
        return ()


def _write(path: Path, targets: Iterable[str]) -> None:
    """Atomically, unchanged text left alone (CMake re-runs when it changes); builds of one commit in other build
    dirs may write the shared list at once, so each writes its own temporary file."""
    write_if_changed(path, _HEADER + "".join(f"{t}\n" for t in sorted(set(targets))))


def seed(plan: Plan) -> tuple[str, ...]:
    """Before a build: the build dir's list holds what this tree's commit has learned anywhere (it always exists
    under --unity-build: CMake depends on it). Returns the learned targets."""
    if not plan.toolchain.unity_batch:
        return ()
    here = Path(plan.cmake.build_dir) / LEARNED
    known = tuple(sorted({*_read(here), *_read(shared_file(plan))}))
    _write(here, known)
    return known


def learn(plan: Plan, lines: Iterable[str]) -> tuple[str, ...]:
    """After a failed round: the targets it newly learned (written to both lists), or () when the failure was
    not a clash this lever caused (nothing new: the failure is reported as it is)."""
    if not plan.toolchain.unity_batch:
        return ()
    here = Path(plan.cmake.build_dir) / LEARNED
    known = set(_read(here)) | set(plan.toolchain.unity_exclude)
    new = tuple(t for t in failed_targets(lines) if t not in known)
    if new:
        _write(here, {*_read(here), *new})
        _write(shared_file(plan), {*_read(shared_file(plan)), *_read(here)})
    return new
