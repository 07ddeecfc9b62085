"""Publishing a wheel: into the output dir under its final name (never half-written), with its build provenance
(``<wheel>.provenance.json``, ``tritonbuild.wheel.attestation``), its manifest and the dir's ``SHA256SUMS`` over the
wheels and their provenance files (edge: files)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tritonbuild.errors import DiskProblem
from tritonbuild.plan import Plan
from tritonbuild.redact import redact
from tritonbuild.resolve.nvidia import missing_tools
from tritonbuild.result import BuildResult
from tritonbuild.system.diskspace import is_disk_problem, write_failed
from tritonbuild.system.fileutil import place, sha256_of, write_if_changed
from tritonbuild.wheel import attestation
from tritonbuild.wheel import sums as sum_lines
from tritonbuild.wheel.provenance import bundled_tools, provenance


def publish(wheel: Path, out_dir: Path) -> Path:
    """Put the finished wheel into ``out_dir`` (``fileutil.place``: a hard link on the build dir's file system, no
    180 MB copy, else a copy; renamed into place); a full or read-only disk there is a DiskProblem naming the
    output dir."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        return place(wheel, out_dir)
    except OSError as exc:
        raise _disk_problem(exc, out_dir) from None


def manifest(plan: Plan, result: BuildResult) -> dict[str, Any]:
    """The build manifest: the wheel, its hash and size, timings, ccache figures, provenance and the plan. It is
    published next to the wheel: URL secrets in it are redacted (``tritonbuild.redact.redact``)."""
    out: dict[str, Any] = redact({
        "wheel": str(result.wheel), "size": result.size, "sha256": result.sha256, "seconds": result.seconds,
        "timings": result.timings, "ccache": result.ccache, "sccache": result.sccache, "distcc": result.distcc,
        "ninja_no_work": result.ninja_no_work,
        "republished": result.republished, "strategy": result.strategy, "where_time_went": result.time_report,
        "repair": result.repaired, "targets": result.targets, "bundled": result.bundled,
        "compile_check": result.compile_check, "unity_learned": list(result.unity_learned),
        "missing_nvidia_tools": list(missing_tools(plan)),
        "log": str(result.log), "plan_key": plan.key, "build_dir": plan.cmake.build_dir,
        "backends": list(plan.backend_names), "backends_tuple": list(plan.backends_tuple),
        "patches": [{"path": p.path, "sha256": p.sha256, "files": list(p.files)} for p in plan.source.patches],
        "plugin_patches": {b.name: [{"path": p.path, "sha256": p.sha256, "files": list(p.files)} for p in b.patches]
                           for b in plan.backends if b.patches},
        "provenance": provenance(plan), "attestation": _attestation_entry(result.wheel), "plan": plan.to_dict(),
    })
    return out


def _attestation_entry(wheel: Path) -> dict[str, str] | None:
    """The provenance file published next to ``wheel`` (its name and sha256), or None when there is none."""
    path = wheel.with_name(attestation.file_name(wheel.name))
    try:
        return {"file": path.name, "sha256": sha256_of(path)} if path.is_file() else None
    except OSError:
        return None


def attestation_text(plan: Plan, result: BuildResult) -> str:
    """The in-toto statement (SLSA Provenance v1) of the published wheel, as written next to it: finishedOn is
    when the wheel was published (its file's time), startedOn that less the build's seconds."""
    finished = result.wheel.stat().st_mtime
    stmt = attestation.make(plan, result.wheel.name, result.sha256,
                            {**provenance(plan), "bundled_tools": bundled_tools(plan)}, finished=finished,
                            seconds=result.seconds)
    return attestation.to_json(stmt)


def _wheel_sums(out: Path, sums: Path, known: Mapping[str, str]) -> list[tuple[Path, str]]:
    """sha256 of each wheel in ``out`` and of each wheel's provenance file: known ones as given, those older than
    SHA256SUMS from it (a file is renamed into place whole, so one not replaced since the file was written still
    has that hash)."""
    try:
        with sums.open("rb") as f:
            data = f.read(sum_lines.MAX_BYTES + 1)
        lines = sum_lines.read(data) if len(data) <= sum_lines.MAX_BYTES else []
        written = sums.stat().st_mtime_ns
    except OSError:
        lines, written = [], -1
    listed = {} if isinstance(lines, str) else {os.fsdecode(line.name): line.digest for line in lines}
    found = []
    wheels = list(out.glob("*.whl"))
    for wheel in sorted(wheels + [p for w in wheels if (p := w.with_name(attestation.file_name(w.name))).is_file()]):
        digest = known.get(wheel.name)
        if digest is None and wheel.name in listed and wheel.stat().st_mtime_ns < written:
            digest = listed[wheel.name]
        found.append((wheel, digest or sha256_of(wheel)))
    return found


def _attests(path: Path, sha256: str) -> bool:
    """Whether the provenance file at ``path`` is a statement tritonbuild reads back (``attestation.read_statement``,
    the reader ``rebuild`` uses) about the wheel of this ``sha256``: anything else there is written anew."""
    try:
        with path.open("rb") as f:
            data = f.read(attestation.MAX_BYTES + 1)
        if len(data) > attestation.MAX_BYTES:
            return False
        return bool(attestation.read_statement(data)["subject"][0]["digest"]["sha256"] == sha256)
    except (OSError, *attestation.READ_ERRORS):
        return False


def write_outputs(plan: Plan, result: BuildResult) -> tuple[Path, Path]:
    """``<wheel>.provenance.json`` and ``<wheel>.manifest.json`` next to the wheel, and ``SHA256SUMS`` over every
    wheel and provenance file in the output dir."""
    out = result.wheel.parent
    path = out / (result.wheel.name.removesuffix(".whl") + ".manifest.json")
    attest = out / attestation.file_name(result.wheel.name)
    sums = out / "SHA256SUMS"
    try:
        if not (result.republished and _attests(attest, result.sha256)):  # a republished wheel keeps its own
            write_if_changed(attest, attestation_text(plan, result))
        write_if_changed(path, json.dumps(manifest(plan, result), indent=2, sort_keys=True) + "\n")
        lines = [sum_lines.line(w.name, h) for w, h in _wheel_sums(out, sums, {result.wheel.name: result.sha256})]
        write_if_changed(sums, "".join(lines))
    except OSError as exc:
        raise _disk_problem(exc, out) from None
    return path, sums


def _disk_problem(exc: OSError, out_dir: Path) -> OSError | DiskProblem:
    """A full or read-only disk under the output dir as one paragraph naming the file written, its file system
    and free space (``tritonbuild.system.diskspace``); any other OSError as it was."""
    if not is_disk_problem(exc):
        return exc
    return DiskProblem(f"Publishing the wheel into the output dir {out_dir} failed. {write_failed(exc, out_dir)} "
                       "The build itself finished and is kept: free space there (or pass another --out) "
                       "and run the same command again: the build dir is kept, so it resumes; nothing half-written "
                       "was left in the output dir.")
