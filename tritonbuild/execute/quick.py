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
import filecmp
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.execute.staging import cache_value, cmake_build_dir
from tritonbuild.plan import Plan
from tritonbuild.resolve.toolchain import ninja_args
from tritonbuild.system.fileutil import read_owned_json, replace_with
from tritonbuild.wheel import bundle

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


def prune(plan: Plan) -> list[str]:
    """Remove from the kept prefix what this install did not put there (a module deleted from the source since an
    earlier install, bytecode a check left): the checks import from the prefix, so it must hold what the wheel
    holds and nothing else. Returns the paths removed, relative to the prefix."""
    prefix = prefix_of(plan)
    keep = set(installed_files(plan))
    gone: list[str] = []
    if not keep:  # no manifest to go by: the wheel writer has nothing to write either, and says so
        return gone
    for dirpath, dirnames, filenames in os.walk(prefix, topdown=False):
        here = Path(dirpath)
        for name in filenames + [d for d in dirnames if (here / d).is_symlink()]:
            if here / name not in keep:
                (here / name).unlink()
                gone.append((here / name).relative_to(prefix).as_posix())
        if here != prefix and not any(here.iterdir()):
            here.rmdir()
    return gone


def installed_files(plan: Plan) -> list[Path]:
    """What the last install put in the prefix: CMake's manifest, and the libraries the bundle step copied."""
    prefix = prefix_of(plan)
    files = _manifest(plan)
    files += [prefix / "triton" / "_C" / name for name in bundle.copied(Path(plan.cmake.build_dir) / "bundle.json")]
    return sorted({f for f in files if f.is_file()})


# --- what cmake --install takes for up to date and is not ------------------------------------------------------------
# CMake copies a file's time in whole seconds and takes a file for up to date when its source's time is within a
# second of the copy's: a source saved again within the second it was last copied (a script's two edits, an
# editor's save then a fix) stays stale in the prefix, and so in the wheel (review 49). The sources of
# install(DIRECTORY) rules (the Python packages, the backends' dirs: what a developer edits) whose size or time
# changed since they were last made sure of are compared with their copies, and copied again when they differ.

SOURCES = f"{PREFIX}.sources.json"  # source path -> [size, mtime_ns] when its copy was last made sure of
_SOURCES_LIMIT = 16 << 20
_INSTALL = re.compile(r'^\s*file\(INSTALL (.*)\)\s*$', re.M)
_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|(\S+)')
_KEYWORDS = {"DESTINATION", "TYPE", "FILES", "RENAME", "OPTIONAL", "REGEX", "PATTERN", "EXCLUDE", "FILES_MATCHING",
             "USE_SOURCE_PERMISSIONS", "PERMISSIONS", "FILE_PERMISSIONS", "DIR_PERMISSIONS", "MESSAGE_NEVER"}


@dataclass(frozen=True)
class _Rule:
    """One ``file(INSTALL ...)`` of a ``cmake_install.cmake``: its destination under the prefix, its type, its
    sources, and for a directory the regexes that leave paths out (``exclude``) or alone let them in (``only``)."""

    dest: str
    kind: str
    sources: tuple[str, ...]
    rename: str | None = None
    exclude: tuple[str, ...] = ()
    only: tuple[str, ...] = ()


def _rule(args: str) -> _Rule | None:
    words = [(m.group(1).replace("\\\\", "\\").replace('\\"', '"') if m.group(1) is not None else m.group(2),
              m.group(1) is None) for m in _TOKEN.finditer(args)]
    found: dict[str, list[str]] = {}
    key = ""
    regexes: list[str] = []
    exclude: list[str] = []
    for word, bare in words:
        if bare and word in _KEYWORDS:
            key = word
            if word == "EXCLUDE" and regexes:
                exclude.append(regexes.pop())
            continue
        if key == "REGEX":
            regexes.append(word)
        elif key:
            found.setdefault(key, []).append(word)
    only: list[str] = regexes if any(w == "FILES_MATCHING" for w, bare in words if bare) else []
    dest = (found.get("DESTINATION") or [""])[0]
    if not dest.startswith("${CMAKE_INSTALL_PREFIX}") or not found.get("TYPE") or not found.get("FILES"):
        return None
    rename = found.get("RENAME")
    return _Rule(dest.removeprefix("${CMAKE_INSTALL_PREFIX}").strip("/"), found["TYPE"][0], tuple(found["FILES"]),
                 rename[0] if rename else None, tuple(exclude), tuple(only))


def _rules(build: Path) -> list[_Rule]:
    """The install rules of the build dir's ``cmake_install.cmake`` files, in the order CMake runs them."""
    out: list[_Rule] = []
    for script in sorted(build.rglob("cmake_install.cmake"), key=lambda p: (len(p.parts), str(p)))[:1000]:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            out += [r for m in _INSTALL.finditer(script.read_text()) if (r := _rule(m.group(1)))]
    return out


def _installs(rule: _Rule, rel: str) -> Path | None:
    """The source ``rule`` installs at ``rel`` (under the prefix), or None."""
    if rule.kind != "DIRECTORY":
        names = [rule.rename] if rule.rename else [Path(src).name for src in rule.sources]
        return Path(rule.sources[names.index(rel.rsplit("/", 1)[-1])]) if rel.rpartition("/")[0] == rule.dest \
            and rel.rsplit("/", 1)[-1] in names else None
    inside = rel if not rule.dest else rel[len(rule.dest) + 1:] if rel.startswith(rule.dest + "/") else None
    for src in rule.sources if inside else ():
        if not src.endswith("/"):
            continue  # a dir installed as itself: not what tritonbuild's rules do
        path = src.rstrip("/") + "/" + str(inside)
        parts = path[len(src.rstrip("/")):].strip("/").split("/")
        ancestry = [src.rstrip("/") + "/" + "/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        try:
            if any(re.search(x, a) for x in rule.exclude for a in ancestry) or \
                    (rule.only and not any(re.search(x, path) for x in rule.only)):
                continue
        except re.error:
            return None
        if Path(path).is_file() and not Path(path).is_symlink():
            return Path(path)
    return None


def _source_of(rel: str, rules: list[_Rule]) -> Path | None:
    """The source of the installed ``rel`` when the last rule that installs it is an install(DIRECTORY) one (a
    library or program of a FILE/PROGRAM rule may be stripped or patched after it is copied: never compared)."""
    last: tuple[_Rule, Path] | None = None
    for rule in rules:
        src = _installs(rule, rel)
        if src is not None:
            last = (rule, src)
    return last[1] if last and last[0].kind == "DIRECTORY" else None


def _read_sources(path: Path) -> dict[str, list[int]]:
    """The record, when it is this user's regular file, writable by no one else, of one shape; else {}."""
    data = read_owned_json(path, _SOURCES_LIMIT)
    return {k: v for k, v in data.items() if isinstance(v, list) and len(v) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v)} if isinstance(data, dict) else {}


def _replace_copy(src: Path, dst: Path, st: os.stat_result) -> None:
    """``dst`` replaced by a copy of ``src`` (its mode kept, its time CMake's: whole seconds) as a new file renamed
    into place: written in place, it kept its inode, size and whole-second mtime when saved twice in one second, so
    the packer's sums and the compile check's record, keyed by the stat, took it for unchanged."""
    replace_with(dst, src.read_bytes(), mode=dst.stat().st_mode & 0o7777,
                 times_ns=(st.st_atime_ns, st.st_mtime_ns // 10**9 * 10**9))


def copy_stale(plan: Plan) -> list[str]:
    """Copy again each installed file of an install(DIRECTORY) rule whose source changed since it was last made
    sure of and differs from its copy (``cmake --install`` took it for up to date); returns their paths under the
    prefix. The record of what was made sure of is the build dir's content (read as hostile: a lie at worst
    compares a file again, or trusts a source as the build dir is trusted)."""
    prefix, record = prefix_of(plan), Path(plan.cmake.build_dir) / SOURCES
    rules, known = _rules(cmake_build_dir(plan)), _read_sources(record)
    seen: dict[str, list[int]] = {}
    copied: list[str] = []
    for dst in _manifest(plan):
        rel = dst.relative_to(prefix).as_posix() if dst.is_relative_to(prefix) else None
        src = _source_of(rel, rules) if rel and dst.is_file() and not dst.is_symlink() else None
        if src is None:
            continue
        st = src.stat()
        seen[str(src)] = [st.st_size, st.st_mtime_ns]
        if known.get(str(src)) != seen[str(src)] and not filecmp.cmp(src, dst, shallow=False):
            _replace_copy(src, dst, st)
            copied.append(rel or "")
    with contextlib.suppress(OSError):
        replace_with(record, json.dumps(seen, sort_keys=True))
    return copied
