"""What every wheel check shares (edge: reads the wheel): the ``Check`` protocol, the ``Finding`` a check gives, the
``Context`` it reads, and the zip helpers more than one check (and ``compare``) needs.

A check is a name, ``applies(ctx)`` and ``run(ctx) -> list[Finding]``; one that executes the wheel's code says
``runs_wheel_code = True`` and one whose failure means the archive is not what it claims says ``integrity = True``
(the registry runs no code of a wheel that failed such a check). It never raises for what it finds: the build
turns a ``fail`` finding into an error (``wheel.acceptance.refuse``), ``verify`` prints every finding.
"""

from __future__ import annotations

import configparser
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.wheel import zipguard

Status = Literal["ok", "fail", "skip", "note"]
BUILD_INFO = "triton/_build_info.json"


@dataclass(frozen=True)
class Finding:
    """One result of a check: ``ok``, ``fail``, ``skip`` (it could not run here: the reason) or ``note``
    (information). ``message`` and ``tail`` are what a build's error says when that differs from ``text`` (empty:
    the refusal's general wording); ``report`` is what the check hands the build's manifest."""

    check: str
    status: Status
    text: str
    message: str = ""
    tail: str = ""
    report: dict[str, Any] | None = field(default=None, compare=False)


def status(ok: bool) -> Status:
    return "ok" if ok else "fail"


@dataclass(frozen=True)
class Provenance:
    """What the checks use of ``triton/_build_info.json``, type-checked."""

    backends: tuple[str, ...]
    reproducible: bool
    system_libs: tuple[str, ...]
    llvm_prefix: str | None
    patches: tuple[tuple[str, str], ...] = ()  # (path as given, sha256) of each patch applied to the source
    plugin_patches: tuple[tuple[str, str, str], ...] = ()  # (plugin, path as given, sha256): --patch NAME=FILE


@dataclass(frozen=True)
class BuildSide:
    """What only a build has: its plan, the wheel's files (unpacked, or a quick rebuild's install prefix with the
    new dist-info in ``extra_paths``), its log and where it reports."""

    plan: Plan
    root: Path
    log: IO[str]
    reporter: Reporter
    extra_paths: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Context:
    """What a check reads: the wheel (open, read as hostile), a scratch dir of its own, the provenance and the
    ``triton.backends`` entry points (each read once, or what is wrong with them), the interpreter of ``verify``'s
    import (None: no import), ``verify --compile``'s time limit per kernel, and at build time the build's side."""

    wheel: Path
    zf: zipfile.ZipFile
    tmp: Path
    info: Provenance | None
    info_problem: str | None  # why _build_info.json could not be read (None: it was, or there is none)
    eps: list[str] | str  # the entry points' backend names, or what is wrong with entry_points.txt
    python: str | None = None
    compile_timeout: int | None = None
    build: BuildSide | None = None
    wheelhouse: Path | None = None  # verify --wheelhouse: where the import's venv finds the wheel's Requires-Dist

    @property
    def expected_backends(self) -> list[str]:
        """The backends an import should discover: the provenance's, else the entry points'."""
        if self.info and self.info.backends:
            return list(self.info.backends)
        return self.eps if isinstance(self.eps, list) else []


class Check(Protocol):
    """One check of a wheel: one module of ``tritonbuild.wheel.checks``, one line of its registry."""

    @property
    def name(self) -> str: ...

    def applies(self, ctx: Context) -> bool: ...

    def run(self, ctx: Context) -> list[Finding]: ...


def dist_info(zf: zipfile.ZipFile, leaf: str) -> str | None:
    """The name of the wheel's ``<name>.dist-info/<leaf>`` member, or None when it has none."""
    return next((n for n in zf.namelist() if n.count("/") == 1 and n.split("/")[0].endswith(".dist-info")
                 and n.endswith("/" + leaf)), None)


def entry_points(zf: zipfile.ZipFile) -> dict[str, dict[str, str]]:
    """The groups of the wheel's entry_points.txt (``{}`` when it has none); ``BadWheel`` when that file is not
    UTF-8 or not an INI file."""
    ep_name = dist_info(zf, "entry_points.txt")
    if not ep_name:
        return {}
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(zipguard.read_text(zf, ep_name))
    except configparser.Error as exc:
        raise zipguard.BadWheel(f"{ep_name} is not an INI file ({' '.join(str(exc).split())})") from None
    return {group: dict(parser[group]) for group in parser.sections()}
