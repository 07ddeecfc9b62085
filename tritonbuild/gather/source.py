"""Read a Triton source tree from disk into a ``SourceInfo`` (edge: reads files).

The parsers of each file's text and the ``SourceInfo`` type are pure and live in ``tritonbuild.resolve.source``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.resolve.pins import LLVMPin, parse_llvm_hash_txt, parse_llvm_info_json
from tritonbuild.resolve.proton import FALLBACK_DIRS, required_variables, setup_dirs
from tritonbuild.resolve.source import (
    BACKEND_INCLUDE,
    DEFAULT_TUPLE_LIMIT,
    GitState,
    InTreeBackend,
    SourceInfo,
    finds_lld,
    parse_backend_includes,
    parse_bindings,
    parse_build_requires,
    parse_configure_nvidia_paths,
    parse_ext_option,
    parse_gitmodules,
    parse_install_requires,
    parse_proton_in_tuple,
    parse_setup_backends,
    parse_setup_cache_vars,
    parse_stable_abi,
    parse_tuple_limit,
    parse_version,
)
from tritonbuild.system.fileutil import files_under, read_checked, read_text, refuse_unpackable

_CORE_DIRS = ("lib", "include", "python/src", "bin")
_CORE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".c", ".inc"}


def nvidia_missing_headers(nvidia: Path) -> tuple[str, ...]:
    """Headers the nvidia backend's C++ includes from its backend/include dir that the tree lacks."""
    wanted: set[str] = set()
    if nvidia.is_dir():
        for path in files_under(nvidia, "The Triton source's nvidia backend"):
            if path.suffix in _CORE_SUFFIXES and path.is_file() and "backend" not in path.relative_to(nvidia).parts:
                wanted.update(BACKEND_INCLUDE.findall(read_text(path)))
    return tuple(sorted(n for n in wanted if not (nvidia / "backend" / "include" / n).is_file()))


def discovers_backends_by_directory(root: Path) -> bool:
    """2024 trees list the directories of the ``triton/backends`` package instead of reading entry points, so
    an editable install needs each backend linked in there (setup.py's develop does the same)."""
    text = read_text(root / "python" / "triton" / "backends" / "__init__.py")
    return bool(text) and "entry_points(" not in text and "listdir" in text


def looks_like_triton(root: Path) -> bool:
    cml = root / "CMakeLists.txt"
    return cml.is_file() and (root / "python" / "triton").is_dir() and "project(triton" in read_text(cml).replace(
        " (", "("
    )


def generation_of(root: Path) -> str:
    if (root / "cmake" / "llvm-info.json").is_file():
        return "G3"
    if (root / "setup.py").is_file():
        return "G2"
    return "G1"


def source_text(root: Path, rel: str, what: str) -> str:
    """A file of the source tree that tritonbuild parses: "" when absent; a UserError (one paragraph naming it)
    when it is not a regular file, leaves the tree through a symlink, is huge or is not UTF-8."""
    return read_checked(root / rel, root, what) or ""


def read_pin(root: Path) -> LLVMPin:
    info = root / "cmake" / "llvm-info.json"
    txt = root / "cmake" / "llvm-hash.txt"
    if info.exists() or info.is_symlink():
        return parse_llvm_info_json(source_text(root, "cmake/llvm-info.json", "the source's LLVM pin"), str(info))
    if txt.exists() or txt.is_symlink():
        return parse_llvm_hash_txt(source_text(root, "cmake/llvm-hash.txt", "the source's LLVM pin"), str(txt))
    raise UserError(
        f"The Triton source {root} has no LLVM pin: neither cmake/llvm-hash.txt nor cmake/llvm-info.json "
        "exists. Check that --source points at the top of a complete Triton checkout."
    )


def package_extras(path: Path) -> tuple[str, ...]:
    """A backend's ``language/<x>`` or ``tools/<x>`` dirs that go into the package as ``triton.<kind>.extra.<x>``.
    A dir with a CMakeLists.txt is C++ that CMake builds (triton-shared's tools/triton-shared-opt), not
    package data, and is left out (setup.py would copy its sources into the wheel)."""
    if not path.is_dir():
        return ()
    return tuple(sorted(p.name for p in path.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
                        and not (p / "CMakeLists.txt").is_file()))


# What the injected CMake leaves out of python/triton when it installs the package (_tritonbuild_finish): links
# setup.py and tritonbuild's develop place there (backends, extras, libraries, the profiler), FileCheck, include;
# and _C/include, the link to the tree's include/ that 2024 trees commit (the official wheels never carried it).
_NOT_PACKAGED = re.compile(r"python/triton/(backends/[^/.]+|(language|tools)/extra/[^/]+|profiler|FileCheck|include"
                           r"|_C/[^/]*\.(so|pyd|dylib)(\.[0-9]+)*|_C/\.keep|_C/include)|.*/__pycache__")


def check_links(root: Path, backends: tuple[InTreeBackend, ...]) -> None:
    """Refuse (UserError) what the wheel cannot carry (``fileutil.unpackable_entries``: links that leave their dir,
    are absolute, dangle or loop; fifos, sockets, devices; names that are not UTF-8 or hold a control character) in
    what goes into it from the tree: python/triton and each in-tree backend's packaged dirs."""
    dirs = ["python/triton"]
    for b in backends:
        rel = Path(b.path).relative_to(root).as_posix()
        dirs += [f"{rel}/backend", *(f"{rel}/language/{x}" for x in b.language), *(f"{rel}/tools/{x}" for x in b.tools)]
    refuse_unpackable(root, tuple(dirs), skip=lambda rel: bool(_NOT_PACKAGED.fullmatch(rel)),
                      what=f"The Triton source {root}")


def find_in_tree_backends(root: Path) -> tuple[InTreeBackend, ...]:
    out = []
    third_party = root / "third_party"
    if third_party.is_dir():
        for d in sorted(third_party.iterdir()):
            backend = d / "backend"
            if (backend / "compiler.py").is_file() and (backend / "driver.py").is_file():
                out.append(
                    InTreeBackend(
                        name=d.name, path=str(d), language=package_extras(d / "language"),
                        tools=package_extras(d / "tools"),
                        finds_lld=finds_lld(read_text(d / "CMakeLists.txt")),
                    )
                )
    return tuple(out)


def _core_texts(root: Path) -> Iterable[str]:
    for sub in _CORE_DIRS:
        base = root / sub
        if not base.is_dir():
            continue
        for path in files_under(base, "The Triton source's " + sub):
            if path.suffix in _CORE_SUFFIXES and path.is_file():
                yield read_text(path)


def inspect_source(root: Path, git: GitState | None = None) -> SourceInfo:
    root = root.resolve()
    if not looks_like_triton(root):
        raise UserError(
            f"{root} is not a Triton source tree (expected a CMakeLists.txt with project(triton ...) and a "
            "python/triton package). Pass --source with the path of a Triton checkout, or a git URL with --ref."
        )
    generation = generation_of(root)
    setup_text = source_text(root, "python/setup.py" if generation == "G1" else "setup.py", "the source's setup.py")
    dirs = setup_dirs(setup_text) or FALLBACK_DIRS
    version = parse_version(source_text(root, "python/triton/__init__.py", "the triton package"), setup_text)
    backends = find_in_tree_backends(root)
    check_links(root, backends)
    names = tuple(b.name for b in backends)
    default = tuple(n for n in (parse_setup_backends(setup_text) or names) if n in names)
    included = parse_backend_includes(_core_texts(root))
    order = [*default, *names]  # report required backends in the source's own default order
    required = tuple(sorted((n for n in names if n in included), key=order.index))
    limit = parse_tuple_limit(source_text(root, "python/src/main.cc", "libtriton's module source"))
    top_cmake = source_text(root, "CMakeLists.txt", "the source's top-level CMakeLists.txt")
    missing = []
    for sub in parse_gitmodules(source_text(root, ".gitmodules", "the source's submodule list")):
        path = root / sub
        if path.is_dir() and any(path.iterdir()):
            continue
        users = tuple(b.name for b in backends
                      if sub in read_text(Path(b.path) / "CMakeLists.txt") or Path(sub).name in read_text(
                          Path(b.path) / "CMakeLists.txt"))
        missing.append((sub, users))
    return SourceInfo(
        root=str(root),
        generation=generation,
        version=version,
        pin=read_pin(root),
        backends=backends,
        default_backends=default or names,
        required_backends=required,
        has_proton=(root / "third_party" / "proton").is_dir(),
        proton_in_tuple=parse_proton_in_tuple(top_cmake),
        tuple_limit=limit if limit is not None else DEFAULT_TUPLE_LIMIT,
        tuple_limit_known=limit is not None,
        git=git,
        missing_submodules=tuple(missing),
        core_finds_lld=finds_lld(top_cmake),
        nvidia_missing_headers=nvidia_missing_headers(root / "third_party" / "nvidia"),
        proton_requires=required_variables(read_text(root / "third_party" / "proton" / "CMakeLists.txt")),
        proton_include_defaults=proton_include_defaults(root, dirs),
        proton_dirs=dirs,
        bindings=parse_bindings(top_cmake),
        stable_abi=parse_stable_abi(top_cmake),
        ext_option=parse_ext_option(top_cmake),
        configure_nvidia_paths=parse_configure_nvidia_paths(_with_cmake_modules(root, top_cmake)),
        setup_cache_vars=parse_setup_cache_vars(top_cmake),
        install_requires=parse_install_requires(setup_text),
        build_requires=parse_build_requires(source_text(root, "pyproject.toml", "the source's pyproject.toml")),
    )


def _with_cmake_modules(root: Path, top_cmake: str) -> str:
    """The top-level CMakeLists.txt and, after it, the tree's own cmake/*.cmake modules (what it may include())."""
    cmake_dir = root / "cmake"
    modules = sorted(cmake_dir.glob("*.cmake")) if cmake_dir.is_dir() else []
    return "\n".join([top_cmake, *(read_text(m) for m in modules[:200] if m.is_file() and not m.is_symlink())])


def proton_include_defaults(root: Path, dirs: tuple[tuple[str, str, str], ...]) -> tuple[str, ...]:
    """Which of proton's in-tree header dirs (the defaults of ``dirs``, from setup.py) the source has."""
    defaults = dict.fromkeys(default for _var, _env, default in dirs if default)
    return tuple(d for d in defaults if (root / d).is_dir())
