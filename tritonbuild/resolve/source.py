"""Inspect a Triton source tree: layout generation, version, pin, in-tree backends, limits.

Only reads files. The pure text parsers are separate functions so that tests feed them strings.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from tritonbuild.errors import UserError
from tritonbuild.resolve.pins import LLVMPin
from tritonbuild.resolve.proton import FALLBACK_DIRS

# Upstream's tuple macro took 4 entries until 2025-08 and 5 since.
DEFAULT_TUPLE_LIMIT = 5


@dataclass(frozen=True)
class GitState:
    commit: str
    dirty: bool
    branch: str | None = None
    commit_time: int | None = None  # unix time of the commit (for SOURCE_DATE_EPOCH)
    # top-level submodules as committed in HEAD: (path, commit). A plugin older than triton-hash.txt
    # (triton-shared before 2025) pins its Triton as the submodule ``triton``.
    submodules: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class InTreeBackend:
    name: str
    path: str
    language: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    finds_lld: bool = False  # its CMakeLists.txt runs find_package(LLD): upstream's amd backend does


@dataclass(frozen=True)
class SourceInfo:
    root: str
    generation: str  # G1, G2, G3
    version: str | None
    pin: LLVMPin
    backends: tuple[InTreeBackend, ...]
    default_backends: tuple[str, ...]
    required_backends: tuple[str, ...]
    has_proton: bool
    proton_in_tuple: str  # "always", "when-built" or "never"
    tuple_limit: int
    tuple_limit_known: bool
    git: GitState | None = None
    # git submodules declared in .gitmodules but not checked out, with the in-tree backends whose CMake uses them
    missing_submodules: tuple[tuple[str, tuple[str, ...]], ...] = ()
    core_finds_lld: bool = False  # the top-level CMakeLists.txt itself runs find_package(LLD)
    # CUDA headers the nvidia backend includes as "backend/include/<name>" that are not in the tree: 2024
    # trees expect setup.py to have downloaded them into third_party/nvidia/backend/include.
    nvidia_missing_headers: tuple[str, ...] = ()
    proton_requires: tuple[str, ...] = ()  # variables third_party/proton/CMakeLists.txt stops without
    proton_include_defaults: tuple[str, ...] = ()  # proton's in-tree header dirs the source has (resolve.proton)
    # (variable, environment variable, in-tree default) setup.py passes to proton (resolve.proton.setup_dirs)
    proton_dirs: tuple[tuple[str, str, str], ...] = FALLBACK_DIRS
    bindings: str = "pybind11"  # the binding library of libtriton's Python module: pybind11 or nanobind
    stable_abi: bool = False  # the tree has option(TRITON_STABLE_ABI): one cp312-abi3 wheel serves 3.12+
    ext_option: bool = False  # the tree has option(TRITON_EXT_ENABLED): symbols visible to extensions
    build_requires: tuple[str, ...] = ()  # pyproject.toml's [build-system] requires (pybind11/nanobind pins)
    install_requires: tuple[str, ...] = ()  # setup.py's install_requires: the wheel's Requires-Dist
    # the TRITON_*_PATH cache variables of a tree whose configure downloads NVIDIA's parts into
    # third_party/nvidia/backend for each one left empty (mid-2026: build_helpers.py download_and_copy_dependencies)
    configure_nvidia_paths: tuple[str, ...] = ()
    # TRITON_CACHE_PATH / TRITON_VERSION when the top-level CMakeLists.txt declares them as cache variables: from
    # early 2026 its configure stops without TRITON_CACHE_PATH, before llvm-info.json (G3) replaced llvm-hash.txt
    setup_cache_vars: tuple[str, ...] = ()

    @property
    def backend_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.backends)

    def backend(self, name: str) -> InTreeBackend:
        return next(b for b in self.backends if b.name == name)


# --- pure parsers -----------------------------------------------------------------------------------------

_ARG_N = re.compile(r"#\s*define\s+FOR_EACH_ARG_N\s*\(([^)]*)\)")


def parse_tuple_limit(main_cc: str) -> int | None:
    """The number of backends ``TRITON_BACKENDS_TUPLE`` may hold, read from ``python/src/main.cc``."""
    m = _ARG_N.search(main_cc)
    if not m:
        return None
    return sum(1 for p in m.group(1).split(",") if re.fullmatch(r"\s*_\d+\s*", p))


_VERSION_PATTERNS = (
    re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M),
    re.compile(r"""^TRITON_VERSION\s*=\s*['"]([^'"]+)['"]""", re.M),
    re.compile(r"""\bversion\s*=\s*['"](\d+\.\d+[^'"]*)['"]"""),
)


def parse_version(*texts: str) -> str | None:
    for pattern in _VERSION_PATTERNS:
        for text in texts:
            m = pattern.search(text)
            if m:
                return m.group(1)
    return None


_SETUP_BACKENDS = re.compile(r"BackendInstaller\.copy\(\s*\[([^\]]*)\]")


def parse_setup_backends(setup_py: str) -> tuple[str, ...] | None:
    """The in-tree backend list hard-coded in setup.py (``BackendInstaller.copy([...])``)."""
    m = _SETUP_BACKENDS.search(setup_py)
    if not m:
        return None
    return tuple(re.findall(r"""['"]([^'"]+)['"]""", m.group(1)))


def parse_install_requires(setup_py: str) -> tuple[str, ...]:
    """The requirements in setup.py's ``setup(install_requires=[...])`` when they are a literal list of strings
    (Intel's tree needs ``pyelftools`` at import time; upstream lists importlib-metadata for old Pythons)."""
    try:
        tree = ast.parse(setup_py)
    except SyntaxError:
        return ()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setup":
            for kw in node.keywords:
                if kw.arg == "install_requires" and isinstance(kw.value, (ast.List, ast.Tuple)):
                    return tuple(e.value for e in kw.value.elts
                                 if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return ()


_IF = re.compile(r"^\s*if\s*\((.*)\)", re.I)
_ENDIF = re.compile(r"^\s*endif\s*\(", re.I)
_PROTON_NAME = re.compile(r"""list\s*\(\s*APPEND\s+TRITON_PLUGIN_NAMES\s+"?proton"?\s*\)""", re.I)


def parse_proton_in_tuple(cmakelists: str) -> str:
    """Whether the top-level CMakeLists puts ``proton`` into the backends tuple: always, when built, never.

    Upstream since 2025 builds the proton dialect unconditionally and always appends ``proton`` to
    ``TRITON_PLUGIN_NAMES``; older trees never did.
    """
    stack: list[str] = []
    for line in cmakelists.splitlines():
        code = line.split("#", 1)[0]
        if m := _IF.match(code):
            stack.append(m.group(1))
        elif _ENDIF.match(code) and stack:
            stack.pop()
        elif _PROTON_NAME.search(code):
            return "when-built" if any("TRITON_BUILD_PROTON" in c for c in stack) else "always"
    return "never"


_THIRD_PARTY_INCLUDE = re.compile(r'#\s*include\s*[<"]third_party/([A-Za-z0-9_]+)/')


BACKEND_INCLUDE = re.compile(r'#\s*include\s*[<"]backend/include/([\w./-]+)[">]')


def parse_backend_includes(texts: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        found.update(_THIRD_PARTY_INCLUDE.findall(text))
    return found


_FIND_LLD = re.compile(r"^[^#\n]*\bfind_package\s*\(\s*LLD\b", re.I | re.M)


def finds_lld(cmakelists: str) -> bool:
    """Whether a CMakeLists.txt looks for LLD. Upstream's amd backend does (it links lldELF); older trees
    and the other backends never need LLD, so an LLVM without it can build them."""
    return bool(_FIND_LLD.search(cmakelists))


_SECTION = re.compile(r"\s*\[\s*([A-Za-z0-9.-]+)(?:\s+\"(?:[^\"\\]|\\.)*\")?\s*\]\s*(?:[#;].*)?")
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)")


def _config_value(raw: str) -> str:
    """A git config value as git reads it: quotes removed, a comment (``#``/``;`` outside quotes) dropped."""
    out, quoted = [], False
    for ch in raw.strip():
        if ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
    return "".join(out).strip()


def parse_gitmodules(text: str) -> tuple[str, ...]:
    """The ``path`` of each ``[submodule "NAME"]`` section of a .gitmodules (keys case-insensitive, values quoted
    or not); a ``path`` of another section (``[include]``) is no submodule."""
    found, section = [], ""
    for line in text.splitlines():
        if (head := _SECTION.fullmatch(line)) is not None:
            section = head.group(1).lower()
        elif (section == "submodule" and (kv := _KEY.fullmatch(line)) and kv.group(1).lower() == "path"
              and (value := _config_value(kv.group(2)))):
            found.append(value)
    return tuple(dict.fromkeys(found))


def parse_build_requires(text: str) -> tuple[str, ...]:
    """``[build-system] requires`` of a pyproject.toml (empty when there is none or it does not parse)."""
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return ()
    reqs = data.get("build-system", {}).get("requires", [])
    return tuple(str(r) for r in reqs) if isinstance(reqs, list) else ()


_NANOBIND = re.compile(r"^[^#\n]*\bfind_package\s*\(\s*nanobind\b", re.M)
_STABLE_ABI = re.compile(r"^[^#\n]*\boption\s*\(\s*TRITON_STABLE_ABI\b", re.M)
_EXT_ENABLED = re.compile(r"^[^#\n]*\boption\s*\(\s*TRITON_EXT_ENABLED\b", re.M)


def parse_bindings(cmakelists: str) -> str:
    """The binding library of the tree's Python module: nanobind from mid-2026 (upstream #10283), else pybind11."""
    return "nanobind" if _NANOBIND.search(cmakelists) else "pybind11"


def parse_stable_abi(cmakelists: str) -> bool:
    """Whether the tree can build its Python-facing code against the limited API (``TRITON_STABLE_ABI``, #10958)."""
    return bool(_STABLE_ABI.search(cmakelists))




_PATH_CACHE_VAR = re.compile(r"^[^#\n]*\bset\s*\(\s*(TRITON_[A-Z0-9_]+_PATH)\s+\"\"\s+CACHE\b", re.M)


_SETUP_VAR = re.compile(r"^[^#\n]*\bset\s*\(\s*(TRITON_CACHE_PATH|TRITON_VERSION)\s+\"\"\s+CACHE\b", re.M)


def parse_setup_cache_vars(cmakelists: str) -> tuple[str, ...]:
    """The variables setup.py passes that the top-level CMakeLists.txt declares empty and may require
    (``TRITON_CACHE_PATH``: "must be set or derivable from TRITON_HOME/HOME/..."; ``TRITON_VERSION``)."""
    return tuple(dict.fromkeys(_SETUP_VAR.findall(cmakelists)))


def parse_configure_nvidia_paths(cmakelists: str) -> tuple[str, ...]:
    """The ``TRITON_*_PATH`` cache variables (TRITON_CACHE_PATH aside) of a top-level CMakeLists.txt that runs
    ``build_helpers.py download_and_copy_dependencies`` at configure time: each one left empty makes that step
    download an NVIDIA archive and copy its part into the source tree (unless TRITON_OFFLINE_BUILD). () for trees
    whose setup.py does the downloads (and reads those variables from the environment)."""
    if not re.search(r"^[^#\n]*\bdownload_and_copy_dependencies\b", cmakelists, re.M):
        return ()
    return tuple(dict.fromkeys(v for v in _PATH_CACHE_VAR.findall(cmakelists) if v != "TRITON_CACHE_PATH"))


def parse_ext_option(cmakelists: str) -> bool:
    """Whether the tree has ``option(TRITON_EXT_ENABLED)`` (#10847: symbols visible to out-of-tree extensions)."""
    return bool(_EXT_ENABLED.search(cmakelists))


def limited_api(src: SourceInfo, python_abi: str, wanted: bool | None = None, origin: str = "") -> bool:
    """A tree with TRITON_STABLE_ABI builds for CPython 3.12 and later against the limited API (one cp312-abi3
    wheel); 3.10 and 3.11, and free-threaded interpreters (cp313t: no limited API), get their own wheels.
    ``wanted``: the stable_abi setting (None: as the tree allows; False: never)."""
    if wanted and not src.stable_abi:
        raise UserError(f"A stable-ABI wheel was asked for ({origin}) but this source has no TRITON_STABLE_ABI option "
                        "(upstream added it in July 2026, #10958). Drop --stable-abi / TRITON_STABLE_ABI to build a "
                        "wheel per interpreter.")
    match = re.fullmatch(r"cp3(\d+)(t?)", python_abi)
    return bool(wanted is not False and src.stable_abi and match and not match.group(2)
                and int(match.group(1)) >= 12)

