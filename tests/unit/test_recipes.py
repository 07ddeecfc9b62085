from __future__ import annotations

import json
from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.settings import recipes
from tritonbuild.settings.model import SPEC_BY_NAME
from tritonbuild.system.paths import recipes_dir

ROOT = Path(__file__).resolve().parents[2]


def test_schema_file_is_generated_from_the_model() -> None:
    committed = json.loads((ROOT / "recipes" / "recipe.schema.json").read_text())
    assert committed == recipes.json_schema(), \
        "run: python -m tritonbuild.settings.recipes > recipes/recipe.schema.json"


@pytest.mark.parametrize("name", ["default", "dev", "nightly", "cpu", "spirv"])
def test_shipped_recipes_are_valid(name: str) -> None:
    r = recipes.read(recipes_dir() / f"{name}.toml")
    assert r.description
    assert set(r.settings()) <= set(SPEC_BY_NAME)


def test_every_recipe_key_is_a_setting_or_a_request_key() -> None:
    settings = set(recipes.KEYS) - set(recipes.REQUEST_KEYS)
    assert settings <= set(SPEC_BY_NAME)
    assert {s.name for s in SPEC_BY_NAME.values() if s.flag and s.recipe} <= settings
    # the recipe key plugins gives plugin_dirs; a submodule's clone is a path of this machine, not a recipe's
    assert {s.name for s in SPEC_BY_NAME.values() if s.flag and not s.recipe} == {"plugin_dirs", "submodules"}


def test_unknown_key_suggests(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"unknown key 'backend'\. Did you mean 'backends'"):
        recipes.parse({"backend": "nvidia"}, tmp_path / "r.toml")


@pytest.mark.parametrize(("data", "match"), [
    ({"jobs": "four"}, "jobs must be a whole number"),
    ({"jobs": 0}, "jobs = 0 .recipe .*r.toml. must be a whole number 1-4096"),
    ({"zip_level": 10}, "zip_level = 10 .* must be a whole number 0-9"),
    ({"reproducible": "yes"}, "reproducible must be true or false"),
    ({"version_scheme": "weekly"}, "must be one of: setup, git"),
    ({"cmake_args": "-DX=1"}, "list of strings"),
    ({"clang": "sometimes"}, "none of"),
    ({"plugins": [{"url": "x"}]}, "plugin entry"),
])
def test_wrong_types(tmp_path: Path, data: dict, match: str) -> None:
    with pytest.raises(UserError, match=match):
        recipes.parse(data, tmp_path / "r.toml")


def test_plugins_and_relative_source(tmp_path: Path) -> None:
    r = recipes.parse({"tritonbuild": {"source": "../triton", "clang": "auto", "plugins": [
        "shared", {"git": "https://example.com/p.git", "ref": "v1"}, {"path": "/abs/p"}]}},
        tmp_path / "sub" / "r.toml")
    assert r.settings()["source"] == str((tmp_path / "triton").resolve())
    assert r.settings()["plugin_dirs"] == [str(tmp_path / "sub" / "shared"), "git+https://example.com/p.git@v1",
                                           "/abs/p"]
    assert r.settings()["clang"] == "auto"


def test_a_recipes_relative_deps_are_relative_to_the_recipe_not_the_cwd(tmp_path: Path) -> None:
    # #48: a recipe's `deps` were read relative to wherever tritonbuild ran
    r = recipes.parse({"deps": ["abi=../abi", "translator=https://example.com/t.git", "h=/abs/h", "x=~/x"]},
                      tmp_path / "sub" / "r.toml")
    assert r.settings()["deps"] == [f"abi={(tmp_path / 'abi').resolve()}", "translator=https://example.com/t.git",
                                    "h=/abs/h", "x=~/x"]


def test_unknown_recipe_name_suggests(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="Did you mean 'nightly'"):
        recipes.find("nightlyy", tmp_path)
