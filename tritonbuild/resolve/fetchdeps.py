"""Configure-time downloads a tree declares (pure: parsing and decisions; ``tritonbuild.gather.deps`` reads
the files and clones what ``--dep`` names).

Trees fetch sources while CMake configures: googletest for ``TRITON_BUILD_UT`` (``unittest/googletest.cmake``),
Intel's XPU backend SPIRV-LLVM-Translator at the tag in ``spirv-llvm-translator.conf`` (which fetches
SPIRV-Headers in turn). ``--dep NAME=PATH`` supplies one through a dependency provider
(cmake/TritonBuildDeps.cmake) that copies it into the build dir, where the tree's declared ``SOURCE_DIR`` says,
and sets ``FETCHCONTENT_SOURCE_DIR_<NAME>`` to the copy, so patches the tree applies never touch the checkout.
This module lists every ``FetchContent_Declare``/``ExternalProject_Add`` that configure can reach, with its
pinned tag (following ``file(READ <conf> VAR)`` for tags kept in a file), and which ones this plan needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

_CALL = re.compile(r"\b(FetchContent_Declare|ExternalProject_Add)\s*\(([^)]*)\)", re.S | re.I)
_READ = re.compile(r"\bfile\s*\(\s*READ\s+(\S+)\s+(\w+)\s*\)", re.I)
_KEYS = ("GIT_REPOSITORY", "GIT_TAG", "URL", "URL_HASH", "SOURCE_DIR")


@dataclass(frozen=True)
class Dep:
    name: str
    declared_in: str  # path relative to the source root, with the line
    kind: str  # "git" or "url"
    url: str | None
    tag: str | None  # GIT_TAG (resolved when read from a file), or the URL_HASH
    needed: bool  # this plan configures the file that declares it
    supplied: str | None = None  # the local dir --dep gives (FETCHCONTENT_SOURCE_DIR_<NAME>)
    supplied_at: str | None = None  # the commit/tag the supplied git dir is at, when known
    tag_matches: bool | None = None  # the supplied dir is at the pinned tag (None: cannot tell)


def _args(body: str) -> list[str]:
    body = re.sub(r"#[^\n]*", "", body)
    return re.findall(r'"[^"]*"|[^\s]+', body)


Decl = tuple[str, str, str, "str | None", "str | None"]  # name, "file:line", kind, url, tag


def parse(text: str, rel: str, read: Mapping[str, str] | None = None) -> list[Decl]:
    """``(name, "file:line", kind, url, tag)`` of each declaration in a CMake file. ``read`` maps a variable set by
    ``file(READ ...)`` in this file to the file's content (the caller reads it), for tags kept in a conf file."""
    out = []
    for m in _CALL.finditer(text):
        args = [a.strip('"') for a in _args(m.group(2))]
        if not args:
            continue
        name, values = args[0], {}
        for i, a in enumerate(args[1:-1], start=1):
            if a in _KEYS:
                values[a] = args[i + 1]
        tag = values.get("GIT_TAG") or values.get("URL_HASH")
        if tag and (v := re.fullmatch(r"\$\{(\w+)\}", tag)) and read and v.group(1) in read:
            tag = read[v.group(1)].strip()
        line = text.count("\n", 0, m.start()) + 1
        kind = "git" if "GIT_REPOSITORY" in values else "url"
        out.append((name, f"{rel}:{line}", kind, values.get("GIT_REPOSITORY") or values.get("URL"), tag))
    return out


def conf_reads(text: str) -> list[tuple[str, str]]:
    """``(file, variable)`` of each ``file(READ <file> <variable>)``: tags kept in a conf file."""
    return [(f.strip('"'), v) for f, v in _READ.findall(text)]


def needed(rel: str, selected_dirs: Iterable[str], ut: bool) -> bool:
    """Whether this plan configures the file: the tree's core, the selected backends and plugins, proton when built,
    unittest/ only with TRITON_BUILD_UT=ON."""
    top = rel.split("/", 1)[0]
    if top == "unittest":
        return ut
    if top == "third_party":
        return any(rel.startswith(d.rstrip("/") + "/") for d in selected_dirs)
    return top not in ("test", "bin", "docs")


@dataclass(frozen=True)
class Supplied:
    """A ``--dep NAME=...`` as found on disk (facts)."""

    name: str
    path: str
    given: str  # what the user wrote
    at_tag: dict[str, bool]  # tag -> whether the dir's HEAD is that tag's commit (git dirs only)


def split_spec(spec: str) -> tuple[str, str]:
    name, sep, where = spec.partition("=")
    if not sep or not name.strip() or not where.strip():
        from tritonbuild.errors import UserError

        raise UserError(f"--dep {spec!r} is not NAME=PATH or NAME=URL (NAME as the tree's FetchContent_Declare "
                        "names it, e.g. --dep googletest=/src/googletest).")
    return name.strip(), where.strip()


def resolve(decls: Iterable[Decl], supplied: Mapping[str, Supplied], *,
            selected_dirs: Iterable[str], ut: bool, offline: bool,
            cmake_dir: str = "") -> tuple[tuple[Dep, ...], dict[str, str], list[str]]:
    """The plan's dependencies, the defines that hand supplied ones to the dependency provider in
    ``cmake_dir``/TritonBuildDeps.cmake, and warnings; raises for a --dep
    that names nothing the tree declares, and, offline, for a needed dependency nothing supplies."""
    from tritonbuild.errors import UserError

    dirs = list(selected_dirs)
    deps: list[Dep] = []
    for name, where, kind, url, tag in decls:
        if any(d.name.lower() == name.lower() for d in deps):
            continue
        rel = where.rsplit(":", 1)[0]
        given = supplied.get(name.lower())
        matches = None if given is None or not tag or tag not in given.at_tag else given.at_tag[tag]
        deps.append(Dep(name, where, kind, url, tag, needed(rel, dirs, ut), given.path if given else None,
                        None, matches))
    declared = {d.name.lower() for d in deps}
    unknown = sorted(n for n in supplied if n not in declared)
    if unknown:
        names = ", ".join(sorted(d.name for d in deps)) or "none"
        raise UserError(f"--dep names {', '.join(unknown)}, which this source does not declare with FetchContent "
                        f"(it declares: {names}). Use the name from its FetchContent_Declare.")
    warnings = [f"--dep {d.name}: {d.supplied} is not at the tree's pinned {d.tag} (it may not build)"
                for d in deps if d.tag_matches is False]
    missing = [d for d in deps if d.needed and not d.supplied]
    if offline and missing:
        raise UserError("Offline (TRITON_OFFLINE_BUILD/--offline), and the tree downloads at configure time: "
                        + "; ".join(f"{d.name} ({d.url or '?'} at {d.tag or '?'}, {d.declared_in})" for d in missing)
                        + ". Supply each from a local checkout with "
                        + " ".join(f"--dep {d.name}=PATH" for d in missing) + ", or build once online.")
    handed = [f"{d.name.lower()}={d.supplied}" for d in deps if d.supplied]
    defines = {"TRITONBUILD_DEPS": ";".join(handed),
               "CMAKE_PROJECT_TOP_LEVEL_INCLUDES": str(Path(cmake_dir) / "TritonBuildDeps.cmake")} if handed else {}
    return tuple(deps), defines, warnings
