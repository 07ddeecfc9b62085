"""Rebuild the wheel after an edit without scikit-build-core's configure, fresh install and full re-zip (edge:
the build dir).

When the plan is the one the last wheel was built from (``republish.last``), ``build`` runs ninja, installs the
tritonbuild component with ``cmake --install`` into a prefix kept in the build dir (CMake copies only files whose
time changed; the bundle step runs as in every install) and writes the wheel from that prefix
(``tritonbuild.wheel.writer``): a member whose bytes are the last wheel's (same size and CRC-32) is copied still
compressed, the others are deflated at the plan's zip level, and the dist-info comes from the last wheel with a
new RECORD. On d8da7c998 scikit-build-core's configure, install and packaging were 2.5 + 1.9 + 5.5 s of a 33 s
one-edit rebuild. Builds that repair with auditwheel or must be reproducible (fixed zip metadata) take
scikit-build-core's path.
"""

from __future__ import annotations

import json
from pathlib import Path

from tritonbuild.execute.staging import cache_value, cmake_build_dir
from tritonbuild.plan import Plan
from tritonbuild.resolve.toolchain import ninja_args

PREFIX = "quick-prefix"


def usable(plan: Plan) -> bool:
    return plan.repair is None and not plan.reproducible


def prefix_of(plan: Plan) -> Path:
    return Path(plan.cmake.build_dir) / PREFIX


def sums_file(plan: Plan) -> Path:
    """The CRC-32 of each prefix file under its stat key (``writer.write_wheel``'s ``sums_file``)."""
    return Path(plan.cmake.build_dir) / f"{PREFIX}.sums.json"


def commands(plan: Plan) -> list[list[str]] | None:
    """ninja for the plan's targets, then ``cmake --install`` of its component into the kept prefix; None when
    the build dir does not record its ninja and cmake (never configured)."""
    build = cmake_build_dir(plan)
    ninja, cmake = cache_value(build, "CMAKE_MAKE_PROGRAM"), cache_value(build, "CMAKE_COMMAND")
    if not ninja or not cmake:
        return None
    install = [cmake, "--install", str(build), "--component", plan.cmake.install_component,
               "--prefix", str(prefix_of(plan))]
    return [[ninja, "-C", str(build), *ninja_args(plan.toolchain), *plan.cmake.build_targets],
            install + (["--strip"] if plan.strip else [])]


def _bundled(plan: Plan) -> list[str]:
    try:
        report = json.loads((Path(plan.cmake.build_dir) / "bundle.json").read_text())
    except (OSError, ValueError):
        return []
    return [str(b["name"]) for b in report.get("bundled", [])]


def _manifest(plan: Plan) -> list[Path]:
    manifest = cmake_build_dir(plan) / f"install_manifest_{plan.cmake.install_component}.txt"
    try:
        return [Path(line) for line in manifest.read_text().splitlines() if line.strip()]
    except OSError:
        return []


def forget_bundled(plan: Plan) -> None:
    """Remove what the last bundle step copied into the kept prefix's ``triton/_C`` (the files there that no
    install rule put there), so that this install's bundle step copies and reports them again: a library already
    in the tree would count as the tree's own and be left out of the wheel."""
    lib_dir = prefix_of(plan) / "triton" / "_C"
    installed = set(_manifest(plan))
    for path in lib_dir.iterdir() if lib_dir.is_dir() else ():
        if path.is_file() and path not in installed:
            path.unlink()


def installed_files(plan: Plan) -> list[Path]:
    """What the last install put in the prefix: CMake's manifest, and the libraries the bundle step copied."""
    prefix = prefix_of(plan)
    files = _manifest(plan)
    files += [prefix / "triton" / "_C" / name for name in _bundled(plan)]
    return sorted({f for f in files if f.is_file()})
