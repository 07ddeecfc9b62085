from __future__ import annotations

import pytest

from tritonbuild.errors import UserError
from tritonbuild.settings.model import SPECS, resolve_settings


def test_defaults_everywhere_with_empty_inputs() -> None:
    s = resolve_settings({}, {})
    assert {spec.name: s.origin(spec.name) for spec in SPECS} == {spec.name: "default" for spec in SPECS}
    assert s.llvm == "auto" and s.build_type == "TritonRelBuildWithAsserts"


def test_precedence_default_recipe_env_cli() -> None:
    recipe = {"backends": "cpu", "jobs": 3, "clang": True}
    env = {"TRITON_CODEGEN_BACKENDS": "amd", "MAX_JOBS": "5"}
    s = resolve_settings({"jobs": 7}, env, recipe, "recipe r.toml")
    assert (s.backends, s.origin("backends")) == ("amd", "env TRITON_CODEGEN_BACKENDS")
    assert (s.jobs, s.origin("jobs")) == (7, "cli -j/--jobs")
    assert (s.clang, s.origin("clang")) == (True, "recipe r.toml")
    s = resolve_settings({}, {}, recipe, "recipe r.toml")
    assert s.origin("jobs") == "recipe r.toml"


def test_lists_replace_not_merge() -> None:
    s = resolve_settings({"plugin_dirs": ("x",)}, {"TRITON_PLUGIN_DIRS": "a;b"}, {"plugin_dirs": ["r"]})
    assert s.plugin_dirs == ("x",)
    s = resolve_settings({"plugin_dirs": ()}, {"TRITON_PLUGIN_DIRS": " a ; b ;"})
    assert s.plugin_dirs == ("a", "b") and s.origin("plugin_dirs") == "env TRITON_PLUGIN_DIRS"


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("ON", True), ("yes", True), ("0", False),
                                                 ("OFF", False), ("", False)])
def test_env_bools(value: str, expected: bool) -> None:
    assert resolve_settings({}, {"TRITON_BUILD_WITH_CLANG_LLD": value}).clang is expected


def test_bad_env_values_name_the_variable() -> None:
    with pytest.raises(UserError, match="TRITON_BUILD_WITH_CCACHE='maybe'"):
        resolve_settings({}, {"TRITON_BUILD_WITH_CCACHE": "maybe"})
    with pytest.raises(UserError, match=r"jobs = -2 \(env MAX_JOBS\) must be a whole number 1-4096"):
        resolve_settings({}, {"MAX_JOBS": "-2"})
    with pytest.raises(UserError, match="MAX_JOBS='two' is not a whole number"):
        resolve_settings({}, {"MAX_JOBS": "two"})
    with pytest.raises(UserError, match="TRITON_APPEND_CMAKE_ARGS"):
        resolve_settings({}, {"TRITON_APPEND_CMAKE_ARGS": "-DX='unclosed"})


def test_build_type_from_setup_py_variables_in_their_order() -> None:
    s = resolve_settings({}, {"REL_WITH_DEB_INFO": "1", "TRITON_REL_BUILD_WITH_ASSERTS": "1"})
    assert (s.build_type, s.origin("build_type")) == ("RelWithDebInfo", "env REL_WITH_DEB_INFO")
    s = resolve_settings({}, {"DEBUG": "0", "TRITON_BUILD_WITH_O1": "1"})
    assert s.build_type == "TritonBuildWithO1"


def test_append_cmake_args_are_split_like_a_shell() -> None:
    s = resolve_settings({}, {"TRITON_APPEND_CMAKE_ARGS": "-DA=1 '-DB=two words'"})
    assert s.cmake_args == ("-DA=1", "-DB=two words")


def test_unknown_cli_setting_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown settings"):
        resolve_settings({"bogus": 1}, {})


def test_every_setting_with_a_flag_is_an_option_of_build_and_plan() -> None:
    from tritonbuild.cli.main import cli

    for command in ("build", "plan"):
        names = {o for p in cli.commands[command].params for o in (*p.opts, *p.secondary_opts)}
        missing = [s.flag for s in SPECS if s.flag and not set(s.flag.split("/")) <= names]
        assert not missing, f"{command} lacks {missing}"


def _build_options() -> dict[str, object]:
    """The build command's click options by destination name."""
    from tritonbuild.cli.main import cli

    return {p.name: p for p in cli.commands["build"].params if p.name}  # type: ignore[attr-defined]


@pytest.mark.parametrize("spec", [s for s in SPECS if s.kind == "int" and s.flag], ids=lambda s: s.name)
def test_a_whole_number_setting_has_one_range_from_flag_env_and_recipe(spec, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tritonbuild.settings import recipes

    low, high = spec.minimum, spec.maximum
    option = _build_options()[spec.name]
    assert (option.type.min, option.type.max) == (low, high)  # type: ignore[attr-defined]
    for env_name in spec.env_names:
        assert resolve_settings({}, {env_name: str(low)}).report()[spec.name]["value"] == low
        with pytest.raises(UserError, match="must be a whole number"):
            resolve_settings({}, {env_name: str(low - 1)})
    assert recipes.parse({spec.name: low}, tmp_path / "r.toml").settings()[spec.name] == low
    with pytest.raises(UserError, match="must be a whole number"):
        recipes.parse({spec.name: low - 1}, tmp_path / "r.toml")
    if high is not None:
        with pytest.raises(UserError, match="must be a whole number"):
            recipes.parse({spec.name: high + 1}, tmp_path / "r.toml")


def test_every_yes_no_setting_can_be_undone_on_the_command_line() -> None:
    options = _build_options()
    yes_no = [s for s in SPECS if s.flag and (isinstance(s.default, bool) or s.name in ("ccache", "proton"))]
    assert len(yes_no) >= 14
    for spec in yes_no:
        option = options[spec.name]
        assert spec.flag == "/".join(option.opts + option.secondary_opts), spec.name  # type: ignore[attr-defined]
        assert option.secondary_opts and option.secondary_opts[0].startswith("--no-"), spec.name  # type: ignore[attr-defined]
        assert resolve_settings({spec.name: False}, {}).report()[spec.name]["value"] is False


@pytest.mark.parametrize("spec", [s for s in SPECS if s.choices], ids=lambda s: s.name)
def test_a_word_setting_has_one_set_of_choices_from_flag_env_and_recipe(spec, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tritonbuild.settings import recipes

    option = _build_options()[spec.name]
    assert tuple(option.type.choices) == spec.choices  # type: ignore[attr-defined]
    assert recipes.json_schema()["properties"][spec.name]["enum"] == list(spec.choices)
    assert recipes.parse({spec.name: spec.choices[-1]}, tmp_path / "r.toml").settings()[spec.name] == spec.choices[-1]
    with pytest.raises(UserError, match="one of"):
        recipes.parse({spec.name: "no-such-choice"}, tmp_path / "r.toml")
    for env_name in spec.env_names if spec.name != "build_type" else ():  # setup.py's yes/no variables
        assert resolve_settings({}, {env_name: spec.choices[-1]}).report()[spec.name]["value"] == spec.choices[-1]
        with pytest.raises(UserError, match="must be one of"):
            resolve_settings({}, {env_name: "no-such-choice"})


# A value of each kind as the command line, the environment and a recipe give it.
_SAMPLES = {"str": ("x", "x", "x"), "int": ("3", "3", 3), "bool": (None, "1", True),
            "list": ("a", "a", ["a"]), "word": (None, None, None), "float": ("2.5", "2.5", 2.5)}
# Text settings with a rule of their own (a URL, a version specifier) take a sample that keeps it.
_TEXT_SAMPLES = {"llvm_mirror": "https://x", "pypi_index": "https://x", "requires_python": ">=3.10",
                 "ccache_remote": "redis://x", "plat": "manylinux_2_28_x86_64"}
_LIST_SAMPLES = {"submodules": ("a=b", "a=b", ["a=b"]), "deps": ("a=b", "a=b", ["a=b"])}  # KEY=PATH entries


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_setting_reads_the_same_value_from_flag_env_and_recipe(spec, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One model: the flag (through click), each env variable and the recipe key give a setting the same typed
    value, and the recipe schema states the kind."""
    import typing

    from click.testing import CliRunner

    from tritonbuild.cli.options import setting_option
    from tritonbuild.settings import recipes

    flag_text, env_text, recipe_value = _LIST_SAMPLES.get(spec.name) or _SAMPLES[spec.kind]
    if spec.kind == "word":
        flag_text = env_text = recipe_value = spec.choices[-1]
    if spec.name in _TEXT_SAMPLES:
        flag_text = env_text = recipe_value = _TEXT_SAMPLES[spec.name]
    expected = recipe_value
    if spec.flag:
        seen: dict[str, typing.Any] = {}
        command = setting_option(spec)(lambda **kw: seen.update(kw))
        import click

        args = [spec.flag.split("/")[0]] + ([] if spec.kind == "bool" else [flag_text])
        result = CliRunner().invoke(click.command()(command), args)
        assert result.exit_code == 0, result.output
        given = seen[spec.name]
        assert (list(given) if isinstance(given, tuple) else given) == expected
        assert resolve_settings({spec.name: given}, {}).report()[spec.name]["value"] == expected
    for env_name in spec.env_names:
        if spec.name == "build_type":  # setup.py's yes/no variables pick a build type
            continue
        below = {"TRITON_HOME": "/.triton/tritonbuild", "XDG_CACHE_HOME": "/tritonbuild"}  # the cache root's
        want = expected + below[env_name] if spec.name == "cache_root" and env_name in below else expected
        assert resolve_settings({}, {env_name: env_text}).report()[spec.name]["value"] == want, env_name
    if spec.recipe:
        schema = recipes.json_schema()["properties"][spec.name]
        kinds = {o.get("type") for o in schema.get("oneOf", [schema])}
        assert {"str": "string", "int": "integer", "bool": "boolean", "list": "array", "word": "string",
                "float": "number"}[
            spec.kind] in kinds
        if spec.name == "source":  # a recipe's source path is relative to the recipe file
            recipe_value = expected = str(tmp_path / "x")
        if spec.name == "patches":  # so are its patches
            expected = [str(tmp_path / "a")]
        if spec.name == "deps":  # and the PATH of its deps
            expected = [f"a={(tmp_path / 'b').resolve()}"]
        assert recipes.parse({spec.name: recipe_value}, tmp_path / "r.toml").settings()[spec.name] == expected
