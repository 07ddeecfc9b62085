"""The one JSON contract (#46): every command with ``--json`` is listed with a shipped JSON Schema, the envelope and
the error envelope validate against theirs, times carry their zone, and ``cli.main`` finds the command of a run
that asked for ``--json`` from its arguments alone (any arguments: it runs on a refused run's)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import click
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import json_out, schema_path
from tritonbuild import jsonout
from tritonbuild.cli.main import cli, json_command

ROOT = Path(__file__).resolve().parents[2]


def json_commands(group: click.Group = cli, prefix: str = "") -> set[str]:
    """Every command of the command line that takes ``--json``, by its name after ``tritonbuild``."""
    out: set[str] = set()
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out |= json_commands(command, f"{prefix}{name} ")
        elif any(p.name == "as_json" for p in command.params):
            out.add(prefix + name)
    return out


def test_every_command_with_json_is_listed_and_has_a_valid_schema() -> None:
    found = json_commands()
    assert found == set(jsonout.COMMANDS), (
        f"commands with --json: {sorted(found)}; jsonout.COMMANDS: {sorted(jsonout.COMMANDS)}: list each command "
        "with --json in tritonbuild/jsonout.py's COMMANDS, with its schema in tritonbuild/schemas/")
    shipped = {p.name for p in schema_path(None).parent.glob("*.schema.json")}
    assert shipped == {schema_path(c).name for c in [*jsonout.COMMANDS, None]}, (
        f"schemas shipped: {sorted(shipped)}: each command of jsonout.COMMANDS has tritonbuild/schemas/"
        "<command>.schema.json, and nothing else is there")
    for command in [*jsonout.COMMANDS, None]:
        schema = json.loads(schema_path(command).read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["properties"]["schema"] == {"const": jsonout.SCHEMA}
        if command is not None:
            assert schema["properties"]["command"] == {"const": command}


def test_the_schemas_ship_in_the_wheel() -> None:
    """hatch puts every file of the package into the wheel (no exclude, nothing of schemas/ ignored by git)."""
    hatch = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert hatch["packages"] == ["tritonbuild"] and "exclude" not in hatch and "only-include" not in hatch
    assert "jsonschema" in " ".join(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                                    ["optional-dependencies"]["test"])


def test_the_envelope_and_the_error_envelope() -> None:
    data = json_out(jsonout.dumps("doctor", {"rows": [{"name": "cmake", "status": "ok", "detail": "/usr/bin/cmake"}]}))
    assert (data["schema"], data["command"], data["exit"]) == (jsonout.SCHEMA, "doctor", 0)
    failed = json_out(jsonout.error("plan", "The source x does not exist.", "bad input", 2), 2)
    assert failed["error"] == {"message": "The source x does not exist.", "kind": "bad input"}
    with_log = json.loads(jsonout.error("build", "ninja failed", "build failed", 1, log="/c/build.log"))
    assert with_log["error"]["log"] == "/c/build.log"
    with pytest.raises(ValueError, match="envelope"):
        jsonout.envelope("plan", {"exit": 0})
    with pytest.raises(jsonschema.ValidationError):  # a payload that is not the command's shape fails its schema
        json_out(jsonout.dumps("plan", {"plans": []}))


def test_times_are_iso_8601_in_utc_with_the_zone() -> None:
    assert jsonout.iso_time(0) == "1970-01-01T00:00:00+00:00"
    assert jsonout.iso_time(1767225600.7) == "2026-01-01T00:00:00+00:00"


@pytest.mark.parametrize(("args", "command"), [
    (["plan", "--json"], "plan"),
    (["--debug", "llvm", "status", "--json", "--offline"], "llvm status"),
    (["llvm", "compat", "--json", "--range", "a..b"], "llvm compat"),
    (["check-llvm", "--jobs", "abc", "--json"], "check-llvm"),  # a bad value elsewhere: still JSON
    (["plan", "--bogus", "--json"], "plan"),
    (["verify", "--json"], "verify"),  # the missing WHEELS argument is a usage error, answered in JSON
    (["plan", "--source", "--json"], None),  # --json is --source's value here
    (["test", "lit", "--", "--json"], None),
    (["plan"], None),
    (["example", "--json"], None),  # no --json option: click refuses it in words
    (["nosuch", "--json"], None),
    (["llvm", "--json"], None),
    ([], None),
])
def test_the_command_of_a_json_run_is_found_from_its_arguments(args: list[str], command: str | None) -> None:
    assert json_command(args) == command


WORDS = st.sampled_from(["plan", "build", "llvm", "status", "compat", "--json", "--", "-j", "--jobs", "--source",
                         "--debug", "-h", "x", "", "-", "--json=1", "verify", "check-llvm", "\x00", "é"])


@settings(max_examples=200, deadline=None)
@given(st.lists(WORDS | st.text(max_size=8), max_size=8))
def test_any_arguments_give_a_listed_command_or_none(args: list[str]) -> None:
    found = json_command(args)
    assert found is None or (found in jsonout.COMMANDS and "--json" in args)
