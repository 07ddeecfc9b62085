"""Recipes: named TOML build settings (``recipes/<name>.toml``) or a TOML file path."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.paths import recipes_dir
from tritonbuild.settings import SPEC_BY_NAME

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Keys a recipe may hold besides the settings themselves.
EXTRA_KEYS = {"description", "out_dir", "cache_dir"}


def find(name_or_path: str, cwd: Path) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" or "/" in name_or_path:
        full = path if path.is_absolute() else cwd / path
        if not full.is_file():
            raise UserError(f"The recipe file {full} does not exist.")
        return full
    full = recipes_dir() / f"{name_or_path}.toml"
    if not full.is_file():
        names = sorted(p.stem for p in recipes_dir().glob("*.toml"))
        hint = difflib.get_close_matches(name_or_path, names, n=1)
        raise UserError(
            f"There is no recipe named {name_or_path!r}.{' Did you mean ' + repr(hint[0]) + '?' if hint else ''} "
            f"Known recipes: {', '.join(names) or 'none'}; or pass a path to a .toml file."
        )
    return full


def load(name_or_path: str, cwd: Path) -> tuple[dict[str, Any], str]:
    path = find(name_or_path, cwd)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"The recipe {path} is not valid TOML: {exc}.") from None
    table = data.get("tritonbuild", data)
    valid = set(SPEC_BY_NAME) | EXTRA_KEYS
    for key in table:
        if key not in valid:
            hint = difflib.get_close_matches(key, sorted(valid), n=1)
            raise UserError(
                f"The recipe {path} has an unknown key {key!r}."
                f"{' Did you mean ' + repr(hint[0]) + '?' if hint else ''} Valid keys: {', '.join(sorted(valid))}."
            )
    return dict(table), f"recipe {path}"
