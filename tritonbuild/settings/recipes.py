"""Recipes: named, documented TOML files that describe a whole build (``recipes/<name>.toml``).

A recipe's keys are the settings a recipe may set (``Spec.recipe`` in ``tritonbuild.settings.model``: their
types, ranges and choices are the settings' own) plus five keys of the request: ``description``, ``plugins``,
``pythons``, ``out_dir`` and ``cache_dir``. An unknown key is an error with a suggestion and a wrong type names the key.
``recipes/recipe.schema.json`` is generated from the same specs (``python -m tritonbuild.settings.recipes``)
and a test fails when it drifts. Recipe values sit between the defaults and the environment in the
precedence chain.

Plugins are paths (relative to the recipe file) or ``{git = URL, ref = REF}`` tables, which become
``git+URL@REF`` plugin specs cloned into the source cache.
"""

from __future__ import annotations

import difflib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.paths import recipes_dir
from tritonbuild.settings.model import SPECS, Spec

REQUEST_KEYS = ("description", "plugins", "pythons", "out_dir", "cache_dir")  # not settings: the request
SETTING_KEYS: dict[str, Spec] = {spec.name: spec for spec in SPECS if spec.recipe}
KEYS = (*REQUEST_KEYS[:1], *SETTING_KEYS, *REQUEST_KEYS[1:])


@dataclass(frozen=True)
class Recipe:
    """A parsed recipe: its setting values by setting name (``plugins`` as ``plugin_dirs``) and the request keys."""

    values: Mapping[str, Any] = field(default_factory=dict)
    description: str | None = None
    out_dir: str | None = None
    cache_dir: str | None = None
    pythons: list[str] | None = None  # the interpreters to build wheels for: paths or versions (3.12, cp313t)

    def settings(self) -> dict[str, Any]:
        """The recipe as setting values, for ``resolve_settings``."""
        return dict(self.values)


_PLUGIN_ITEM = {"oneOf": [
    {"type": "string"},
    {"type": "object", "properties": {"git": {"type": "string"}, "ref": {"type": "string"},
                                      "path": {"type": "string"}}, "additionalProperties": False},
]}


def key_schema(spec: Spec) -> dict[str, Any]:
    """The JSON schema of one setting's recipe key, from its kind, range and choices."""
    if spec.kind == "word":
        return {"type": "string", "enum": list(spec.choices)}
    if spec.kind == "int":
        return {"type": "integer", "minimum": spec.minimum} | (
            {"maximum": spec.maximum} if spec.maximum is not None else {})
    if spec.kind == "bool" and spec.recipe_also:
        return {"oneOf": [{"type": "boolean"}, {"type": "string", "enum": list(spec.recipe_also)}]}
    plain: dict[str, dict[str, Any]] = {"str": {"type": "string"}, "bool": {"type": "boolean"},
                                        "list": {"type": "array", "items": {"type": "string"}}}
    return plain[spec.kind]


def json_schema() -> dict[str, Any]:
    props: dict[str, Any] = {name: key_schema(spec) for name, spec in SETTING_KEYS.items()}
    props = {"description": {"type": "string"}, **props, "plugins": {"type": "array", "items": _PLUGIN_ITEM},
             "pythons": {"type": "array", "items": {"type": "string"}}, "out_dir": {"type": "string"},
             "cache_dir": {"type": "string"}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "tritonbuild recipe",
            "type": "object", "properties": props, "additionalProperties": False}


def _check(name: str, value: Any, where: str) -> Any:
    spec = SETTING_KEYS.get(name)
    schema: dict[str, Any] = key_schema(spec) if spec else json_schema()["properties"][name]
    if "oneOf" in schema:
        if not any(_matches(option, value) for option in schema["oneOf"]):
            raise UserError(f"The recipe {where} has {name} = {value!r}, which is none of: "
                            f"{', '.join(_describe(o) for o in schema['oneOf'])}.")
        return value
    if not _matches(schema, value):
        raise UserError(f"The recipe {where} has {name} = {value!r}, but {name} must be {_describe(schema)}.")
    if spec is not None:
        spec.check(value, f"recipe {where}")  # the same range and choices as the flag and the environment
    return value


def _describe(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(repr(e) for e in schema["enum"])
    return {"string": "a string", "boolean": "true or false", "integer": "a whole number",
            "array": "a list of strings"}[schema["type"]]


def _matches(schema: dict[str, Any], value: Any) -> bool:
    kind = schema["type"]
    ok = {"string": isinstance(value, str), "boolean": isinstance(value, bool),
          "integer": isinstance(value, int) and not isinstance(value, bool),
          "array": isinstance(value, list) and all(isinstance(v, str) for v in value)}[kind]
    return ok and ("enum" not in schema or value in schema["enum"])


def parse(data: dict[str, Any], path: Path) -> Recipe:
    table = data.get("tritonbuild", data)
    values: dict[str, Any] = {}
    request: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            hint = difflib.get_close_matches(key, list(KEYS), n=1)
            raise UserError(
                f"The recipe {path} has an unknown key {key!r}.{' Did you mean ' + repr(hint[0]) + '?' if hint else ''}"
                f" Valid keys: {', '.join(KEYS)} (schema: recipes/recipe.schema.json)."
            )
        if key == "plugins":
            values["plugin_dirs"] = [_plugin(p, path) for p in (value if isinstance(value, list) else [value])]
            continue
        if key == "source" and isinstance(value, str) and "://" not in value \
                and not value.startswith(("git@", "/", "~")):
            value = str((path.parent / value).resolve())  # a source path is relative to the recipe file
        (request if key in REQUEST_KEYS else values)[key] = _check(key, value, str(path))
    return Recipe(values, **request)


def _plugin(item: Any, path: Path) -> str:
    if isinstance(item, str):
        return item if item.startswith("git+") else str((path.parent / item).resolve())
    if isinstance(item, dict) and set(item) <= {"git", "ref", "path"}:
        if "git" in item:
            return f"git+{item['git']}" + (f"@{item['ref']}" if item.get("ref") else "")
        if "path" in item:
            return str((path.parent / item["path"]).resolve())
    raise UserError(f"The recipe {path} has a plugin entry {item!r}: use a path, or a table with git (and ref).")


def find(name_or_path: str, cwd: Path) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" or "/" in name_or_path:
        full = path if path.is_absolute() else cwd / path
        if not full.is_file():
            raise UserError(f"The recipe file {full} does not exist.")
        return full
    full = recipes_dir() / f"{name_or_path}.toml"
    if not full.is_file():
        names = names_available()
        hint = difflib.get_close_matches(name_or_path, names, n=1)
        raise UserError(
            f"There is no recipe named {name_or_path!r}.{' Did you mean ' + repr(hint[0]) + '?' if hint else ''} "
            f"Known recipes: {', '.join(names) or 'none'}; or pass a path to a .toml file."
        )
    return full


def names_available() -> list[str]:
    return sorted(p.stem for p in recipes_dir().glob("*.toml"))


def read(path: Path) -> Recipe:
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"The recipe {path} is not valid TOML: {exc}.") from None
    return parse(data, path)


def load(name_or_path: str, cwd: Path) -> tuple[Recipe, str]:
    path = find(name_or_path, cwd)
    return read(path), f"recipe {path.stem if path.parent == recipes_dir() else path}"


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
