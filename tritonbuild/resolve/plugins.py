"""External backend plugins (Triton's ``TRITON_PLUGIN_DIRS`` contract), checked from what their directories
hold (pure: ``tritonbuild.gather.plugins`` reads them).

A plugin is a directory with ``backend/compiler.py``, ``backend/driver.py`` and ``backend/name.conf`` (one
line: the plugin's name). Without name.conf the name is derived from the directory's last component:
dashes and dots become underscores (``triton-shared`` -> ``triton_shared``), and the result must be a C and
Python identifier. The plugin's own Triton pin is ``triton-hash.txt`` at its root, or, in plugins older
than that file (triton-shared before 2025), the commit of its git submodule ``triton``; the LLVM targets it
needs beyond Triton's core may be listed in ``backend/llvm-targets.txt`` (``;``/``,``/newline separated).
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.printable import printable
from tritonbuild.resolve.backends import split_list
from tritonbuild.resolve.pins import same_commit
from tritonbuild.resolve.source import GitState
from tritonbuild.settings.model import Settings

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NAME_LIMIT = 64  # characters of a plugin name: it becomes init_triton_<name>(), a module and a CMake target
NAME_CONF_LIMIT = 1024  # bytes tritonbuild reads of backend/name.conf (gather refuses a larger file)
_TARGET = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")  # an LLVM target name: NVPTX, AMDGPU, X86, AArch64


@dataclass(frozen=True)
class Plugin:
    name: str
    path: str
    name_from: str  # "name.conf" or "directory name"
    given_as: str  # where the directory came from: "--plugin-dir", "TRITON_PLUGIN_DIRS", a recipe
    language: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    llvm_targets: tuple[str, ...] = ()
    finds_lld: bool = False
    triton_pin: str | None = None
    triton_pin_from: str | None = None  # "triton-hash.txt" or "its triton submodule"
    git: GitState | None = None
    pin_matches_source: bool | None = None


def derive_name(dirname: str) -> str:
    """The documented rule for a plugin without name.conf: dashes and dots become underscores."""
    return re.sub(r"[-.]", "_", dirname)


def is_identifier(name: str) -> bool:
    return bool(_IDENT.fullmatch(name)) and not keyword.iskeyword(name) and len(name) <= NAME_LIMIT


@dataclass(frozen=True)
class PluginFiles:
    """What a plugin directory holds, read at the edge (``tritonbuild.gather.plugins.read_files``)."""

    path: str  # absolute, symlinks resolved
    is_dir: bool = False
    has_backend: bool = False
    missing: tuple[str, ...] = ()  # which of backend/compiler.py and backend/driver.py are missing
    name_conf: str | None = None  # backend/name.conf's text
    llvm_targets: str | None = None  # backend/llvm-targets.txt's text
    triton_hash: str | None = None  # triton-hash.txt's text
    language: tuple[str, ...] = ()  # package extras: language/<x>, tools/<x> (tritonbuild.gather.source)
    tools: tuple[str, ...] = ()
    finds_lld: bool = False  # its CMakeLists.txt looks for LLD
    problem: str | None = None  # what is wrong with the directory's shape ("is a file, not a directory", ...)


def _name_conf(text: str, where: str) -> str:
    """The name in name.conf's text: one line. NULs, several lines or an overlong name are refused."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fix = f"Write the plugin's name alone on one line into {where}."
    if "\0" in text:
        raise UserError(f"{where} holds NUL bytes, so it is not a text file naming the plugin. {fix}")
    if len(lines) > 1:
        raise UserError(f"{where} holds {len(lines)} lines ({lines[0][:40]!r}, {lines[1][:40]!r}, ...) but a "
                        f"plugin's name is one line. {fix}")
    name = lines[0] if lines else ""
    if len(name) > NAME_LIMIT:
        raise UserError(f"The plugin name in {where} is {len(name)} characters long ({name[:40]!r}...); names are "
                        f"at most {NAME_LIMIT} characters (they become C symbols, modules and file names). {fix}")
    return name


def _targets(text: str, where: str) -> tuple[str, ...]:
    targets = tuple(split_list(text.replace("\n", ";")))
    bad = [t for t in targets if not _TARGET.fullmatch(t)]
    if bad:
        raise UserError(f"{where} lists {bad[0][:60]!r}, which is not an LLVM target name (such as NVPTX, AMDGPU, "
                        "X86: letters, digits and underscores). List one target per line.")
    return targets


# what triton/backends/ holds of Triton's own (compiler.py, driver.py, __init__.py): a plugin dir of one of these
# names would shadow the module (a package dir wins over a module of the same name)
RESERVED = frozenset({"compiler", "driver", "__init__", "__pycache__"})
_HEX_PIN = re.compile(r"[0-9a-fA-F]{7,64}")


def _pin(text: str | None, where: str) -> str | None:
    """A plugin's triton-hash.txt pin: a commit (7-64 hex digits). Anything else (a branch name, HEAD, text meant
    for git's command line, escape sequences) is no pin: refused here, it never reaches the plan, the manifest or
    git."""
    pin = (text or "").strip() or None
    if pin is not None and not _HEX_PIN.fullmatch(pin):
        raise UserError(f"{where} holds {printable(pin[:80])}, which is not a commit (7 to 64 hex digits): the "
                        "plugin's Triton pin must name a commit. Write the commit the plugin was made against "
                        "(git rev-parse HEAD in that Triton), or remove the file.")
    return pin


def check_plugin(files: PluginFiles, given_as: str) -> Plugin:
    """Check one plugin directory against Triton's plugin contract and read its name, extras and pins."""
    path = Path(files.path)
    backend = path / "backend"
    fix = (
        "A plugin directory needs backend/compiler.py, backend/driver.py and backend/name.conf "
        "(see Triton's TRITON_PLUGIN_DIRS contract)."
    )
    if files.problem:
        raise UserError(f"The plugin directory {path} (from {given_as}) {files.problem}. {fix}")
    if not files.is_dir:
        raise UserError(f"The plugin directory {path} (from {given_as}) does not exist. Check the path.")
    if not files.has_backend:
        raise UserError(f"The plugin directory {path} (from {given_as}) has no backend/ directory. {fix}")
    for required in files.missing:
        raise UserError(f"The plugin {path} (from {given_as}) has no backend/{required}. {fix}")
    if files.name_conf is not None:
        where = f"{backend / 'name.conf'}"
        name, name_from = _name_conf(files.name_conf, where), "name.conf"
    else:
        name, name_from, where = derive_name(path.name), "directory name", f"the directory name of {path}"
    if not is_identifier(name):
        raise UserError(
            f"The plugin name {name[:80]!r} (from {where}) is not a C and Python identifier, but Triton uses it as "
            f"init_triton_{name}() and as triton.backends.{name}. Write a valid name (letters, digits, "
            f"underscores, not starting with a digit, at most {NAME_LIMIT} characters) into {backend / 'name.conf'}."
        )
    if name in RESERVED:
        raise UserError(
            f"The plugin name {name!r} (from {where}) is the name of a module of Triton's own package "
            f"triton/backends/ ({name}.py), which the plugin's directory triton/backends/{name}/ would hide: the "
            f"wheel's import would fail after the whole build. Write another name into {backend / 'name.conf'}."
        )
    targets = _targets(files.llvm_targets, f"{backend / 'llvm-targets.txt'}") if files.llvm_targets is not None \
        else ()
    pin = _pin(files.triton_hash, f"{path / 'triton-hash.txt'}")
    return Plugin(name=name, path=str(path), name_from=name_from, given_as=given_as, language=files.language,
                  tools=files.tools, llvm_targets=targets, finds_lld=files.finds_lld, triton_pin=pin,
                  triton_pin_from="triton-hash.txt" if pin else None)


def plugin_origin(s: Settings) -> str:
    """Where the plugin dirs came from, as a plugin's messages name it (``--plugin-dir``, not ``cli --plugin-dir``)."""
    return s.origin("plugin_dirs").replace("cli ", "")


def submodule_pin(plugin: Plugin, git: GitState | None) -> Plugin:
    """A plugin without triton-hash.txt whose repository has the submodule ``triton`` pins that commit."""
    if plugin.triton_pin or git is None:
        return plugin
    commit = dict(git.submodules).get("triton")
    if commit is None:
        return plugin
    return dataclasses.replace(plugin, triton_pin=commit, triton_pin_from="its triton submodule")


def resolve_plugins(
    dirs: Sequence[tuple[str, str]],
    *,
    files: Mapping[str, PluginFiles],
    in_tree: Sequence[str],
    source_commit: str | None,
    git_states: Mapping[str, GitState | None] | None = None,
) -> tuple[tuple[Plugin, ...], list[str], list[str]]:
    """Validate plugin dirs given as ``(path as given, given_as)``, with what each holds (``files``, by the path
    as given); return plugins, notes and warnings."""
    plugins: list[Plugin] = []
    notes: list[str] = []
    warnings: list[str] = []
    seen_paths: dict[Path, str] = {}
    for raw, given_as in dirs:
        path = Path(files[raw].path)
        if raw != str(path):
            notes.append(f"plugin directory {raw!r} ({given_as}) is used as {path}")
        if path in seen_paths:
            raise UserError(
                f"The plugin directory {path} is given twice ({seen_paths[path]} and {given_as}). "
                "Give each plugin once."
            )
        seen_paths[path] = given_as
        plugin = check_plugin(files[raw], given_as)
        if plugin.name in in_tree:
            raise UserError(
                f"The plugin {path} is named {plugin.name!r} (from its {plugin.name_from}), which is also the "
                f"in-tree backend third_party/{plugin.name}. Rename the plugin in its backend/name.conf, or "
                f"leave it out and select the in-tree backend."
            )
        for other in plugins:
            if other.name == plugin.name:
                raise UserError(
                    f"Two plugins are both named {plugin.name!r}: {other.path} and {path}. Plugin names must be "
                    "unique; change one of them in its backend/name.conf."
                )
        if plugin.name_from == "directory name":
            notes.append(
                f"plugin {path} has no backend/name.conf; its name {plugin.name!r} was derived from the "
                "directory name (dashes and dots become underscores). Triton's own CMake reads name.conf, so "
                "tritonbuild passes this name to it explicitly."
            )
        git = (git_states or {}).get(str(path))
        plugin = submodule_pin(plugin, git)
        matches = same_commit(plugin.triton_pin, source_commit)
        if matches is False:
            warnings.append(
                f"plugin {plugin.name!r} pins Triton {plugin.triton_pin[:12] if plugin.triton_pin else ''} "
                f"({plugin.triton_pin_from}) but the source is at {source_commit[:12] if source_commit else '?'}: "
                "it may not compile against this source"
            )
        plugins.append(dataclasses.replace(plugin, git=git, pin_matches_source=matches))
    return tuple(plugins), notes, warnings
