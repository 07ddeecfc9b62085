"""``tritonbuild verify WHEEL`` (edge): the checks the registry (``tritonbuild.wheel.checks.registry``) runs in
``verify``: RECORD hashes, build info (``triton/_build_info.json``), the provenance file beside the wheel
(``<wheel>.provenance.json``: its subject is this wheel) and SHA256SUMS, backends against build info and entry
points, the SBOM, the ELF libraries' needs, an import in a fresh venv with the build's LLVM hidden, and with
``--compile`` the kernel corpus.

The wheel is anyone's, so it is read through ``zipguard`` (names, sizes and ratios checked before reading,
members streamed under caps, extracted only into a temp dir): a malformed or hostile wheel is a failed check,
never a traceback. Each finding is ``ok``, ``fail``, ``skip`` (it could not run here, with the reason) or ``note``
(information: a wheel tritonbuild did not build has no provenance to hold it to).
"""

from __future__ import annotations

import sys
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.gather import pythons
from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks import registry
from tritonbuild.wheel.checks.base import Finding, Provenance

STRUCTURAL = ("RECORD", "provenance")  # the checks of the wheel's structure alone


@dataclass(frozen=True)
class Structure:
    """What the structural checks found: the findings, the provenance and the ``triton.backends`` entry points (or
    what is wrong with entry_points.txt)."""

    findings: list[Finding]
    info: Provenance | None
    eps: list[str] | str

    @property
    def problems(self) -> list[str]:
        """The failed checks, each ``name: detail``; empty for a well-formed wheel."""
        failed = [f"{f.check}: {f.text}" for f in self.findings if f.status == "fail"]
        return failed + ([f"entry points: {self.eps}"] if isinstance(self.eps, str) else [])


def structure(wheel: Path, zf: zipfile.ZipFile) -> Structure:
    """The checks of a wheel's structure that ``verify`` and ``compare`` both run: its file name (``BadWheel``
    when it does not parse), RECORD (parsed, every member listed with a matching hash), the types of
    ``triton/_build_info.json`` and that entry_points.txt parses."""
    wheel_tags(wheel)
    ctx = registry.context(wheel, zf, Path(tempfile.gettempdir()))  # these two checks write nothing
    found = registry.run([c for c in registry.checks("verify") if c.name in STRUCTURAL], ctx)
    return Structure(found, ctx.info, ctx.eps)


def verify(wheel: Path, *, python: str | None = None, import_test: bool = True,
           compile_timeout: int | None = None, wheelhouse: Path | None = None) -> list[Finding]:
    """Every check of the wheel ``verify`` runs; ``compile_timeout`` (seconds per kernel) also runs the compile
    check; ``wheelhouse``: a dir of wheels the import's venv installs the wheel's Requires-Dist from (no index). A
    wheel that is not a safe zip gets one failed ``wheel`` finding and nothing else (it is not installed)."""
    with tempfile.TemporaryDirectory(prefix="tritonbuild-verify-") as tmp:
        try:
            with zipguard.open_wheel(wheel) as zf:
                wheel_tags(wheel)
                ctx = registry.context(wheel, zf, Path(tmp), python=(python or sys.executable) if import_test
                                       else None, compile_timeout=compile_timeout, wheelhouse=wheelhouse)
                return registry.run(registry.checks("verify"), ctx)
        except zipguard.BadWheel as exc:
            return [Finding("wheel", "fail", f"not a readable wheel: {exc}")]


def wheel_tags(wheel: Path) -> tuple[str, str]:
    """The Python and ABI tags of the wheel's file name (name-version[-build]-python-abi-platform.whl);
    ``BadWheel`` when the name does not parse."""
    parts = wheel.name.removesuffix(".whl").split("-")
    if not wheel.name.endswith(".whl") or len(parts) not in (5, 6) or not all(parts):
        raise zipguard.BadWheel(f"the file name {wheel.name!r} is not a wheel's "
                                "(name-version[-build]-python-abi-platform.whl)")
    py, abi = parts[-3], parts[-2]
    if abi == "abi3" and not (py.startswith("cp3") and (py[3:].isascii() and py[3:].isdigit())):
        raise zipguard.BadWheel(f"the file name {wheel.name!r} pairs abi3 with {py!r}, not a CPython tag (cp312)")
    return py, abi


def interpreter_for(wheel: Path, given: Sequence[str], env: Mapping[str, str]) -> str:
    """The interpreter that imports ``wheel``: for an interpreter-specific wheel (cp312-cp312, cp313-cp313t) the
    given one of that ABI, else this one when it fits, else one of that version found as ``--python cp312``
    would find it; for a cp312-abi3 wheel the same with any CPython from 3.12 on."""
    py, abi = wheel_tags(wheel)
    if abi == "none":
        return given[0] if given else sys.executable

    def fits(python: str) -> bool:
        found = pythons.probe(python, require_headers=False)
        if abi == "abi3":
            return not found.free_threaded and found.tag.startswith("cp3") and int(found.tag[3:]) >= int(py[3:])
        return found.abi == abi

    for python in (*(pythons.find(g, env) for g in given), sys.executable):
        if fits(python):
            return python
    return pythons.find(py if abi == "abi3" else abi, env)
