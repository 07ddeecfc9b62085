"""Publishing a wheel: into the output dir under its final name (never half-written), with its manifest and the
dir's ``SHA256SUMS`` (edge: files)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tritonbuild.errors import DiskProblem
from tritonbuild.fileutil import sha256_of, write_if_changed
from tritonbuild.plan import Plan, redact
from tritonbuild.result import BuildResult
from tritonbuild.wheel.provenance import provenance


def publish(wheel: Path, out_dir: Path) -> Path:
    """Copy the finished wheel into ``out_dir`` under a temporary name, then rename it into place; a full or
    read-only disk there is a DiskProblem naming the output dir."""
    final = out_dir / wheel.name
    tmp = out_dir / f".{wheel.name}.{os.getpid()}.partial"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(wheel, tmp)
        os.replace(tmp, final)
    except OSError as exc:
        raise _disk_problem(exc, out_dir) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return final


def manifest(plan: Plan, result: BuildResult) -> dict[str, Any]:
    """The build manifest: the wheel, its hash and size, timings, ccache figures, provenance and the plan. It is
    published next to the wheel: URL secrets in it are redacted (``tritonbuild.plan.redact``)."""
    out: dict[str, Any] = redact({
        "wheel": str(result.wheel), "size": result.size, "sha256": result.sha256, "seconds": result.seconds,
        "timings": result.timings, "ccache": result.ccache, "sccache": result.sccache, "distcc": result.distcc,
        "ninja_no_work": result.ninja_no_work,
        "republished": result.republished, "strategy": result.strategy, "where_time_went": result.time_report,
        "repair": result.repaired, "targets": result.targets, "bundled": result.bundled,
        "compile_check": result.compile_check, "unity_learned": list(result.unity_learned),
        "log": str(result.log), "plan_key": plan.key, "build_dir": plan.cmake.build_dir,
        "backends": list(plan.backend_names), "backends_tuple": list(plan.backends_tuple),
        "patches": [{"path": p.path, "sha256": p.sha256, "files": list(p.files)} for p in plan.source.patches],
        "provenance": provenance(plan), "plan": plan.to_dict(),
    })
    return out


def _wheel_sums(out: Path, sums: Path, known: Mapping[str, str]) -> list[tuple[Path, str]]:
    """sha256 of each wheel in ``out``: known ones as given, those older than SHA256SUMS from it (a wheel is
    renamed into place whole, so one not replaced since the file was written still has that hash)."""
    try:
        listed = dict(line.split("  ", 1)[::-1] for line in sums.read_text().splitlines() if "  " in line)
        written = sums.stat().st_mtime_ns
    except OSError:
        listed, written = {}, -1
    found = []
    for wheel in sorted(out.glob("*.whl")):
        digest = known.get(wheel.name)
        if digest is None and wheel.name in listed and wheel.stat().st_mtime_ns < written:
            digest = listed[wheel.name]
        found.append((wheel, digest or sha256_of(wheel)))
    return found


def write_outputs(plan: Plan, result: BuildResult) -> tuple[Path, Path]:
    """``<wheel>.manifest.json`` next to the wheel, and ``SHA256SUMS`` over every wheel in the output dir."""
    out = result.wheel.parent
    path = out / (result.wheel.name.removesuffix(".whl") + ".manifest.json")
    sums = out / "SHA256SUMS"
    try:
        write_if_changed(path, json.dumps(manifest(plan, result), indent=2, sort_keys=True) + "\n")
        lines = [f"{h}  {w.name}\n" for w, h in _wheel_sums(out, sums, {result.wheel.name: result.sha256})]
        write_if_changed(sums, "".join(lines))
    except OSError as exc:
        for p in (path, sums):  # write_if_changed's temp file
            with contextlib.suppress(OSError):
                p.with_name(f".{p.name}.tmp").unlink(missing_ok=True)
        raise _disk_problem(exc, out) from None
    return path, sums


def _disk_problem(exc: OSError, out_dir: Path) -> OSError | DiskProblem:
    """A full or read-only disk under the output dir as one paragraph naming it; any other OSError as it was."""
    if exc.errno not in (errno.ENOSPC, errno.EROFS, errno.EDQUOT):
        return exc
    try:
        free = f"{shutil.disk_usage(out_dir).free / 2**20:.0f} MiB free now"
    except OSError:
        free = "free space unknown"
    return DiskProblem(f"Publishing the wheel into the output dir {out_dir} failed: {os.strerror(exc.errno)} "
                       f"({free}). The build itself finished and is kept: free space there (or pass another --out) "
                       "and run the same command again: the build dir is kept, so it resumes; nothing half-written "
                       "was left in the output dir.")
