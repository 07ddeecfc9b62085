"""Hostile review (#44, #46): small inputs that were taken, silently, as something nobody meant: an empty --source,
a TRITON_PLUGIN_DIRS of only separators, URLs with spaces or fragments, ``-0`` as a number, click's own usage
errors, ``verify --python`` of no interpreter. Each is one paragraph and exit 2, before any work. In-process: no
subprocess, no file outside tmp_path."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from tests.helpers import wheel
from tritonbuild.cli.main import USAGE_VALUE_CAP, main
from tritonbuild.cli.options import setting_option
from tritonbuild.errors import UserError
from tritonbuild.settings import recipes
from tritonbuild.settings.model import SPEC_BY_NAME, ascii_int, resolve_settings

RECIPE = Path("/nowhere/r.toml")  # recipes.parse reads nothing: the path only names the recipe in messages


def refusal(fn: Any, *args: Any) -> str:
    with pytest.raises(UserError) as info:
        fn(*args)
    return str(info.value)


def flag_refusal(name: str, text: str) -> str:
    """The refusal of ``--flag text`` as click parses it with the setting's own option."""
    flag = SPEC_BY_NAME[name].flag
    assert flag is not None
    result = CliRunner().invoke(click.command()(setting_option(SPEC_BY_NAME[name])(lambda **kw: None)),
                                [flag.split("/")[-1], text])
    assert isinstance(result.exception, UserError), result.output
    return str(result.exception)


def origins(name: str, value: str) -> dict[str, str]:
    """The refusal of one value from the flag, each environment variable and a recipe, all one paragraph with the
    same words but the origin."""
    spec = SPEC_BY_NAME[name]
    out = {"cli": flag_refusal(name, value), "recipe": refusal(recipes.parse, {name: value}, RECIPE)}
    out |= {env: refusal(resolve_settings, {}, {env: value}) for env in spec.env_names}
    assert len({m.split(") ", 1)[1] for m in out.values()}) == 1, out
    assert all("\n" not in m and m.startswith("The setting ") for m in out.values()), out
    return out


@pytest.mark.parametrize("empty", ["", " "])
def test_an_empty_source_is_refused_not_taken_as_the_current_directory(empty: str) -> None:
    """``--source "$UNSET"`` built the current directory; an empty --plugin-dir or --patch was already refused."""
    for message in (flag_refusal("source", empty), refusal(recipes.parse, {"source": empty}, RECIPE),
                    refusal(resolve_settings, {"source": empty}, {})):
        assert message.startswith("The setting source = ") and "is empty" in message, message
        assert "current directory" in message and "\n" not in message
    assert resolve_settings({"source": "."}, {}).source == "."


@pytest.mark.parametrize("value", [";", ";;", " ; ; ", ";\t;"])
@pytest.mark.parametrize("variable", ["TRITON_PLUGIN_DIRS", "TRITONBUILD_PATCHES", "TRITONBUILD_DEPS"])
def test_a_list_variable_of_separators_only_is_refused_by_name(variable: str, value: str) -> None:
    """It was set to name something and named nothing: silently no plugin at all. An empty entry beside a real one
    (a trailing ';') is still dropped, and an empty value is still "not set"."""
    message = refusal(resolve_settings, {}, {variable: value})
    assert message.startswith(f"The environment variable {variable}=") and "names nothing" in message, message
    assert "\n" not in message
    setting = {"TRITON_PLUGIN_DIRS": "plugin_dirs", "TRITONBUILD_PATCHES": "patches", "TRITONBUILD_DEPS": "deps"}
    entry = "n=a" if variable == "TRITONBUILD_DEPS" else "a"  # --dep entries are NAME=PATH
    assert resolve_settings({}, {variable: f"{entry};"}).report()[setting[variable]]["value"] == [entry]
    assert resolve_settings({}, {variable: ""}).origin(setting[variable]) == "default"


_BAD_URLS = ["https://mirror.example/llvm builds", "https://mirror.example/llvm#frag", "https://mirror.example/#",
             "https://mirror.example/llvm\u00a0x", "https://mirror.example/\u3000", "https://h/a\u2028b",
             "https:// mirror.example/llvm", "file:///srv/simple#x", "file:///srv/my simple"]


@pytest.mark.parametrize("url", _BAD_URLS)
def test_a_mirror_or_index_url_with_whitespace_or_a_fragment_is_refused(url: str) -> None:
    """urlsplit keeps a space, a no-break space or a fragment where a URL can hold none a server is sent: the
    download then asks for another file than the one the setting seems to name."""
    if not url.startswith("file:"):
        messages = origins("llvm_mirror", url)
        assert all("http:// or https:// URL with a host" in m and "#fragment" in m for m in messages.values())
    index = refusal(resolve_settings, {}, {"PIP_INDEX_URL": url})
    assert "URL of a package index" in index and "#fragment" in index and "\n" not in index, index


def test_url_checks_refuse_control_characters_themselves() -> None:
    """The settings refuse a control character in any text first; the URL rule holds without that check too."""
    for name in ("llvm_mirror", "pypi_index"):
        check = SPEC_BY_NAME[name].validate
        assert check is not None
        for bad in ("https://h/a\tb", "https://h/a\x00", "https://h/a\x9b", "https://h/a\x7f"):
            assert check(bad), (name, bad)
        assert check("https://h:8080/llvm-builds") is None
    assert resolve_settings({}, {"PIP_INDEX_URL": "file:///srv/simple"}).pypi_index == "file:///srv/simple"


def cli_exit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``tritonbuild ARGS`` run in this process by ``main`` (click parses, nothing is built): exit code, out, err."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.mark.parametrize(("args", "said"), [
    (("plan", "--jobs", "abc"), "'abc' is not a whole number"),
    (("plan", "--bakends", "nvidia"), "No such option '--bakends'. Did you mean '--backends'?"),
    (("verify",), "Missing argument 'WHEELS...'"),
    (("bogus",), "No such command 'bogus'"),
    (("plan", "--jobs", "a\nb\x1b[31m"), "'a\\nb\\x1b[31m' is not a whole number"),
])
def test_a_usage_error_is_one_paragraph_with_exit_2(capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
                                                      said: str) -> None:
    """click printed its usage line, a hint, a blank line and the error: four lines where tritonbuild says one."""
    code, out, err = cli_exit(capsys, *args)
    assert code == 2 and out == "" and said in err, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Usage:" not in err and "--help` lists" in err


@pytest.mark.parametrize("value", ["x" * 100_000, "a b " * 25_000, "--jobs=" + "9" * 5_000 + "x"])
def test_a_usage_error_echoes_a_huge_value_cut_short(capsys: pytest.CaptureFixture[str], value: str) -> None:
    """click echoes the whole value back: a 100 kB argument made a 100 kB message (a CI log's line limit)."""
    args = ("plan", value) if value.startswith("--") else ("plan", "--jobs", value)
    code, _, err = cli_exit(capsys, *args)
    assert code == 2 and err.count("\n") == 1 and len(err) < 2 * USAGE_VALUE_CAP + 200, err
    assert "characters)" in err and "whole number" in err



def test_a_flag_given_a_value_is_one_paragraph_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """``plan --json=yes``: --json is a flag; click refuses the value, and tritonbuild says so in one paragraph (no
    JSON on stdout: what the run asked for cannot be read from a flag it refused)."""
    code, out, err = cli_exit(capsys, "plan", "--json=yes")
    assert code == 2 and out == "" and err == "error: Option '--json' does not take a value.\n", err


@pytest.mark.parametrize("text", ["-0", "-00", "-007", "-0x1", "--1"])
def test_a_negative_zero_or_a_signed_leading_zero_is_no_whole_number(capsys: pytest.CaptureFixture[str],
                                                                       text: str) -> None:
    """``-0`` was read as 0: a sign on a zero (or before a leading zero) is a typo, not a number anyone writes."""
    with pytest.raises(ValueError, match="not a whole number"):
        ascii_int(text)
    assert "MAX_JOBS" in refusal(resolve_settings, {}, {"MAX_JOBS": text})
    code, _, err = cli_exit(capsys, "plan", f"--unity-build={text}")
    assert code == 2 and "is not a whole number written in ASCII digits" in err, err
    code, _, err = cli_exit(capsys, "verify", "--compile-timeout", text, "x.whl")
    assert code == 2 and "is not a whole number written in ASCII digits" in err, err


def test_zero_and_negative_numbers_are_still_whole_numbers() -> None:
    assert [ascii_int(t) for t in ("0", "00", "7", "-1", "-10", "4096")] == [0, 0, 7, -1, -10, 4096]
    assert resolve_settings({}, {"TRITONBUILD_UNITY_BUILD": "0"}).unity_build == 0


def test_verify_refuses_a_given_python_that_is_no_interpreter_even_without_the_import(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``verify --python /nonexistent --no-import`` said ok: the flag was read only by the import it skipped."""
    good = wheel(tmp_path / "w.whl", {"triton/__init__.py": b""})
    text = tmp_path / "python-text"
    text.write_text("not a program")
    for bad in ("/nonexistent/python3", str(text), str(tmp_path)):
        code, out, err = cli_exit(capsys, "verify", "--python", bad, "--no-import", str(good))
        assert code == 2 and out == "" and "(--python) is not an executable file" in err, err
        assert err.startswith("error: ") and err.count("\n") == 1
    code, _, err = cli_exit(capsys, "verify", "--python", sys.executable, "--no-import", str(good))
    assert "--python" not in err and code in (0, 1), err
