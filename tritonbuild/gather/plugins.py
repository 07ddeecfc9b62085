"""Read plugin directories (edge: reads files); ``tritonbuild.resolve.plugins`` checks what they hold."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tritonbuild.fileutil import read_text
from tritonbuild.gather.source import package_extras
from tritonbuild.resolve.plugins import Plugin, PluginFiles, check_plugin
from tritonbuild.resolve.source import finds_lld


def absolute(path: str, cwd: Path) -> Path:
    p = Path(path).expanduser()
    return (p if p.is_absolute() else cwd / p).resolve()


def _text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def read_files(raw: str, cwd: Path) -> PluginFiles:
    """What the plugin directory ``raw`` (relative to ``cwd``) holds."""
    path = absolute(raw, cwd)
    backend = path / "backend"
    if not path.is_dir() or not backend.is_dir():
        return PluginFiles(str(path), is_dir=path.is_dir())
    return PluginFiles(
        path=str(path), is_dir=True, has_backend=True,
        missing=tuple(f for f in ("compiler.py", "driver.py") if not (backend / f).is_file()),
        name_conf=_text(backend / "name.conf"), llvm_targets=_text(backend / "llvm-targets.txt"),
        triton_hash=_text(path / "triton-hash.txt"), language=package_extras(path / "language"),
        tools=package_extras(path / "tools"), finds_lld=finds_lld(read_text(path / "CMakeLists.txt")),
    )


def read_all(raws: Iterable[str], cwd: Path) -> dict[str, PluginFiles]:
    return {raw: read_files(raw, cwd) for raw in raws}


def read_plugin(path: Path, given_as: str) -> Plugin:
    """One plugin directory, read and checked (raises UserError as the plan's own check would)."""
    return check_plugin(read_files(str(path), path), given_as)
