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

import contextlib
import json
import os
import re
from pathlib import Path

from tritonbuild.execute.staging import cache_value, cmake_build_dir
from tritonbuild.plan import Plan
from tritonbuild.resolve.toolchain import ninja_args
from tritonbuild.system.fileutil import replace_with

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


# --- what cmake --install takes for up to date and is not ------------------------------------------------------------
# CMake copies a file's time in whole seconds and takes a file for up to date when its source's time is within a
# second of the copy's: a source saved again within the second it was last copied (a script's two edits, an
# editor's save then a fix) stays stale in the prefix, and so in the wheel (review 49). The sources of
# install(DIRECTORY) rules (the Python packages, the backends' dirs: what a developer edits) whose size or time
# changed since they were last made sure of are compared with their copies, and copied again when they differ.

SOURCES = f"{PREFIX}.sources.json"  # source path -> [size, mtime_ns] when its copy was last made sure of
_SOURCES_LIMIT = 16 << 20
_DIR_RULE = re.compile(r'file\(INSTALL DESTINATION "\$\{CMAKE_INSTALL_PREFIX\}/?([^"]*)" TYPE DIRECTORY'
                       r'[^\n]*?FILES "([^"]+)/"')


def _directory_rules(build: Path) -> list[tuple[str, Path]]:
    """(destination under the prefix, source dir) of each install(DIRECTORY ".../") rule, in the order CMake runs
    them (a later one overwrites an earlier one's file)."""
    out: list[tuple[str, Path]] = []
    for script in sorted(build.rglob("cmake_install.cmake"), key=lambda p: (len(p.parts), str(p)))[:1000]:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            out += [(m.group(1).strip("/"), Path(m.group(2))) for m in _DIR_RULE.finditer(script.read_text())]
    return out


def _source_of(rel: str, rules: list[tuple[str, Path]]) -> Path | None:
    found = None
    for dest, src in rules:
        inside = rel if not dest else rel[len(dest) + 1:] if rel.startswith(dest + "/") else None
        if inside and (src / inside).is_file():
            found = src / inside
    return found


def _read_sources(path: Path) -> dict[str, list[int]]:
    """The record, when it is this user's regular file, writable by no one else, of one shape; else {}."""
    try:
        st = path.lstat()
        if not path.is_file() or path.is_symlink() or st.st_size > _SOURCES_LIMIT or st.st_uid != os.getuid() \
                or st.st_mode & 0o022:
            return {}
        data = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v)} if isinstance(data, dict) else {}


def _differs(src: Path, dst: Path) -> bool:
    a, b = src.stat(), dst.stat()
    if a.st_size != b.st_size:
        return True
    with open(src, "rb") as f, open(dst, "rb") as g:
        while chunk := f.read(1 << 20):
            if chunk != g.read(len(chunk)):
                return True
    return False


def copy_stale(plan: Plan) -> list[str]:
    """Copy again each installed file of an install(DIRECTORY) rule whose source changed since it was last made
    sure of and differs from its copy (``cmake --install`` took it for up to date); returns their paths under the
    prefix. The record of what was made sure of is the build dir's content (read as hostile: a lie at worst
    compares a file again, or trusts a source as the build dir is trusted)."""
    prefix, record = prefix_of(plan), Path(plan.cmake.build_dir) / SOURCES
    rules, known = _directory_rules(cmake_build_dir(plan)), _read_sources(record)
    seen: dict[str, list[int]] = {}
    copied: list[str] = []
    for dst in _manifest(plan):
        rel = dst.relative_to(prefix).as_posix() if dst.is_relative_to(prefix) else None
        src = _source_of(rel, rules) if rel and dst.is_file() and not dst.is_symlink() else None
        if src is None:
            continue
        st = src.stat()
        seen[str(src)] = [st.st_size, st.st_mtime_ns]
        if known.get(str(src)) != seen[str(src)] and _differs(src, dst):
            dst.write_bytes(src.read_bytes())
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns // 10**9 * 10**9))  # as CMake sets it: whole seconds
            copied.append(rel or "")
    with contextlib.suppress(OSError):
        replace_with(record, json.dumps(seen, sort_keys=True))
    return copied
