"""The registry of wheel checks (edge): every check in the order its findings are shown, and where it runs: at
build time (before the wheel is published; a failure keeps it out of the output dir) and in ``verify``.

Adding a check is one module of ``tritonbuild.wheel.checks`` and one line here.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from tritonbuild.wheel.checks import backends, elf, importing, provenance, record, reproducible
from tritonbuild.wheel.checks import compile as corpus
from tritonbuild.wheel.checks.base import BuildSide, Check, Context, Finding

Where = Literal["build", "verify"]
BOTH: frozenset[Where] = frozenset({"build", "verify"})
VERIFY: frozenset[Where] = frozenset({"verify"})

REGISTRY: tuple[tuple[Check, frozenset[Where]], ...] = (
    (record.Record(), BOTH),
    (provenance.WellFormed(), VERIFY),
    (backends.Backends(), VERIFY),
    (reproducible.Reproducible(), VERIFY),
    (provenance.Patches(), VERIFY),
    (elf.Libraries(), BOTH),
    (importing.Import(), BOTH),
    (corpus.Corpus(), BOTH),  # in verify with --compile only (Corpus.applies)
)


def checks(where: Where) -> list[Check]:
    """The checks that run ``where``, in order."""
    return [check for check, places in REGISTRY if where in places]


def context(wheel: Path, zf: zipfile.ZipFile, tmp: Path, *, python: str | None = None,
            compile_timeout: int | None = None, build: BuildSide | None = None) -> Context:
    """What the checks of the open wheel ``zf`` read; its provenance and entry points are read here, once."""
    info, problem = provenance.read(zf)
    return Context(wheel, zf, tmp, info, problem, backends.entry_point_backends(zf), python, compile_timeout, build)


def run(checks: Sequence[Check], ctx: Context, *, stop_at_fail: bool = False) -> list[Finding]:
    """The findings of each check that applies, in order; ``stop_at_fail``: none after a check that failed (a
    build does not compile kernels with a wheel that does not import)."""
    out: list[Finding] = []
    for check in checks:
        if not check.applies(ctx):
            continue
        found = check.run(ctx)
        out += found
        if stop_at_fail and any(f.status == "fail" for f in found):
            break
    return out
