"""Stable paths for the compiler cache (pure): CMake sees the source and every plugin through links in the
build dir, ``<build>/src`` and ``<build>/plugins/<name>``, instead of where the checkout happens to be.

ccache rewrites absolute paths under its base dir relative to the compiler's working dir (``<build>/cmake``),
so every source path becomes ``../src/...`` whatever the checkout's directory is called and however deep it
is; sccache strips its base dirs, the build dir first (the longest prefix wins). A second checkout of the same
commit at another path, a CI runner's workspace, a git worktree: all compile to the same cache keys. Without
the links the relative path walks up and down through the checkout's name and almost nothing hits.

``--no-stable-paths`` turns this off (CMake then sees the checkout itself). The build dir's key is computed
from the real paths, so two checkouts never share a build dir.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

SOURCE = "src"
PLUGINS = "plugins"


def views(build_dir: str, source_root: str, plugins: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``(link, real path)`` for the source and each plugin ``(name, path)``, links under ``build_dir``."""
    base = PurePosixPath(build_dir)
    out = [(str(base / SOURCE), source_root)]
    out += [(str(base / PLUGINS / name), path) for name, path in plugins]
    return tuple(out)


def rewrite(value: str, pairs: Iterable[tuple[str, str]]) -> str:
    """``value`` (a define, a list of them, ``name=path`` entries, a flag) with every real path that starts a
    path in it replaced by its link, in one pass (a link is never rewritten again); the longest real path
    first, so a plugin inside the source tree gets its own link."""
    links = {real: link for link, real in pairs if real and real != "/"}
    if not links:
        return value
    alternatives = "|".join(re.escape(r) for r in sorted(links, key=len, reverse=True))
    pattern = rf"(?:^|(?<=[;= ])|(?<=-I))({alternatives})(?=/|;|$| )"
    return re.sub(pattern, lambda m: links[m.group(1)], value)


def rewrite_all(items: Iterable[tuple[str, str]], pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((k, rewrite(v, pairs)) for k, v in items)


def for_editors(text: str, pairs: Iterable[tuple[str, str]]) -> str:
    """A compile_commands.json's text with each link's path put back to the real one, so an editor (clangd)
    finds the file it has open in the checkout."""
    for link, real in pairs:
        for end in ("/", '"', " ", ";"):
            text = text.replace(link + end, real + end)
    return text


def to_real(path: str, pairs: Iterable[tuple[str, str]]) -> str:
    """The checkout's path of a path under one of the links (a compiler's message names the link's)."""
    for link, real in pairs:
        if path == link or path.startswith(link + "/"):
            return real + path[len(link):]
    return path
