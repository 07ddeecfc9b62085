"""Trust at the boundary (#35): the settings model refuses a bad value with one paragraph whatever its origin
(flag, environment, recipe), and the pure checks behind the plan's refusals. No files, no subprocesses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.cli.options import setting_option
from tritonbuild.errors import UserError
from tritonbuild.resolve import backend_api
from tritonbuild.resolve.backends import select_backends
from tritonbuild.settings import recipes
from tritonbuild.settings.model import SPEC_BY_NAME, SPECS, env_settings, resolve_settings, version_problem

RECIPE = Path("/nowhere/r.toml")  # recipes.parse reads nothing: the path only names the recipe in messages


def refusal(fn: Any, *args: Any) -> str:
    with pytest.raises(UserError) as info:
        fn(*args)
    return str(info.value)


def flag_refusal(name: str, text: str) -> str:
    """The refusal of ``--flag text`` as click parses it with the setting's own option."""
    spec = SPEC_BY_NAME[name]
    assert spec.flag is not None
    command = click.command()(setting_option(spec)(lambda **kw: None))
    result = CliRunner().invoke(command, [spec.flag.split("/")[0], text])
    assert isinstance(result.exception, UserError), result.output
    return str(result.exception)


def origins(name: str, value: Any) -> dict[str, str]:
    """The refusal of one value from each origin the setting has (build_type's variables are setup.py's yes/no
    ones, which pick a type from the list)."""
    spec = SPEC_BY_NAME[name]
    out = {}
    if spec.flag:
        out["cli"] = flag_refusal(name, str(value))
    for env_name in spec.env_names if name != "build_type" else ():
        out[env_name] = refusal(resolve_settings, {}, {env_name: str(value)})
    if spec.recipe:
        out["recipe"] = refusal(recipes.parse, {name: value}, RECIPE)
    return out


def same_paragraph(messages: dict[str, str]) -> None:
    """One paragraph, the same words whatever the origin (only the origin in parentheses differs)."""
    bodies = {m.split(") ", 1)[1] for m in messages.values()}
    assert len(bodies) == 1, messages
    assert all("\n" not in m and m.startswith("The setting ") for m in messages.values()), messages


@pytest.mark.parametrize("name", ["../../x", "a b", "-triton", "triton-", "tri/ton", "trïton", ""])
def test_a_wheel_name_that_is_no_distribution_name_is_refused_from_every_origin(name: str) -> None:
    if not name:  # an empty flag or env value means "not given"; a recipe's empty string is a value
        assert "not a wheel distribution name" in refusal(recipes.parse, {"wheel_name": ""}, RECIPE)
        return
    messages = origins("wheel_name", name)
    assert set(messages) == {"cli", "TRITON_WHEEL_NAME", "recipe"}
    same_paragraph(messages)
    assert "not a wheel distribution name" in messages["cli"] and "(cli --wheel-name)" in messages["cli"]
    assert "(env TRITON_WHEEL_NAME)" in messages["TRITON_WHEEL_NAME"]


@pytest.mark.parametrize("name", ["triton", "triton-nightly", "Triton_CPU.x", "t"])
def test_distribution_names_are_accepted(name: str) -> None:
    assert resolve_settings({"wheel_name": name}, {}).wheel_name == name


def test_version_suffixes_follow_pep_440() -> None:
    for bad in ("a b", "/x", "!!", "+", "+a+b c"):
        same_paragraph(origins("version_suffix", bad))
    for good in (".post1", ".dev3", "rc1", "+local.1", "+ci"):
        assert resolve_settings({"version_suffix": good}, {}).version_suffix == good
    # "-x" is a local label's part after a git version's '+' but nothing after a release: the plan checks the version
    assert version_problem("3.6.0-x") and not version_problem("3.6.0+git2eb709b9-x")
    assert "not a PEP 440 version" in str(version_problem("3.6.0-x"))


def test_build_types_are_a_known_list_and_the_rest_go_through_cmake_args() -> None:
    messages = origins("build_type", "Banana")
    assert set(messages) >= {"cli", "recipe"}
    for m in messages.values():
        assert "must be one of: TritonRelBuildWithAsserts, Release, Debug, RelWithDebInfo, MinSizeRel" in m
        assert "--cmake-arg -DCMAKE_BUILD_TYPE=NAME" in m
    assert resolve_settings({"build_type": "MinSizeRel"}, {}).build_type == "MinSizeRel"


def test_every_number_setting_has_a_maximum_and_a_huge_value_is_refused() -> None:
    numbers = [s for s in SPECS if s.kind in ("int", "float")]
    assert {s.name for s in numbers} >= {"jobs", "link_jobs", "unity_build", "compile_check_timeout", "zip_level",
                                         "http_retries", "http_timeout"}
    for spec in numbers:
        assert spec.maximum is not None, spec.name
        if spec.recipe:
            message = refusal(recipes.parse, {spec.name: 10 ** 23}, RECIPE)
            assert f"The setting {spec.name} = 100000000000000000000000 (recipe {RECIPE})" in message
        for env_name in spec.env_names:
            assert "must be" in refusal(resolve_settings, {}, {env_name: str(10 ** 23)})
    assert "1-4096" in refusal(recipes.parse, {"jobs": 10 ** 23}, RECIPE)
    assert "0-64" in flag_refusal("unity_build", "65")


def test_http_retries_and_timeout_are_declared_settings_read_through_the_model() -> None:
    assert env_settings({}).http_retries == 3 and env_settings({}).http_timeout == 30.0
    assert env_settings({"TRITONBUILD_HTTP_RETRIES": "5"}).http_retries == 5
    assert env_settings({"TRITONBUILD_HTTP_TIMEOUT": "0.5"}).http_timeout == 0.5
    assert "TRITONBUILD_HTTP_RETRIES='abc' is not a whole number" in refusal(
        lambda: env_settings({"TRITONBUILD_HTTP_RETRIES": "abc"}).http_retries)
    assert "must be a whole number 1-100" in refusal(
        lambda: env_settings({"TRITONBUILD_HTTP_RETRIES": "0"}).http_retries)
    for bad in ("0", "-1", "nan", "inf", "1e9"):
        with pytest.raises(UserError, match="TRITONBUILD_HTTP_TIMEOUT"):
            _ = env_settings({"TRITONBUILD_HTTP_TIMEOUT": bad}).http_timeout
    # the plan resolves them with every other setting: a bad value is refused before any work
    assert "http_retries" in refusal(resolve_settings, {}, {"TRITONBUILD_HTTP_RETRIES": "1000"})


def test_mirror_and_index_urls_are_http_or_https() -> None:
    # the last two the standard library's URL parser raises on (found by the property test of flag values)
    for bad in ("ftp://x/y", "file:///etc", "x", "https://", "javascript:alert(1)", "http://[::1", "http://h:99999/x"):
        same_paragraph(origins("llvm_mirror", bad))
        if not bad.startswith("file:"):
            assert "URL of a package index" in refusal(resolve_settings, {}, {"PIP_INDEX_URL": bad})
    assert resolve_settings({"llvm_mirror": "http://10.0.0.2:8080/llvm"}, {}).llvm_mirror


_TEXT_ENV = sorted({(name, spec.name) for spec in SPECS if spec.kind in ("str", "list", "word")
                    and spec.name != "build_type" for name in spec.env_names})


@pytest.mark.parametrize(("env_name", "setting"), _TEXT_ENV, ids=[e for e, _ in _TEXT_ENV])
def test_undecodable_bytes_control_characters_and_huge_env_values_are_one_paragraph(env_name: str,
                                                                                      setting: str) -> None:
    """os.environ gives undecodable bytes as surrogates: every text variable refuses them, by name."""
    undecodable = refusal(resolve_settings, {}, {env_name: "nvidia\udcff"})
    assert env_name in undecodable and "not UTF-8" in undecodable and "\n" not in undecodable
    newline = refusal(resolve_settings, {}, {env_name: "a\nb"})
    assert env_name in newline and "control character" in newline
    huge = refusal(resolve_settings, {}, {env_name: "x" * 100_000})
    assert env_name in huge and len(huge) < 600, huge


def test_wrong_types_and_nested_tables_in_a_recipe_name_the_key() -> None:
    assert "tritonbuild must be a table" in refusal(recipes.parse, {"tritonbuild": 5}, RECIPE)
    assert "beside its [tritonbuild] table" in refusal(recipes.parse, {"tritonbuild": {}, "jobs": 2}, RECIPE)
    assert recipes.parse({"tritonbuild": {"jobs": 2}}, RECIPE).settings() == {"jobs": 2}
    for key, value in (("wheel_name", {"a": {"b": 1}}), ("jobs", [1]), ("cmake_args", [["x"]]), ("clang", 1.5),
                       ("out_dir", {"x": 1}), ("pythons", "3.12"), ("source", 5)):
        message = refusal(recipes.parse, {key: value}, RECIPE)
        assert key in message and str(RECIPE) in message
    for entry in ({"path": 5}, {"git": ["x"]}, {"git": "u", "ref": {"a": 1}}, 7, "a\x00b"):
        assert "plugin entry" in refusal(recipes.parse, {"plugins": [entry]}, RECIPE)
    huge = refusal(recipes.parse, {"description": "x", "wheel_name": "y" * 100_000}, RECIPE)
    assert len(huge) < 600
    assert "control character" in refusal(recipes.parse, {"cache_dir": "a\x00b"}, RECIPE)


def test_a_space_in_a_backend_list_is_named_as_no_separator() -> None:
    message = refusal(select_backends, "nvidia amd", ("nvidia", "amd", "cpu"))
    assert "separated by ';' or ','" in message and "a space is not a separator" in message
    assert "'nvidia;amd'" in message and "Did you mean" not in message
    assert "Did you mean 'nvidia'?" in refusal(select_backends, "nvidai", ("nvidia", "amd"))


def test_a_backend_module_with_a_syntax_error_will_fail_naming_file_and_line() -> None:
    source = backend_api.parse_classes("class BaseBackend:\n    def hash(self): ...\n", "src/compiler.py")
    text = "from triton.backends.compiler import BaseBackend\n\nclass B(BaseBackend):\n    def hash(self:\n"
    found = backend_api.check_module(backend_api.parse_classes(text, "amd/backend/compiler.py"), source,
                                     backend_api.Usage())
    assert [f.severity for f in found] == ["error"]
    assert "amd/backend/compiler.py (line 4) is not valid Python" in found[0].message
    assert backend_api.verdict(found) == "will fail"
    for broken in ("x = 1\x00\n", "(" * 10_000):  # a NUL byte, nesting the parser refuses: an error, no crash
        assert backend_api.check_module(backend_api.parse_classes(broken, "f.py"), source, backend_api.Usage())
        assert backend_api.usage([broken]).names == set()


def test_ccache_remote_storage_and_extra_targets_are_checked_by_the_model() -> None:
    same_paragraph(origins("ccache_remote", "x"))
    assert "not a ccache remote storage URL" in flag_refusal("ccache_remote", "redis://h:1 ftp://x")
    for good in ("redis://127.0.0.1:6379", "http://cache/ccache|layout=bazel", "file:/srv/ccache redis://h"):
        assert resolve_settings({"ccache_remote": good}, {}).ccache_remote == good
    assert "CMake would read as an option" in flag_refusal("targets", "-DX=1")
    assert resolve_settings({"targets": ("triton-opt",)}, {}).targets == ("triton-opt",)


def test_values_git_or_cmake_would_read_as_options_are_refused() -> None:
    for name, value in (("source", "-oProxyCommand=x"), ("llvm_src", "--upload-pack=x"), ("ref", "--help"),
                        ("ref", "main branch"), ("wheelhouse", "-x")):
        messages = origins(name, value)
        same_paragraph(messages)
        assert "option" in messages["cli"] or "not a git ref" in messages["cli"], messages
    assert "write it as ./NAME" in flag_refusal("plugin_dirs", "-plugin")
    assert resolve_settings({"ref": "v3.4.0"}, {}).ref == "v3.4.0"


def test_a_package_index_may_be_a_local_file_index_as_pip_takes_it() -> None:
    """PIP_INDEX_URL is the user's pip setting too: a file:// index is not refused, an ftp:// one is."""
    assert resolve_settings({}, {"PIP_INDEX_URL": "file:///srv/simple"}).pypi_index == "file:///srv/simple"
    assert "file:// URL of a package index" in refusal(resolve_settings, {}, {"PIP_INDEX_URL": "ftp://x/simple"})
    assert "http:// or https://" in refusal(resolve_settings, {}, {"TRITONBUILD_LLVM_MIRROR": "file:///srv/llvm"})


_UNICODE_DIGITS = st.text(st.characters(categories=["Nd"]).filter(lambda c: not c.isascii()), min_size=1,
                          max_size=4)


@settings(max_examples=40, deadline=None)
@given(_UNICODE_DIGITS, st.sampled_from(["MAX_JOBS", "TRITON_PARALLEL_LINK_JOBS", "TRITONBUILD_ZIP_LEVEL",
                                         "TRITONBUILD_HTTP_RETRIES", "TRITONBUILD_HTTP_TIMEOUT"]))
def test_digits_of_other_scripts_are_no_number(digits: str, name: str) -> None:
    """``int('\\uff14')`` (a fullwidth 4) is 4: every number read from the environment or a flag takes ASCII
    digits only (#44)."""
    assert "is not a whole number" in refusal(resolve_settings, {}, {name: digits}) or \
        "is not a number" in refusal(resolve_settings, {}, {name: digits})
    spec = SPEC_BY_NAME["jobs"]
    assert spec.flag is not None
    command = click.command()(setting_option(spec)(lambda **kw: None))
    result = CliRunner().invoke(command, [spec.flag.split("/")[0], digits])
    assert result.exit_code == 2 and "ASCII digits" in result.output, result.output


@pytest.mark.parametrize("written", ["1_6", "+4", " 4", "4 ", "0x10", "1e3", "4.0", "--4", "٤"])
def test_a_whole_number_is_ascii_digits_and_nothing_else(written: str) -> None:
    """``int()`` also takes ``1_6`` (16), ``+4`` and spaces: a reviewer of a CI file reads ``MAX_JOBS=1_6`` as
    something else than the 16 jobs it was; only ASCII digits (and a leading minus) make a whole number."""
    assert "is not a whole number" in refusal(resolve_settings, {}, {"MAX_JOBS": written})
    spec = SPEC_BY_NAME["jobs"]
    assert spec.flag is not None
    command = click.command()(setting_option(spec)(lambda **kw: None))
    result = CliRunner().invoke(command, ["-j", written])
    assert result.exit_code == 2 and "ASCII digits" in result.output, result.output


def test_numbers_as_people_write_them_still_read() -> None:
    assert resolve_settings({}, {"MAX_JOBS": "16"}).jobs == 16
    assert resolve_settings({}, {"TRITONBUILD_HTTP_TIMEOUT": "2.5"}).http_timeout == 2.5
    assert resolve_settings({}, {"TRITONBUILD_HTTP_DEADLINE": "1e3"}).http_deadline == 1000.0
    for bad in ("1_0.5", " 2", "+2", "0x1p3"):
        assert "is not a number" in refusal(resolve_settings, {}, {"TRITONBUILD_HTTP_TIMEOUT": bad})
    for bad in ("inf", "nan", "-Infinity"):  # read, then refused by the range as every origin's value is
        assert "must be" in refusal(resolve_settings, {}, {"TRITONBUILD_HTTP_TIMEOUT": bad})


def test_an_empty_plugin_dir_is_refused_not_taken_as_the_current_directory() -> None:
    spec = SPEC_BY_NAME["plugin_dirs"]
    assert spec.flag is not None
    command = click.command()(setting_option(spec)(lambda **kw: None))
    result = CliRunner().invoke(command, ["--plugin-dir", ""])
    assert isinstance(result.exception, UserError) and "lists an empty path" in str(result.exception)


@pytest.mark.parametrize("written", ["1_6", "+4", "\uff14"])
def test_verify_compile_timeout_reads_numbers_as_the_settings_do(written: str) -> None:
    from tritonbuild.cli.main import cli

    result = CliRunner().invoke(cli, ["verify", "--no-import", "--compile-timeout", written, "x.whl"])
    assert result.exit_code == 2 and "ASCII digits" in result.output, result.output
