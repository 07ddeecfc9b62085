"""``develop`` remembers per checkout (#45): the last request's flags are used by a bare ``develop``/``test`` of the
same checkout and said in one line; a flag typed (or set in the environment) now overrides that part; a record that
is not exactly what tritonbuild writes, with values the settings accept, is ignored with a note."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tritonbuild.execute import lastrequest as lr
from tritonbuild.gather.request import Request, flag_settings
from tritonbuild.reporter import silent
from tritonbuild.settings.model import SPEC_BY_NAME


def _request(tmp_path: Path, cwd: Path | None = None, env: dict[str, str] | None = None, **flags: Any) -> Request:
    return Request(flags, {"HOME": str(tmp_path), **(env or {})}, cwd or tmp_path,
                   cache_dir=str(tmp_path / "cache"), editable=True, warn=silent)


def _develop(req: Request, build: Path, *, forget: bool = False) -> lr.Recall:
    recalled = lr.recall(req, forget=forget)
    lr.remember(recalled.request, recalled, build)
    return recalled


def test_a_bare_develop_reuses_the_last_request_and_says_so(tmp_path: Path) -> None:
    tree, plug, build = tmp_path / "triton", tmp_path / "plug", tmp_path / "b1"
    tree.mkdir()
    plug.mkdir()
    first = _develop(_request(tmp_path, source=str(tree), backends="nvidia;amd", plugin_dirs=("plug",),
                              proton=False), build)
    assert first.used == "" and first.note is None  # nothing remembered yet
    again = lr.recall(_request(tmp_path, cwd=tree, source="."))
    assert again.request.flags["backends"] == "nvidia;amd"
    assert again.request.flags["plugin_dirs"] == (str(plug),)  # typed relative to the first cwd: kept absolute
    assert again.request.flags["proton"] is False
    assert again.used == f"--backends 'nvidia;amd' --plugin-dir {plug} --no-proton"
    assert json.loads((build / lr.IN_BUILD_DIR).read_text())["checkout"] == str(tree.resolve())


def test_a_flag_given_overrides_that_part_and_is_remembered(tmp_path: Path) -> None:
    tree = tmp_path / "triton"
    tree.mkdir()
    _develop(_request(tmp_path, source=str(tree), backends="nvidia", jobs=3), tmp_path / "b")
    over = _develop(_request(tmp_path, source=str(tree), backends="amd"), tmp_path / "b")
    assert over.request.flags["backends"] == "amd" and over.request.flags["jobs"] == 3
    assert over.used == "--jobs 3"
    later = lr.recall(_request(tmp_path, source=str(tree)))
    assert later.request.flags["backends"] == "amd" and later.used == "--backends amd --jobs 3"


def test_the_environment_overrides_a_remembered_flag(tmp_path: Path) -> None:
    tree = tmp_path / "triton"
    tree.mkdir()
    _develop(_request(tmp_path, source=str(tree), backends="nvidia", jobs=3), tmp_path / "b")
    got = lr.recall(_request(tmp_path, env={"TRITON_CODEGEN_BACKENDS": "amd"}, source=str(tree)))
    assert got.request.flags["backends"] is None and got.used == "--jobs 3"


def test_forget_and_another_checkout_start_afresh(tmp_path: Path) -> None:
    tree, other = tmp_path / "triton", tmp_path / "other"
    tree.mkdir()
    other.mkdir()
    _develop(_request(tmp_path, source=str(tree), backends="nvidia"), tmp_path / "b")
    assert lr.recall(_request(tmp_path, source=str(other))).used == ""
    fresh = _develop(_request(tmp_path, source=str(tree), jobs=2), tmp_path / "b", forget=True)
    assert fresh.used == "" and fresh.request.flags["backends"] is None
    assert lr.recall(_request(tmp_path, source=str(tree))).used == "--jobs 2"  # only what was typed with --forget


def _record(tmp_path: Path, tree: Path) -> Path:
    _develop(_request(tmp_path, source=str(tree), backends="nvidia"), tmp_path / "b")
    return lr.record_path(_request(tmp_path), tree.resolve())


def test_a_record_others_may_write_or_a_link_is_ignored_with_a_note(tmp_path: Path) -> None:
    tree = tmp_path / "triton"
    tree.mkdir()
    path = _record(tmp_path, tree)
    assert path.stat().st_mode & 0o077 == 0
    path.chmod(0o664)
    got = lr.recall(_request(tmp_path, source=str(tree)))
    assert got.used == "" and got.note and "others may write it" in got.note
    real = tmp_path / "elsewhere.json"
    path.chmod(0o600)
    os.replace(path, real)
    path.symlink_to(real)
    got = lr.recall(_request(tmp_path, source=str(tree)))
    assert got.used == "" and got.note and "cannot be opened" in got.note
    path.unlink()
    os.mkfifo(path)  # a FIFO must not hang develop
    assert "not a regular file" in (lr.recall(_request(tmp_path, source=str(tree))).note or "")


def test_a_cache_dir_that_is_a_file_gives_no_note_only_the_plans_error(tmp_path: Path) -> None:
    # the review of issue 45: `develop --cache-dir FILE` said the record "cannot be opened (Not a directory) ...
    # remembered in its place" before the real error (the cache root is a file, exit 2): noise, and untrue
    tree, a_file = tmp_path / "triton", tmp_path / "a-file"
    tree.mkdir()
    a_file.write_text("")
    for cache in (a_file, a_file / "sub"):
        got = lr.recall(Request({"source": str(tree)}, {"HOME": str(tmp_path)}, tmp_path, cache_dir=str(cache),
                                editable=True, warn=silent))
        assert got.note is None and got.used == "" and got.request.flags["source"] == str(tree)
    develop = tmp_path / "cache" / "develop"
    develop.parent.mkdir()
    develop.write_text("")  # <cache>/develop a file: no record either (develop then says it cannot remember)
    assert lr.recall(_request(tmp_path, source=str(tree))).note is None


def test_a_record_naming_another_checkout_or_a_value_the_settings_refuse_is_ignored(tmp_path: Path) -> None:
    tree = tmp_path / "triton"
    tree.mkdir()
    path = _record(tmp_path, tree)
    record = json.loads(path.read_text())
    for bad, why in (({"checkout": "/elsewhere"}, "another checkout"),
                     ({"flags": {"jobs": 0}}, "settings refuse"),
                     ({"flags": {"cmake_args": ["-DX=1\n"]}}, "control character"),
                     ({"flags": {"plugin_dirs": ["-evil"]}}, "starts with '-'"),
                     ({"flags": {"source": "/x"}}, "not a setting with a flag"),
                     ({"flags": {"proton": "yes"}}, "not yes or no"),
                     ({"extra": 1}, "not a record")):
        path.write_text(json.dumps({**record, **bad}))
        got = lr.recall(_request(tmp_path, source=str(tree)))
        assert got.used == "" and got.note and why in got.note, (bad, got.note)
        assert got.request.flags["backends"] is None


REMEMBERED = sorted(n for n in flag_settings() if not SPEC_BY_NAME[n].identity)
_text = st.text(st.characters(codec="utf-8"), max_size=12)
_value = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6), st.floats(allow_nan=True), _text,
                   st.lists(_text, max_size=3), st.dictionaries(_text, st.integers(), max_size=2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.dictionaries(st.one_of(st.sampled_from([*REMEMBERED, "source", "ref"]), _text), _value, max_size=4),
       recipe=st.one_of(st.none(), _text, st.integers()), raw=st.one_of(st.none(), st.binary(max_size=64)))
def test_any_record_is_either_ignored_or_holds_only_values_the_settings_accept(
        tmp_path: Path, flags: dict[str, Any], recipe: Any, raw: bytes | None) -> None:
    checkout = tmp_path / "co"
    path = tmp_path / "rec.json"
    data = raw if raw is not None else json.dumps(
        {"version": 1, "checkout": str(checkout), "recipe": recipe, "flags": flags}).encode()
    path.write_bytes(data)
    path.chmod(0o600)
    found, note = lr.read(path, checkout)
    if found is None:
        assert note and "is ignored" in note and "\n" not in note.strip()
        return
    assert note is None and found.checkout == str(checkout)
    for name, value in found.flags.items():
        assert name in REMEMBERED
        SPEC_BY_NAME[name].check(list(value) if isinstance(value, tuple) else value, "test")  # raises if refused
    line = lr.command_line(found.flags, found.recipe)
    assert "\n" not in line


def test_a_remembered_flag_is_said_to_come_from_the_record_with_the_way_out(tmp_path: Path) -> None:
    # the review of issue 45: a remembered --patch whose file was since removed blamed "cli --patch"
    from tritonbuild.gather.request import settings_of

    tree = tmp_path / "triton"
    tree.mkdir()
    _develop(_request(tmp_path, cwd=tree, source=".", patches=("../p.patch",), jobs=3), tmp_path / "b")
    again = lr.recall(_request(tmp_path, source=str(tree), jobs=4))
    assert again.request.flags["patches"] == (str(tmp_path / "p.patch"),)  # normalised, not triton/../p.patch
    _develop(_request(tmp_path, cwd=tree, source=".", deps=("abi=../abi", "g=https://h/g.git")), tmp_path / "b")
    assert lr.recall(_request(tmp_path, source=str(tree))).request.flags["deps"] == (
        f"abi={tmp_path / 'abi'}", "g=https://h/g.git")  # NAME kept, PATH absolute, a URL as typed
    _develop(_request(tmp_path, cwd=tree, source=".", patches=("../p.patch",), jobs=3), tmp_path / "b")
    s, _, _ = settings_of(again.request)
    record = lr.record_path(_request(tmp_path), tree.resolve())
    assert s.origin("patches") == f"the last develop request of this checkout, {record}; `develop --forget` drops it"
    assert s.origin("jobs") == "cli -j/--jobs" and s.jobs == 4  # typed now: its own origin


def test_a_record_that_cannot_be_written_is_said_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    # the review of issue 45: a directory in the record's place was "remembered in its place" silently, and each
    # attempt left a .tmp file that clean then counted as a develop request
    tree = tmp_path / "triton"
    tree.mkdir()
    req = _request(tmp_path, source=str(tree), backends="nvidia")
    record = lr.record_path(req, tree.resolve())
    record.mkdir(parents=True)
    recalled = lr.recall(req)
    said = lr.remember(recalled.request, recalled, tmp_path / "b")
    assert said is not None and f"{record} cannot be written" in said
    assert sorted(p.name for p in record.parent.iterdir()) == [record.name]  # no .tmp left beside it
    assert record.is_dir() and lr.records(tmp_path / "cache") == []


def test_the_checkout_is_the_resolved_source_setting_a_recipes_too(tmp_path: Path) -> None:
    """The checkout whose record a develop reads is the one the plan builds: a recipe's ``source`` is that checkout,
    as ``--source`` is (the flag as typed alone missed it: no record was read); settings the plan refuses give none."""
    tree = tmp_path / "triton"
    tree.mkdir()
    _develop(_request(tmp_path, source=str(tree), jobs=3), tmp_path / "b")
    recipe = tmp_path / "r.toml"
    recipe.write_text(f"source = {json.dumps(str(tree))}\n")
    by_recipe = Request({}, {"HOME": str(tmp_path)}, tmp_path, recipe=str(recipe), cache_dir=str(tmp_path / "cache"),
                        warn=silent)
    assert lr.checkout_of(by_recipe) == tree.resolve() and lr.recall(by_recipe).used == "--jobs 3"
    assert lr.checkout_of(_request(tmp_path, env={"MAX_JOBS": "x"}, source=str(tree))) is None
