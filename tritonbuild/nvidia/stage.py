"""Put the plan's NVIDIA files into the build dir for the install step (edge: may download, copies files).

``<build dir>/tritonbuild-nvidia/`` mirrors the wheel's ``triton/backends/nvidia/`` (``include/``,
``lib/cupti/``); the injected CMake installs it, compiles 2024 trees against its ``include/`` and, when no
toolkit dir has CUPTI and CUDA headers together, proton too. Unchanged files are left alone (no-op builds stay
no-ops) and files no longer planned are removed.
"""

from __future__ import annotations

import platform
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tritonbuild.nvidia import pypi
from tritonbuild.nvidia.discover import closure, lib_files
from tritonbuild.nvidia.probe import describe, host_machine
from tritonbuild.plan import NvidiaPart, Plan
from tritonbuild.resolve.nvidia import refuse_inputs
from tritonbuild.resolve.nvidia_parts import WheelRef
from tritonbuild.settings.model import Settings
from tritonbuild.system import http
from tritonbuild.system.diskspace import is_disk_problem

STAGE = "tritonbuild-nvidia"


def http_limits(settings: Settings) -> http.Limits:
    """The limits a plan's settings give its downloads (``http`` reads no setting: its callers give it these)."""
    return http.Limits(retries=settings.http_retries, timeout=settings.http_timeout, deadline=settings.http_deadline,
                       min_rate=settings.http_min_rate, max_bytes=settings.http_max_bytes)


def stage_dir(plan: Plan) -> Path:
    return Path(plan.cmake.build_dir) / STAGE


def _files(part: NvidiaPart) -> tuple[tuple[str, str], ...]:
    """The part's files; those of a wheel fetched only now are judged here as the plan judges the others."""
    if part.files:
        return part.files
    if part.roots:
        files, _, refused = closure(part.roots, part.dirs)
        refuse_inputs(tuple(replace(f, given_by=part.found_by) for f in refused), None, ("header",))
        return files
    files = lib_files(part.dirs)
    refuse_inputs(tuple(describe(Path(d) / name, "lib", part.found_by) for d, name in files), host_machine(),
                  ("lib",))
    return files


def _sync(root: Path, wanted: dict[str, Path]) -> None:
    for rel, src in sorted(wanted.items()):
        dest = root / rel
        st = src.stat()
        if dest.is_file() and dest.stat().st_size == st.st_size and dest.stat().st_mtime_ns == st.st_mtime_ns:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(src, dest)
        except OSError as exc:
            if is_disk_problem(exc):  # named by the file written, not the toolkit's file read
                raise OSError(exc.errno, exc.strerror, str(dest)) from None
            raise
    for path in sorted(root.rglob("*"), reverse=True):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and rel not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _tools(part: NvidiaPart) -> tuple[tuple[str, str], ...]:
    """A tool of NVIDIA's wheel (``bin``): its file, judged now it is unpacked as the plan judges the host's
    tools (an ELF executable this host runs). The injected CMake installs it from the cache
    (TRITONBUILD_NVIDIA_TOOLS); it is not staged."""
    refuse_inputs(tuple(describe(Path(d) / name, "tool", part.found_by) for d, name in part.files), host_machine(),
                  ("tool",))
    return part.files


def stage(plan: Plan, log: Callable[[str], None]) -> dict[str, int]:
    """Fetch the wheels the plan still needs (from --wheelhouse when it holds them), then mirror its NVIDIA files
    into the build dir; returns the number of files per part."""
    root = stage_dir(plan)
    if not plan.nvidia:
        shutil.rmtree(root, ignore_errors=True)
        return {}
    settings = Settings.of_report(plan.settings)
    for spec in dict.fromkeys(w for part in plan.nvidia for w in part.wheels):
        project, _, version = spec.partition("==")
        pypi.provide(WheelRef(project, version, ""), Path(plan.cache_root), index=settings.pypi_index,
                     machine=platform.machine(), offline=plan.toolchain.offline, log=log,
                     wheelhouse=settings.wheelhouse, limits=http_limits(settings))
    wanted: dict[str, Path] = {}
    counts: dict[str, int] = {}
    for part in plan.nvidia:
        if part.dest == "bin":
            counts[part.name] = len(_tools(part))
            continue
        files = _files(part)
        counts[part.name] = len(files)
        for directory, rel in files:
            wanted.setdefault(f"{part.dest}/{rel}", Path(directory) / rel)
    root.mkdir(parents=True, exist_ok=True)
    _sync(root, wanted)
    return counts
