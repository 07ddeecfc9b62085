"""Hostile review (#44, #46): small inputs that were taken, silently, as something nobody meant: an empty --source,
a TRITON_PLUGIN_DIRS of only separators, URLs with spaces or fragments, ``-0`` as a number, click's own usage
errors, ``verify --python`` of no interpreter. Each is one paragraph and exit 2, before any work. In-process: no
subprocess, no file outside tmp_path."""

from __future__ import annotations

import pytest

from tests.unit.test_inputs import RECIPE, flag_refusal, refusal
from tritonbuild.settings import recipes
from tritonbuild.settings.model import resolve_settings


@pytest.mark.parametrize("empty", ["", " "])
def test_an_empty_source_is_refused_not_taken_as_the_current_directory(empty: str) -> None:
    """``--source "$UNSET"`` built the current directory; an empty --plugin-dir or --patch was already refused."""
    for message in (flag_refusal("source", empty), refusal(recipes.parse, {"source": empty}, RECIPE),
                    refusal(resolve_settings, {"source": empty}, {})):
        assert message.startswith("The setting source = ") and "is empty" in message, message
        assert "current directory" in message and "\n" not in message
    assert resolve_settings({"source": "."}, {})["source"].value == "."


@pytest.mark.parametrize("value", [";", ";;", " ; ; ", ";\t;"])
@pytest.mark.parametrize("variable", ["TRITON_PLUGIN_DIRS", "TRITONBUILD_PATCHES", "TRITONBUILD_DEPS"])
def test_a_list_variable_of_separators_only_is_refused_by_name(variable: str, value: str) -> None:
    """It was set to name something and named nothing: silently no plugin at all. An empty entry beside a real one
    (a trailing ';') is still dropped, and an empty value is still "not set"."""
    message = refusal(resolve_settings, {}, {variable: value})
    assert message.startswith(f"The environment variable {variable}=") and "names nothing" in message, message
    assert "\n" not in message
    setting = {"TRITON_PLUGIN_DIRS": "plugin_dirs", "TRITONBUILD_PATCHES": "patches", "TRITONBUILD_DEPS": "deps"}
    assert resolve_settings({}, {variable: "a;"})[setting[variable]].value == ["a"]
    assert resolve_settings({}, {variable: ""})[setting[variable]].origin == "default"
