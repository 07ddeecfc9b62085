"""The output dir, checked before any work (edge: creates and removes a probe file).

``build --out DIR`` (or the recipe's ``out_dir``) is where wheels are published. It is refused up front, before the
LLVM is provisioned or a build dir locked, when it is a file, cannot be created or written, or lies where
tritonbuild or the build itself writes: the cache root's build dirs and LLVM cache (``clean`` would delete the
wheels, and ``<build dir>/last-wheel`` is the republished wheel itself), or the source's and plugins' package dirs
(a wheel inside ``python/triton`` would be packaged into the next wheel). Inside the source tree otherwise
(``dist/``) is fine. A dir that did not exist is created to check it, and removed again (with any parents made
for it): a build that fails leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.plan import Plan

CACHE_DIRS = ("build", "llvm", "patched", "compat", "sources", "buildenv", "nvidia", "apicheck")


def _forbidden(plan: Plan) -> list[tuple[Path, str]]:
    cache = Path(plan.cache_root)
    places = [(cache / "build", "tritonbuild's build dirs (`clean` removes them)"),
              (Path(plan.cmake.build_dir), "this plan's build dir"),
              (cache / "llvm", "tritonbuild's LLVM cache")]
    # the rest of what tritonbuild keeps there (a reviewer put wheels among llvm compat's trees): its own dirs only,
    # so a cache root that is also a user's project dir (--cache-dir .) still takes ./dist
    places += [(cache / name, f"tritonbuild's cache ({name}/)")
               for name in CACHE_DIRS if name not in ("build", "llvm")]
    places.append((Path(plan.source.root) / "python" / "triton",
                   "the source's Python package (it goes into the wheel)"))
    places += [(Path(b.path) / "backend", f"backend {b.name}'s package dir (it goes into the wheel)")
               for b in plan.backends]
    return places


def _inside(path: Path, place: Path) -> bool:
    return path == place or path.is_relative_to(place) or path.is_relative_to(place.resolve())


def where_not(plan: Plan, out: Path) -> str | None:
    """Why ``out`` (resolved) must not hold wheels, or None."""
    if out in (Path(plan.cache_root), Path(plan.cache_root).resolve()):
        return "it is tritonbuild's cache root itself"
    for place, what in _forbidden(plan):
        if _inside(out, place):
            return f"it is inside {what}, {place}"
    return None


def _probe(out: Path) -> None:
    """Create ``out`` if needed and a temp file in it; remove what was made here. Raises OSError."""
    made = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".tritonbuild-probe-", dir=out)
        os.close(fd)
        Path(name).unlink()
    finally:
        for p in made:  # deepest first
            with contextlib.suppress(OSError):
                p.rmdir()


def check(plans: Sequence[Plan]) -> None:
    """Refuse an output dir the plans cannot publish into, before any work (UserError, exit 2)."""
    for plan in plans:
        given = Path(plan.wheel.out_dir)
        out = given.resolve()
        why = where_not(plan, out)
        try:
            if why is None and (out.exists() and not out.is_dir()):
                why = "it is a file, not a directory"
            if why is None:
                _probe(out)
        except OSError as exc:  # a parent this user may not search is EACCES already in exists()
            why = f"it cannot be written ({exc.strerror or exc})"
        if why:
            raise UserError(f"The output dir {given} cannot take the wheel: {why}. Nothing was built; pass --out "
                            "(or the recipe's out_dir) with a writable directory outside tritonbuild's cache, such "
                            "as ./dist.")
