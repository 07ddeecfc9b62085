"""Find the configure-time downloads a tree declares, and supply the ones the user gave (edge: reads the tree's
CMake files, may clone a ``--dep`` URL). The parsing and the decisions are pure: ``tritonbuild.resolve.fetchdeps``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tritonbuild.resolve.fetchdeps import (
    Decl,
    Supplied,
    conf_reads,
    parse,
    split_spec,
)
from tritonbuild.system.fileutil import files_under, walk

_SUBDIR = re.compile(r"\badd_subdirectory\s*\(\s*([^\s)]+)", re.I)
_INCLUDE = re.compile(r"\binclude\s*\(\s*([^\s)]+)", re.I)
_FIND = re.compile(r"\bfind_package\s*\(\s*([\w.+-]+)", re.I)
_TOP_VARS = re.compile(r"^\$\{(CMAKE_SOURCE_DIR|PROJECT_SOURCE_DIR|triton_SOURCE_DIR)\}/?")
_HERE_VARS = re.compile(r"^\$\{(CMAKE_CURRENT_SOURCE_DIR|CMAKE_CURRENT_LIST_DIR)\}/?")


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in ("build", "external")


def cmake_files(root: Path, what: str = "The Triton source") -> Iterable[Path]:
    """The CMake files under ``root`` (hidden, build/ and external/ dirs left out), walked as ``fileutil.walk``
    walks (bounded, on one file system); names are judged before any path is made (a tree holds thousands)."""
    found = []
    for here, dirs, files in walk(root, what):
        dirs[:] = [d for d in dirs if not _skipped(d)]
        found += [Path(here, f) for f in files if (f == "CMakeLists.txt" or f.endswith(".cmake")) and not _skipped(f)]
    yield from sorted(p for p in found if p.is_file())


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


def scan(root: Path, label: str = "", what: str = "The Triton source") -> list[Decl]:
    """Every declaration the configure of ``root`` can reach (paths relative to it, prefixed with ``label``;
    ``what`` names the tree in a refusal of its walk)."""
    out: list[Decl] = []
    files = list(cmake_files(root, what))
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
                found = [f for f in files_under(root, what) if f.name == Path(rel).name and f.is_file()]
                conf = found[0] if len(found) == 1 else conf
            if conf.is_file():
                read[var] = conf.read_text(errors="replace")
        out += parse(text, label + str(path.relative_to(root)), read)
    return out


def supplied(specs: Iterable[str], decls: Iterable[Decl], cwd: Path, cache: Path,
             offline: bool = False) -> dict[str, Supplied]:
    """Each ``--dep NAME=PATH|URL`` as a local dir (a URL is cloned into the source cache at the declared tag;
    offline only a cached clone is used) and whether it is at the tags the tree declares for it (edge: runs git)."""
    from tritonbuild.errors import UserError
    from tritonbuild.gather import git
    from tritonbuild.system import safegit

    tags: dict[str, str | None] = {}
    for name, _, _, _, tag in decls:
        tags.setdefault(name.lower(), tag)
    out: dict[str, Supplied] = {}
    for spec in specs:
        name, where = split_spec(spec)
        key = name.lower()
        if git.is_git_url(where) and not Path(where).exists():
            path = git.checkout_url(where, tags.get(key), cache, offline=offline, given_as=f"--dep {name}=")
        else:
            path = (cwd / where).resolve()
            if not path.is_dir():
                raise UserError(f"--dep {spec}: {path} is not a directory. Give a checkout of {name} (or a git URL).")
        at: dict[str, bool] = {}
        tag = tags.get(key)
        head = safegit.run_git(path, "rev-parse", "--verify", "--quiet", "HEAD", timeout=30)
        want = safegit.run_git(path, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{tag}^{{commit}}",
                               timeout=30) if tag else None
        if tag and head.ok:
            at[tag] = bool(want and want.ok and want.stdout.strip() == head.stdout.strip())
        out[key] = Supplied(name, str(path), spec, at)
    return out


def gather(root: Path, plugin_paths: Iterable[Path], specs: Iterable[str], cwd: Path,
           cache: Path, offline: bool = False) -> tuple[list[Decl], dict[str, Supplied]]:
    """Declarations of the source and plugins, and of each supplied dependency's own CMake (the translator fetches
    SPIRV-Headers), with the ``--dep`` dirs (edge: reads files, runs git)."""
    specs = list(specs)
    decls = scan(root) + [d for p in plugin_paths if p.is_dir() for d in scan(p, f"plugins/{p.name}/", "The plugin")]
    given = supplied(specs, decls, cwd, cache, offline)
    scanned: set[str] = set()
    while new := [s for k, s in given.items() if k not in scanned]:
        for dep in new:
            scanned.add(dep.name.lower())
            decls += scan(Path(dep.path), f"deps/{dep.name}/", f"The --dep {dep.name} checkout")
        given = supplied(specs, decls, cwd, cache, offline)
    return decls, given
