"""Read plugin directories (edge: reads files); ``tritonbuild.resolve.plugins`` checks what they hold."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from tritonbuild.gather.source import package_extras
from tritonbuild.resolve.plugins import NAME_CONF_LIMIT, Plugin, PluginFiles, check_plugin
from tritonbuild.resolve.source import finds_lld
from tritonbuild.system.fileutil import read_checked, read_text, refuse_unpackable, resolved


def absolute(path: str, cwd: Path) -> Path:
    p = Path(path).expanduser()
    p = p if p.is_absolute() else cwd / p
    return resolved(p)


def _shape(path: Path) -> str | None:
    """What is wrong with the plugin dir's own shape, read before its files (None: nothing)."""
    backend = path / "backend"
    if path.exists() and not path.is_dir():
        return "is a file, not a directory"
    if path.is_dir() and not os.access(path, os.R_OK | os.X_OK):
        return "cannot be read (no read or search permission for this user)"
    if backend.is_symlink() and not backend.exists():
        return "has a backend/ that is a dangling symlink or a symlink loop"
    if backend.exists() and not backend.is_dir():
        return "has a backend that is a file, not a directory"
    if backend.is_dir() and not os.access(backend, os.R_OK | os.X_OK):
        return "has a backend/ directory that cannot be read (no read or search permission for this user)"
    return None


def has_backend(path: Path) -> bool:
    """Whether ``path`` holds backend/compiler.py and backend/driver.py: what must be there before anything walks a
    plugin dir (``--plugin-dir /`` is refused by the plan's check of its files, never walked)."""
    return _shape(path) is None and all((path / "backend" / f).is_file() for f in ("compiler.py", "driver.py"))


def packaged_dirs(path: Path, language: tuple[str, ...], tools: tuple[str, ...]) -> tuple[str, ...]:
    """The dirs of a backend (plugin or in-tree) that go into the wheel, relative to it (the injected CMake's
    _tritonbuild_install_backend: backend/, and each language/<x> and tools/<x> package extra)."""
    return ("backend", *(f"language/{x}" for x in language), *(f"tools/{x}" for x in tools))


def check_links(root: Path, dirs: tuple[str, ...], base: Path | None = None, what: str = "") -> None:
    """Refuse (UserError) what in ``root``'s packaged ``dirs`` the wheel cannot carry (``fileutil.unpackable_entries``):
    symlinks that leave ``base`` (default ``root``) or their dir, are absolute, dangle or loop (the wheel would
    carry a file from elsewhere); fifos, sockets and devices (the install would block); names that are not UTF-8
    or hold a control character (the wheel's RECORD cannot list them)."""
    refuse_unpackable(base or root, tuple(str((root / d).relative_to(base or root)) for d in dirs),
                      what=what or str(root))


def read_files(raw: str, cwd: Path) -> PluginFiles:
    """What the plugin directory ``raw`` (relative to ``cwd``) holds. Symlinks in what gets packaged that leave
    the plugin, and name files that are not short UTF-8 text, are refused here (UserError)."""
    path = absolute(raw, cwd)
    backend = path / "backend"
    problem = _shape(path)
    if problem or not path.is_dir() or not backend.is_dir():
        return PluginFiles(str(path), is_dir=path.is_dir(), problem=problem)
    missing = tuple(f for f in ("compiler.py", "driver.py") if not (backend / f).is_file())
    if missing:  # refused by the plan's check; nothing under a dir that is no plugin is walked
        return PluginFiles(path=str(path), is_dir=True, has_backend=True, missing=missing)
    language, tools = package_extras(path / "language"), package_extras(path / "tools")
    check_links(path, packaged_dirs(path, language, tools), what=f"The plugin {path}")
    return PluginFiles(
        path=str(path), is_dir=True, has_backend=True,
        name_conf=read_checked(backend / "name.conf", path, "the plugin's name file", limit=NAME_CONF_LIMIT),
        llvm_targets=read_checked(backend / "llvm-targets.txt", path, "the plugin's LLVM target list", limit=4096),
        triton_hash=read_checked(path / "triton-hash.txt", path, "the plugin's Triton pin", limit=4096),
        language=language, tools=tools, finds_lld=finds_lld(read_text(path / "CMakeLists.txt")),
    )


def read_all(raws: Iterable[str], cwd: Path) -> dict[str, PluginFiles]:
    return {raw: read_files(raw, cwd) for raw in raws}


def read_plugin(path: Path, given_as: str) -> Plugin:
    """One plugin directory, read and checked (raises UserError as the plan's own check would)."""
    return check_plugin(read_files(str(path), path), given_as)
