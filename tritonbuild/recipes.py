"""Recipes: named, documented TOML files that describe a whole build (``recipes/<name>.toml``).

A recipe is checked against a typed model (``Recipe``): an unknown key is an error with a suggestion and a
wrong type names the key. ``recipes/recipe.schema.json`` is generated from the model
(``python -m tritonbuild.recipes``) and a test fails when it drifts. Recipe values sit between the defaults
and the environment in the precedence chain.

Plugins are paths (relative to the recipe file) or ``{git = URL, ref = REF}`` tables, which become
``git+URL@REF`` plugin specs cloned into the source cache.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import tomllib
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tritonbuild.errors import UserError
from tritonbuild.paths import recipes_dir

VersionScheme = Literal["setup", "git", "date", "date+git", "none"]


@dataclass(frozen=True)
class Recipe:
    """Every key a recipe may hold (all optional). See README 'Recipes'."""

    description: str | None = None
    source: str | None = None  # a path (relative to the recipe) or a git URL
    ref: str | None = None
    backends: str | None = None
    plugins: list[str] | None = None  # paths, or git+URL@REF (tables {git, ref} in TOML)
    llvm: str | None = None
    llvm_mirror: str | None = None
    allow_unpinned: bool | None = None
    llvm_src: str | None = None
    llvm_assertions: bool | None = None
    clang: bool | Literal["auto"] | None = None  # "auto": clang+lld when all three are installed
    ccache: bool | None = None
    ccache_remote: str | None = None
    compiler_cache: Literal["ccache", "sccache", "none"] | None = None
    distcc: str | None = None  # distcc hosts, DISTCC_HOSTS syntax
    zip_level: int | None = None  # deflate level of the wheel, 0-9
    jobs: int | None = None
    link_jobs: int | None = None
    build_type: str | None = None
    linker: Literal["auto", "lld", "gold", "bfd", "default"] | None = None
    debug_info: Literal["auto", "lines", "full", "none", "tree"] | None = None
    proton: bool | None = None
    offline: bool | None = None
    cmake_args: list[str] | None = None
    targets: list[str] | None = None
    deps: list[str] | None = None  # NAME=PATH|URL for configure-time downloads (FetchContent)
    llvm_link: Literal["auto", "static", "shared"] | None = None
    bundle_libs: bool | None = None
    bundle_nvidia_tools: bool | None = None
    strict: bool | None = None
    compile_check: bool | None = None
    compile_check_timeout: int | None = None  # seconds per kernel
    require_pinned_llvm: bool | None = None
    wheelhouse: str | None = None
    wheel_name: str | None = None
    version_suffix: str | None = None
    version_scheme: VersionScheme | None = None
    requires_python: str | None = None
    reproducible: bool | None = None
    strip: bool | None = None
    repair: bool | None = None
    repair_exclude: list[str] | None = None
    out_dir: str | None = None
    cache_dir: str | None = None

    def settings(self) -> dict[str, Any]:
        """The recipe as setting values (plugins become ``plugin_dirs``)."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if getattr(self, f.name) is not None and f.name not in ("description", "plugins", "out_dir",
                                                                       "cache_dir")}
        if self.plugins is not None:
            out["plugin_dirs"] = list(self.plugins)
        return out


FIELDS = {f.name: f for f in dataclasses.fields(Recipe)}
_HINTS = typing.get_type_hints(Recipe)


def _json_type(tp: Any) -> dict[str, Any]:
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if len(args) > 1:
            return {"oneOf": [_json_type(a) for a in args]}
        return _json_type(args[0])
    if origin is Literal:
        return {"type": "string", "enum": list(typing.get_args(tp))}
    if origin is list:
        return {"type": "array", "items": _json_type(args[0])}
    scalars: dict[Any, dict[str, Any]] = {bool: {"type": "boolean"}, int: {"type": "integer"},
                                          str: {"type": "string"}}
    return scalars[tp]


def json_schema() -> dict[str, Any]:
    """The recipe schema; whole-number ranges are the settings' own (``settings.Spec``), as for flags and env."""
    from tritonbuild.settings import SPEC_BY_NAME

    props = {name: _json_type(_HINTS[name]) for name in FIELDS}
    for name, prop in props.items():
        spec = SPEC_BY_NAME.get(name)
        if spec is not None and spec.minimum is not None:
            prop.update({"minimum": spec.minimum} | ({"maximum": spec.maximum} if spec.maximum is not None else {}))
    props["plugins"] = {"type": "array", "items": {"oneOf": [
        {"type": "string"},
        {"type": "object", "properties": {"git": {"type": "string"}, "ref": {"type": "string"},
                                          "path": {"type": "string"}}, "additionalProperties": False},
    ]}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "tritonbuild recipe",
            "type": "object", "properties": props, "additionalProperties": False}


def _check(name: str, value: Any, where: str) -> Any:
    schema = _json_type(_HINTS[name])
    if "oneOf" in schema:
        for option in schema["oneOf"]:
            if _matches(option, value):
                return value
        raise UserError(f"The recipe {where} has {name} = {value!r}, which is none of: "
                        f"{', '.join(_describe(o) for o in schema['oneOf'])}.")
    if not _matches(schema, value):
        raise UserError(f"The recipe {where} has {name} = {value!r}, but {name} must be {_describe(schema)}.")
    from tritonbuild.settings import SPEC_BY_NAME

    if name in SPEC_BY_NAME:
        SPEC_BY_NAME[name].check(value, f"recipe {where}")  # the same range as the flag and the environment
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
    for key, value in table.items():
        if key not in FIELDS:
            hint = difflib.get_close_matches(key, list(FIELDS), n=1)
            raise UserError(
                f"The recipe {path} has an unknown key {key!r}.{' Did you mean ' + repr(hint[0]) + '?' if hint else ''}"
                f" Valid keys: {', '.join(FIELDS)} (schema: recipes/recipe.schema.json)."
            )
        if key == "plugins":
            values[key] = [_plugin(p, path) for p in (value if isinstance(value, list) else [value])]
            continue
        if key == "source" and isinstance(value, str) and "://" not in value \
                and not value.startswith(("git@", "/", "~")):
            value = str((path.parent / value).resolve())  # a source path is relative to the recipe file
        values[key] = _check(key, value, str(path))
    return Recipe(**values)


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
