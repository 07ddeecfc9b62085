"""#47: ``--patch NAME=FILE`` names the plugin a patch is for. The entry is read the same way wherever it comes from
(the command line, TRITONBUILD_PATCHES, a recipe), every place that takes a patch as a path takes its FILE, and any
entry is either refused in one paragraph (UserError: exit 2) or read soundly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tritonbuild.errors import UserError
from tritonbuild.execute import container, lastrequest
from tritonbuild.settings import recipes
from tritonbuild.settings.model import join_patch, resolve_settings, split_patch


@pytest.mark.parametrize(("entry", "expected"), [
    ("fix.diff", (None, "fix.diff")),
    ("shared=fix.diff", ("shared", "fix.diff")),
    ("triton_shared=/abs/dir/x=y.diff", ("triton_shared", "/abs/dir/x=y.diff")),  # only the first '=' splits
    ("_p2=a", ("_p2", "a")),
    ("./shared=fix.diff", (None, "./shared=fix.diff")),  # a file named like NAME=FILE, for the source
    ("dir/shared=fix.diff", (None, "dir/shared=fix.diff")),
    ("triton-shared=fix.diff", (None, "triton-shared=fix.diff")),  # no backend name holds '-'
    ("2x=fix.diff", (None, "2x=fix.diff")),
    ("=fix.diff", (None, "=fix.diff")),
    ("shared=", ("shared", "")),
])
def test_an_entry_is_a_plugin_patch_only_when_it_starts_with_an_identifier_and_equals(
        entry: str, expected: tuple[str | None, str]) -> None:
    assert split_patch(entry) == expected
    assert join_patch(*split_patch(entry)) == entry


@pytest.mark.parametrize("entry", ["shared=", "shared=-x.diff", "shared=" + "a" * 300, "-x.diff", ""])
def test_a_plugin_patch_whose_file_is_no_path_is_refused_as_a_source_patch_would_be(entry: str) -> None:
    with pytest.raises(UserError, match="patches"):
        resolve_settings({"patches": [entry]}, {})
    with pytest.raises(UserError, match="TRITONBUILD_PATCHES"):
        resolve_settings({}, {"TRITONBUILD_PATCHES": f"ok.diff;{entry}" if entry else ";"})


def test_the_environment_takes_the_same_entries() -> None:
    got = resolve_settings({}, {"TRITONBUILD_PATCHES": "shared=a.diff;b.diff"}).patches
    assert [split_patch(e) for e in got] == [("shared", "a.diff"), (None, "b.diff")]


def test_a_recipes_plugin_patch_is_joined_to_the_recipe_and_stays_in_its_directory(tmp_path: Path) -> None:
    recipe = tmp_path / "r" / "recipe.toml"
    recipe.parent.mkdir()
    got = recipes.parse({"patches": ["shared=p.diff", "q.diff"]}, recipe).settings()["patches"]
    assert got == [f"shared={recipe.parent / 'p.diff'}", str(recipe.parent / "q.diff")]
    with pytest.raises(UserError, match="lies outside the recipe's directory"):
        recipes.parse({"patches": ["shared=../p.diff"]}, recipe)
    (recipe.parent / "shared=p.diff").write_text("")
    with pytest.raises(UserError, match=r"ambiguous.*'\./shared=p\.diff'"):
        recipes.parse({"patches": ["shared=p.diff"]}, recipe)
    assert recipes.parse({"patches": ["./shared=p.diff"]}, recipe).settings()["patches"] == [
        str(recipe.parent / "./shared=p.diff")]


def test_a_remembered_request_and_the_container_take_the_file_as_the_path(tmp_path: Path) -> None:
    got = lastrequest._absolute("patches", ("shared=p.diff", "q.diff"), tmp_path)
    assert got == (f"shared={tmp_path / 'p.diff'}", str(tmp_path / "q.diff"))
    (tmp_path / "p.diff").write_text("")
    c = container.Container(engine="/usr/bin/docker", image="i", python="python3", mounts=(), passed=(), values=(),
                            workdir=str(tmp_path), user=(1, 1), offline=True, venv="/v", cache=str(tmp_path / "c"),
                            out=str(tmp_path / "o"))
    args = container.inner_args([("patches", "--patch", "shared=p.diff")], c, tmp_path)
    assert args[:2] == ["--patch", f"shared={tmp_path / 'p.diff'}"]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PIECES = st.sampled_from(["=", "/", ".", "..", "-", "shared", "_", "x", "1", " ", "\t", "\n", "\0", "\x1b[2J", "é",
                           "\udcff", ";", "a" * 256])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=8).map("".join) | st.text(max_size=40))
def test_any_entry_is_refused_in_one_paragraph_or_read_soundly(entry: str) -> None:
    for cli, env in (({"patches": [entry]}, {}), ({}, {"TRITONBUILD_PATCHES": entry})):
        try:
            value = resolve_settings(cli, env).patches
        except UserError as exc:
            assert str(exc).strip() and "\n\n" not in str(exc)
            continue
        for item in value:
            target, file = split_patch(item)
            assert join_patch(target, file) == item and file.strip() and not file.startswith("-")
            assert target is None or (_IDENT.fullmatch(target) and item.startswith(target + "="))


_NEAR = st.sampled_from(["my-plug", "my.plug", "my_plug", "My-plug", "./my-plug", "d/my-plug", "my-plug-", "-", "",
                         "\x1b[2J", "\udcff", "a" * 256])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.tuples(_NEAR, st.lists(_PIECES, max_size=4).map("".join)).map("=".join))
def test_an_entry_meant_for_a_plugin_by_its_dir_name_is_refused_with_the_backend_name(tmp_path: Path,
                                                                                      entry: str) -> None:
    """(#47) ``my-plug=FILE`` for the plugin dir my-plug (backend name my_plug) is not read as a source patch that
    then 'does not exist': it is refused, saying to write ``my_plug=FILE``; anything else splits as before."""
    from tritonbuild import example
    from tritonbuild.gather.collect import split_patches

    plugin = tmp_path / "my-plug"
    if not plugin.exists():
        example.write_plugin(plugin, "my_plug", name_conf=False)
    try:
        o = resolve_settings({"patches": [entry], "plugin_dirs": [str(plugin)]}, {})
    except UserError:
        return  # no path: refused as before
    before = entry.partition("=")[0]
    try:
        source, plugins = split_patches(o, tmp_path)
    except UserError as exc:
        assert str(exc).strip() and "\n\n" not in str(exc)
        assert "write --patch my_plug=" in str(exc) or "no selected plugin" in str(exc) or "ambiguous" in str(exc)
        return
    meant = "/" not in before and before.replace("-", "_").replace(".", "_") == "my_plug"
    assert split_patch(entry)[0] is not None or not meant, entry  # my-plug=, my.plug= are refused
    assert (source, plugins) in (([entry], {}), ([], {split_patch(entry)[0]: [split_patch(entry)[1]]}))
