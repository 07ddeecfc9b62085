"""The typed request (#37): ``Request.from_cli`` is the one reader of click's keyword mapping; the environment is
a snapshot taken there (later changes are not seen, and it cannot be changed through the request); ``--python``
becomes a tuple; the recipe, cache dir and out dir are carried as given; ``settings_of`` resolves the request's
settings from its own env and recipe, never the process's."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tritonbuild.cli.main import cli
from tritonbuild.errors import UserError
from tritonbuild.gather.request import Request, flag_settings, make_plan, settings_of
from tritonbuild.reporter import silent


def test_the_environment_is_a_snapshot_that_cannot_be_changed_through_the_request(tmp_path: Path) -> None:
    env = {"MAX_JOBS": "3", "HOME": str(tmp_path)}
    req = Request.from_cli({}, env, tmp_path, warn=silent)
    env["MAX_JOBS"] = "9"
    env["LATER"] = "x"
    assert dict(req.env) == {"MAX_JOBS": "3", "HOME": str(tmp_path)}
    with pytest.raises(TypeError):
        req.env["MAX_JOBS"] = "1"  # type: ignore[index]
    with pytest.raises(TypeError):
        req.flags["jobs"] = 1  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.out = "elsewhere"  # type: ignore[misc]


def test_python_is_a_tuple_whether_given_once_many_times_or_not_at_all(tmp_path: Path) -> None:
    assert Request.from_cli({"python": ("3.12", "/opt/py/bin/python")}, {}, tmp_path, warn=silent).pythons == (
        "3.12", "/opt/py/bin/python")
    assert Request.from_cli({"python": "3.13t"}, {}, tmp_path, warn=silent).pythons == ("3.13t",)  # a provenance's one
    assert Request.from_cli({"python": ()}, {}, tmp_path, warn=silent).pythons == ()
    assert Request.from_cli({}, {}, tmp_path, warn=silent).pythons == ()


def test_recipe_cache_dir_and_out_are_carried_as_given_and_empty_is_not_given(tmp_path: Path) -> None:
    req = Request.from_cli({"recipe": "nightly", "cache_dir": "c", "out": "o"}, {}, tmp_path, warn=silent)
    assert (req.recipe, req.cache_dir, req.out, req.cwd) == ("nightly", "c", "o", tmp_path)
    none = Request.from_cli({"recipe": "", "cache_dir": None}, {}, tmp_path, warn=silent)
    assert (none.recipe, none.cache_dir, none.out) == (None, None, None)
    # what the command itself decides wins over the mapping
    assert Request.from_cli({"out": "o"}, {}, tmp_path, out="dist", smoke_test=False, warn=silent).out == "dist"


def test_every_flag_setting_is_in_the_request_and_not_given_is_none(tmp_path: Path) -> None:
    req = Request.from_cli({"jobs": 4, "backends": "amd", "plugin_dirs": ("p",)}, {}, tmp_path, warn=silent)
    assert set(req.flags) == set(flag_settings())
    assert (req.flags["jobs"], req.flags["backends"], req.flags["plugin_dirs"], req.flags["llvm"]) == (
        4, "amd", ("p",), None)
    again = req.with_flags(llvm="system", jobs=None)
    assert (again.flags["llvm"], again.flags["jobs"], req.flags["llvm"]) == ("system", None, None)
    assert again.env == req.env and again.cwd == req.cwd


def test_a_key_that_is_neither_a_flag_setting_nor_a_request_option_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no_smoke_test"):
        Request.from_cli({"no_smoke_test": True}, {}, tmp_path, warn=silent)
    with pytest.raises(ValueError, match="cache_dir"):
        Request({"cache_dir": "x"}, {}, tmp_path, warn=silent)  # a request option is no setting


def test_requests_of_the_same_input_are_equal(tmp_path: Path) -> None:
    kw = {"backends": "amd;nvidia", "python": ("3.12",), "recipe": "r.toml"}
    def req(k: dict[str, Any], env: dict[str, str]) -> Request:
        return Request.from_cli(k, env, tmp_path, warn=silent)

    assert req(kw, {"A": "1"}) == req(dict(kw), {"A": "1"})
    assert req(kw, {"A": "1"}) != req(kw, {"A": "2"})


def test_settings_come_from_the_requests_env_and_recipe_not_the_process(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_JOBS", "7")
    monkeypatch.setenv("TRITON_WHEEL_NAME", "from-the-process")
    (tmp_path / "r.toml").write_text(f'cache_dir = "{tmp_path / "cache"}"\nwheel_name = "from-the-recipe"\n')
    env = {"HOME": str(tmp_path), "MAX_JOBS": "3"}
    s, cache_dir, root = settings_of(Request.from_cli({"recipe": "r.toml"}, env, tmp_path, warn=silent))
    assert (s.jobs, s.origin("jobs")) == (3, "env MAX_JOBS")
    assert s.wheel_name == "from-the-recipe" and "r.toml" in s.origin("wheel_name")
    assert cache_dir == str(tmp_path / "cache") and root == tmp_path / "cache"
    typed = settings_of(Request.from_cli({"recipe": "r.toml", "jobs": 5, "cache_dir": str(tmp_path / "c2")}, env,
                                         tmp_path, warn=silent))
    assert (typed[0].jobs, typed[0].origin("jobs"), typed[2]) == (5, "cli -j/--jobs", tmp_path / "c2")


def test_a_command_for_one_interpreter_refuses_several_before_any_work(tmp_path: Path) -> None:
    req = Request.from_cli({"python": ("3.12", "3.13"), "source": str(tmp_path / "none")}, dict(os.environ),
                           tmp_path, warn=silent)
    with pytest.raises(UserError, match="--python was given 2 times"):
        make_plan(req)


def test_no_smoke_test_says_it_skips_the_compile_check_too() -> None:
    for args in (["build", "--help"], ["rebuild", "--help"]):
        out = " ".join(CliRunner().invoke(cli, args).output.split())
        assert "--no-smoke-test" in out and "and with it the compile check" in out, out
