"""Configure-time downloads a tree declares (pure parsing; ``scan`` reads files).

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
_SUBDIR = re.compile(r"\badd_subdirectory\s*\(\s*([^\s)]+)", re.I)
_INCLUDE = re.compile(r"\binclude\s*\(\s*([^\s)]+)", re.I)
_FIND = re.compile(r"\bfind_package\s*\(\s*([\w.+-]+)", re.I)
_TOP_VARS = re.compile(r"^\$\{(CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR|triton_SOURCE_DIR)\}/?")
_HERE_VARS = re.compile(r"^\$\{(CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}/?")


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


def cmake_files(root: Path) -> Iterable[Path]:
    for path in sorted(root.rglob("*")):
        if (path.name == "CMakeLists.txt" or path.suffix == ".cmake") and path.is_file() and \
                not any(part.startswith(".") or part in ("build", "external") for part in path.relative_to(root).parts):
            yield path


def _target(arg: str, here: Path, root: Path) -> str | None:
    """A path argument as a glob relative to ``root`` (variables other than the source dirs become ``*``);
    None when it starts with another variable (a plugin dir, scanned on its own)."""
    arg = arg.strip('"')
    if _TOP_VARS.match(arg):
        base, arg = root, _TOP_VARS.sub("", arg)
    elif _HERE_VARS.match(arg):
        base, arg = here, _HERE_VARS.sub("", arg)
    elif arg.startswith("${"):
        return None
    else:
        base = here
    try:
        rel = (base / arg).relative_to(root) if arg else base.relative_to(root)
    except ValueError:
        return None
    return re.sub(r"\$\{[^}]*\}", "*", rel.as_posix())


def reachable(root: Path, files: Iterable[Path]) -> set[Path]:
    """The CMake files configuring ``root`` can reach, ignoring conditions: from the top CMakeLists.txt through
    ``add_subdirectory``, ``include`` and ``find_package`` (a ``Find<X>.cmake``/``<X>Config.cmake`` in the tree).
    Benchmarks, scripts and tools that the build never adds are left out, with the downloads they declare."""
    files = list(files)
    by_name: dict[str, list[Path]] = {}
    for f in files:
        by_name.setdefault(f.name.lower(), []).append(f)
    seen: set[Path] = set()
    todo = [root / "CMakeLists.txt"]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = re.sub(r"#[^\n]*", "", path.read_text(errors="replace"))
        for arg in _SUBDIR.findall(text):
            if (glob := _target(arg, path.parent, root)) is not None:
                todo += [d / "CMakeLists.txt" for d in root.glob(glob) if d.is_dir()] if glob else [path]
        for arg in _INCLUDE.findall(text):
            if arg.strip('"').endswith(".cmake"):
                if (glob := _target(arg, path.parent, root)) is not None:
                    todo += [f for f in root.glob(glob) if f.is_file()]
            else:
                todo += by_name.get(arg.strip('"').lower() + ".cmake", [])
        for name in _FIND.findall(text):
            for file in (f"find{name}.cmake", f"{name}config.cmake", f"{name}-config.cmake"):
                todo += by_name.get(file.lower(), [])
    return seen


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


def scan(root: Path, label: str = "") -> list[Decl]:
    """Every declaration the configure of ``root`` can reach (paths relative to it, prefixed with ``label``)."""
    out: list[Decl] = []
    files = list(cmake_files(root))
    reach = reachable(root, files)
    for path in files:
        if path not in reach:
            continue
        text = path.read_text(errors="replace")
        if "FetchContent_Declare" not in text and "ExternalProject_Add" not in text:
            continue
        read = {}
        for file, var in conf_reads(text):
            rel = re.sub(r"^\$\{CMAKE_CURRENT_(SOURCE|LIST)_DIR\}/", "", file)
            conf = path.parent / rel
            if not conf.is_file():  # a Find module reads relative to the CMakeLists.txt that calls find_package
                found = [f for f in root.rglob(Path(rel).name) if f.is_file()]
                conf = found[0] if len(found) == 1 else conf
            if conf.is_file():
                read[var] = conf.read_text(errors="replace")
        out += parse(text, label + str(path.relative_to(root)), read)
    return out


def supplied(specs: Iterable[str], decls: Iterable[Decl], cwd: Path, cache: Path) -> dict[str, Supplied]:
    """Each ``--dep NAME=PATH|URL`` as a local dir (a URL is cloned into the source cache at the declared tag)
    and whether it is at the tags the tree declares for it (edge: runs git)."""
    from tritonbuild.errors import UserError
    from tritonbuild.gather import git
    from tritonbuild.proc import run

    tags: dict[str, str | None] = {}
    for name, _, _, _, tag in decls:
        tags.setdefault(name.lower(), tag)
    out: dict[str, Supplied] = {}
    for spec in specs:
        name, where = split_spec(spec)
        key = name.lower()
        if git.is_git_url(where) and not Path(where).exists():
            path = git.checkout_url(where, tags.get(key), cache)
        else:
            path = (cwd / where).resolve()
            if not path.is_dir():
                raise UserError(f"--dep {spec}: {path} is not a directory. Give a checkout of {name} (or a git URL).")
        at: dict[str, bool] = {}
        tag = tags.get(key)
        head = run(["git", "-C", str(path), "rev-parse", "HEAD"], timeout=30)
        want = run(["git", "-C", str(path), "rev-parse", f"{tag}^{{commit}}"], timeout=30) if tag else None
        if tag and head.ok:
            at[tag] = bool(want and want.ok and want.stdout.strip() == head.stdout.strip())
        out[key] = Supplied(name, str(path), spec, at)
    return out


def gather(root: Path, plugin_paths: Iterable[Path], specs: Iterable[str], cwd: Path,
           cache: Path) -> tuple[list[Decl], dict[str, Supplied]]:
    """Declarations of the source and plugins, and of each supplied dependency's own CMake (the translator fetches
    SPIRV-Headers), with the ``--dep`` dirs (edge: reads files, runs git)."""
    specs = list(specs)
    decls = scan(root) + [d for p in plugin_paths if p.is_dir() for d in scan(p, f"plugins/{p.name}/")]
    given = supplied(specs, decls, cwd, cache)
    scanned: set[str] = set()
    while new := [s for k, s in given.items() if k not in scanned]:
        for dep in new:
            scanned.add(dep.name.lower())
            decls += scan(Path(dep.path), f"deps/{dep.name}/")
        given = supplied(specs, decls, cwd, cache)
    return decls, given
