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
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.settings.model import SPECS, Spec, join_patch, show, split_patch, text_problem
from tritonbuild.system.paths import recipes_dir

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
    if spec.kind in ("int", "float"):
        return {"type": "integer" if spec.kind == "int" else "number", "minimum": spec.minimum} | (
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
    if spec is not None and spec.kind == "word":  # the type here; the words, like every value rule, in spec.check
        schema = {"type": "string"}
    if "oneOf" in schema:
        if not any(_matches(option, value) for option in schema["oneOf"]):
            raise UserError(f"The recipe {where} has {name} = {show(value)}, which is none of: "
                            f"{', '.join(_describe(o) for o in schema['oneOf'])}.")
        return value
    if not _matches(schema, value):
        raise UserError(f"The recipe {where} has {name} = {show(value)}, but {name} must be {_describe(schema)}.")
    if spec is not None:
        spec.check(value, f"recipe {where}")  # the same range, choices and rules as the flag and the environment
    elif name != "description":
        _texts_ok(name, value, where)
    return value


def _texts_ok(name: str, value: Any, where: str) -> None:
    """A request key's text (out_dir, cache_dir, pythons) holds no undecodable or control character and no huge
    string: the same rule as every text setting's."""
    for item in value if isinstance(value, list) else [value]:
        problem = text_problem(item)
        if problem:
            raise UserError(f"The recipe {where} has {name} = {show(item)}, which {problem}.")


def _describe(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(repr(e) for e in schema["enum"])
    return {"string": "a string", "boolean": "true or false", "integer": "a whole number", "number": "a number",
            "array": "a list of strings"}[schema["type"]]


def _matches(schema: dict[str, Any], value: Any) -> bool:
    kind = schema["type"]
    ok = {"string": isinstance(value, str), "boolean": isinstance(value, bool),
          "integer": isinstance(value, int) and not isinstance(value, bool),
          "number": isinstance(value, int | float) and not isinstance(value, bool),
          "array": isinstance(value, list) and all(isinstance(v, str) for v in value)}[kind]
    return ok and ("enum" not in schema or value in schema["enum"])


def parse(data: dict[str, Any], path: Path) -> Recipe:
    table = _table(data, path)
    values: dict[str, Any] = {}
    request: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KEYS:
            hint = difflib.get_close_matches(key, list(KEYS), n=1)
            mean = f" Did you mean {hint[0]!r}?" if hint else ""
            raise UserError(
                f"The recipe {path} has an unknown key {show(key)}.{mean}"
                f" Valid keys: {', '.join(KEYS)} (schema: recipes/recipe.schema.json)."
            )
        if key == "plugins":
            values["plugin_dirs"] = [_plugin(p, path) for p in (value if isinstance(value, list) else [value])]
            continue
        value = _check(key, value, str(path))
        if key == "source" and "://" not in value and not value.startswith(("git@", "/", "~")):
            value = str((path.parent / value).resolve())  # a source path is relative to the recipe file
        if key == "patches":
            value = [_patch(v, path) for v in value]  # patches too, and they stay in the recipe's dir
        if key == "deps":
            value = [_dep(v, path) for v in value]
        (request if key in REQUEST_KEYS else values)[key] = value
    return Recipe(values, **request)


def _table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The recipe's keys: the whole file, or its ``[tritonbuild]`` table (then nothing else may sit beside it)."""
    if "tritonbuild" not in data:
        return data
    table, others = data["tritonbuild"], sorted(set(data) - {"tritonbuild"})
    if not isinstance(table, dict):
        raise UserError(f"The recipe {path} has tritonbuild = {show(table)}: tritonbuild must be a table "
                        "([tritonbuild] with the recipe's keys under it), or leave it out and put the keys at the top.")
    if others:
        raise UserError(f"The recipe {path} has keys beside its [tritonbuild] table ({', '.join(others)}); put "
                        "every key in the table (or leave the table out).")
    return table


def _patch(item: str, path: Path) -> str:
    """A recipe's patch, joined to the recipe's directory and refused when it lies outside it (links resolved):
    a recipe is input the user did not write, and may name only its own files. ``NAME=FILE`` (a patch for the
    plugin NAME) keeps its NAME= and has its FILE joined."""
    target, file = split_patch(item)
    if target is not None and os.path.lexists(path.parent / item):
        raise UserError(f"The recipe {path} has patches = [..., {show(item)}, ...], which is ambiguous: it reads as "
                        f"a patch for the plugin {target!r} (NAME=FILE), and a file of that whole name is in the "
                        f"recipe's directory. Write it {show('./' + item)} for that file as a patch for the Triton "
                        "source, or rename the file.")
    base = os.path.realpath(path.parent)
    full = path.parent / file
    real = os.path.realpath(full)
    if not real.startswith(base + os.sep):
        raise UserError(f"The recipe {path} has patches = [..., {show(item)}, ...], which lies outside the recipe's "
                        f"directory {base} (it is {real}): a recipe's patches must be files beside it or under its "
                        "directory. Move the patch there, or give it with --patch (or TRITONBUILD_PATCHES).")
    return join_patch(target, str(full))


def _dep(item: str, path: Path) -> str:
    """A recipe's ``NAME=PATH`` dependency with a relative PATH joined to the recipe's directory, as its source and
    plugins are (read relative to wherever tritonbuild ran, the same recipe named another checkout); a URL, an
    absolute path or ``~`` stays as written."""
    name, sep, where = item.partition("=")
    if not sep or not where or "://" in where or where.startswith(("/", "~", "git@")):
        return item
    return f"{name}={(path.parent / where).resolve()}"


def _plugin(item: Any, path: Path) -> str:
    if isinstance(item, str) and not text_problem(item):
        return item if item.startswith("git+") else str((path.parent / item).resolve())
    if isinstance(item, dict) and set(item) <= {"git", "ref", "path"} and all(
            isinstance(v, str) and not text_problem(v) for v in item.values()):
        if "git" in item:
            return f"git+{item['git']}" + (f"@{item['ref']}" if item.get("ref") else "")
        if "path" in item:
            return str((path.parent / item["path"]).resolve())
    raise UserError(f"The recipe {path} has a plugin entry {show(item)}: use a path, or a table with git (and ref) "
                    "or path, each a string of text.")


def find(name_or_path: str, cwd: Path) -> Path:
    problem = text_problem(name_or_path)
    if problem or len(name_or_path) > 1024:
        raise UserError(f"The recipe {show(name_or_path)} (--recipe) {problem or 'is too long to be a name or path'}.")
    path = Path(name_or_path)
    if path.suffix == ".toml" or "/" in name_or_path:
        full = path if path.is_absolute() else cwd / path
        if not _is_file(full):
            raise UserError(f"The recipe file {full} {_not_a_file(full)}.")
        return full
    full = recipes_dir() / f"{name_or_path}.toml"
    if not _is_file(full):
        names = names_available()
        hint = difflib.get_close_matches(name_or_path, names, n=1)
        raise UserError(
            f"There is no recipe named {name_or_path!r}.{' Did you mean ' + repr(hint[0]) + '?' if hint else ''} "
            f"Known recipes: {', '.join(names) or 'none'}; or pass a path to a .toml file."
        )
    return full


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system, a dir that cannot be searched
        return False


def _not_a_file(path: Path) -> str:
    """Why ``path``, which is no readable regular file, cannot be a recipe (for its message)."""
    try:
        if path.is_dir():
            return "is a directory, not a recipe file: give the path of a .toml file"
        if path.exists():
            return "is not a regular file: give the path of a .toml file"
    except OSError:
        pass
    return "does not exist"


def names_available() -> list[str]:
    return sorted(p.stem for p in recipes_dir().glob("*.toml"))


MAX_RECIPE_BYTES = 1 << 20  # a recipe is a page of settings; a bigger file is not one


def read(path: Path) -> Recipe:
    """The recipe at ``path``, refused as one paragraph when it cannot be read, is too big, is not UTF-8 or not
    TOML."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_RECIPE_BYTES + 1)
    except OSError as exc:
        raise UserError(f"The recipe {path} cannot be read: {exc.strerror or exc}.") from None
    if len(raw) > MAX_RECIPE_BYTES:
        raise UserError(f"The recipe {path} is over {MAX_RECIPE_BYTES >> 20} MiB; a recipe is a short TOML file of "
                        "settings. Check the path.")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise UserError(f"The recipe {path} is not UTF-8 text (byte {exc.start}); TOML files are UTF-8.") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"The recipe {path} is not valid TOML: {exc}.") from None
    except RecursionError:
        raise UserError(f"The recipe {path} nests arrays or tables too deeply to be a recipe.") from None
    return parse(data, path)


def load(name_or_path: str, cwd: Path) -> tuple[Recipe, str]:
    path = find(name_or_path, cwd)
    return read(path), f"recipe {path.stem if path.parent == recipes_dir() else path}"


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2))
