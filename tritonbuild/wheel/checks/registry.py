"""The registry of wheel checks (edge): every check in the order its findings are shown, and where it runs: at
build time (before the wheel is published; a failure keeps it out of the output dir) and in ``verify``.

Adding a check is one module of ``tritonbuild.wheel.checks`` and one line here.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from tritonbuild.wheel.checks import (
    backends,
    elf,
    importing,
    platform_tag,
    provenance,
    provenance_file,
    record,
    reproducible,
    sbom,
)
from tritonbuild.wheel.checks import compile as corpus
from tritonbuild.wheel.checks.base import BuildSide, Check, Context, Finding

Where = Literal["build", "verify"]
BOTH: frozenset[Where] = frozenset({"build", "verify"})
VERIFY: frozenset[Where] = frozenset({"verify"})

REGISTRY: tuple[tuple[Check, frozenset[Where]], ...] = (
    (record.Record(), BOTH),
    (provenance.WellFormed(), VERIFY),
    (provenance_file.ProvenanceFile(), VERIFY),
    (backends.Backends(), VERIFY),
    (reproducible.Reproducible(), VERIFY),
    (provenance.Patches(), VERIFY),
    (sbom.Sbom(), VERIFY),
    (elf.Libraries(), BOTH),
    (platform_tag.Platform(), VERIFY),
    (importing.Import(), BOTH),
    (corpus.Corpus(), BOTH),  # in verify with --compile only (Corpus.applies)
)


def checks(where: Where) -> list[Check]:
    """The checks that run ``where``, in order."""
    return [check for check, places in REGISTRY if where in places]


def context(wheel: Path, zf: zipfile.ZipFile, tmp: Path, *, python: str | None = None,
            compile_timeout: int | None = None, build: BuildSide | None = None,
            wheelhouse: Path | None = None) -> Context:
    """What the checks of the open wheel ``zf`` read; its provenance and entry points are read here, once."""
    info, problem = provenance.read(zf)
    return Context(wheel, zf, tmp, info, problem, backends.entry_point_backends(zf), python, compile_timeout, build,
                   wheelhouse)


def runs_wheel_code(check: Check) -> bool:
    """Whether ``check`` executes the wheel's own code (imports it, compiles with it): declared by the check's
    ``runs_wheel_code = True``."""
    return getattr(check, "runs_wheel_code", False) is True


def vouches(check: Check) -> bool:
    """Whether a failure of ``check`` says the archive is not what it claims (a member that does not match its
    RECORD hash): declared by the check's ``integrity = True``. No code of such a wheel is run."""
    return getattr(check, "integrity", False) is True


def run(checks: Sequence[Check], ctx: Context, *, stop_at_fail: bool = False) -> list[Finding]:
    """The findings of each check that applies, in order; ``stop_at_fail``: none after a check that failed (a
    build does not compile kernels with a wheel that does not import). After an integrity check failed, a check
    that runs the wheel's code is not run: its finding is a ``skip`` naming the failed check."""
    out: list[Finding] = []
    failed_integrity: list[str] = []
    for check in checks:
        if not check.applies(ctx):
            continue
        if failed_integrity and runs_wheel_code(check):
            out.append(Finding(check.name, "skip", f"not run: the wheel failed {' and '.join(failed_integrity)} "
                               "(its code is not what its RECORD vouches for)"))
            continue
        found = check.run(ctx)
        out += found
        if vouches(check) and any(f.status == "fail" for f in found):
            failed_integrity.append(check.name)
        if stop_at_fail and any(f.status == "fail" for f in found):
            break
    return out


def merged(first: list[Finding], then: list[Finding], *, stop_at_fail: bool) -> list[Finding]:
    """The findings of checks run apart (a quick rebuild runs those that run code, which come last in the
    registry, from its install prefix while the wheel is written): in the registry's order, cut after the first
    failure when ``stop_at_fail``."""
    found = first + then
    failed = next((i for i, f in enumerate(found) if f.status == "fail"), None)
    return found[:failed + 1] if stop_at_fail and failed is not None else found
