from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.gather.git import submodules
from tritonbuild.gather.plugins import read_all
from tritonbuild.resolve import plugins as pure
from tritonbuild.resolve.plugins import derive_name, is_identifier
from tritonbuild.resolve.source import GitState

IN_TREE = ("nvidia", "amd")
H = "2eb709b95d8f521aa15401e159fac0729d56a677"


def resolve_plugins(dirs, *, cwd: Path, **kw):  # type: ignore[no-untyped-def]
    """The gather step (what each dir holds), then the pure check."""
    return pure.resolve_plugins(dirs, files=read_all([d for d, _ in dirs], cwd), **kw)


def resolve(dirs, cwd: Path, commit: str | None = None):
    return resolve_plugins([(str(d), "--plugin-dir") for d in dirs], cwd=cwd, in_tree=IN_TREE,
                           source_commit=commit)


def test_name_from_name_conf_without_trailing_newline(plugin, tmp_path: Path) -> None:
    p = plugin("triton-shared", "triton_shared", trailing_newline=False)
    assert (p / "backend" / "name.conf").read_text() == "triton_shared"
    plugins, notes, _ = resolve([p], tmp_path)
    assert plugins[0].name == "triton_shared" and plugins[0].name_from == "name.conf"
    assert plugins[0].language == ("triton_shared",)
    assert notes == []


def test_name_derived_from_dashed_directory(plugin, tmp_path: Path) -> None:
    p = plugin("my-plugin.x", "my_plugin_x", name_conf=False)
    plugins, notes, _ = resolve([p], tmp_path)
    assert plugins[0].name == "my_plugin_x" and plugins[0].name_from == "directory name"
    assert any("derived from the directory name" in n for n in notes)


def test_derive_rule() -> None:
    assert derive_name("triton-shared") == "triton_shared"
    assert not is_identifier("1abc") and not is_identifier("a-b") and not is_identifier("class")


def test_invalid_name_in_name_conf(plugin, tmp_path: Path) -> None:
    p = plugin("bad", "bad")
    (p / "backend" / "name.conf").write_text("not-valid\n")
    with pytest.raises(UserError, match=r"'not-valid'.*not a C and Python identifier"):
        resolve([p], tmp_path)


def test_derived_name_that_is_not_an_identifier(plugin, tmp_path: Path) -> None:
    p = plugin("9lives", "x", name_conf=False)
    with pytest.raises(UserError, match="'9lives'"):
        resolve([p], tmp_path)


@pytest.mark.parametrize("missing", ["backend", "backend/compiler.py", "backend/driver.py"])
def test_missing_parts(plugin, tmp_path: Path, missing: str) -> None:
    import shutil

    p = plugin("plug")
    target = p / missing
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    with pytest.raises(UserError, match=missing.split("/")[-1] if "/" in missing else "no backend/ directory"):
        resolve([p], tmp_path)


def test_missing_dir(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        resolve([tmp_path / "nope"], tmp_path)


def test_collision_with_in_tree(plugin, tmp_path: Path) -> None:
    p = plugin("nvidia-plugin", "nvidia")
    with pytest.raises(UserError, match="also the in-tree backend third_party/nvidia"):
        resolve([p], tmp_path)


def test_collision_between_plugins_names_both_paths(plugin, tmp_path: Path) -> None:
    a = plugin("a", "same")
    b = plugin("b", "same")
    with pytest.raises(UserError) as err:
        resolve([a, b], tmp_path)
    assert str(a) in str(err.value) and str(b) in str(err.value)


def test_same_dir_twice(plugin, tmp_path: Path) -> None:
    a = plugin("a")
    with pytest.raises(UserError, match="given twice"):
        resolve_plugins([(str(a), "--plugin-dir"), ("a", "env TRITON_PLUGIN_DIRS")], cwd=tmp_path,
                        in_tree=IN_TREE, source_commit=None)


def test_relative_path_is_made_absolute(plugin, tmp_path: Path) -> None:
    plugin("rel")
    plugins, notes, _ = resolve_plugins([("rel", "--plugin-dir")], cwd=tmp_path, in_tree=IN_TREE,
                                        source_commit=None)
    assert plugins[0].path == str(tmp_path / "rel")
    assert "is used as" in notes[0]


def test_triton_pin_matches_or_warns(plugin, tmp_path: Path) -> None:
    p = plugin("pinned", triton_hash=H)
    plugins, _, warnings = resolve([p], tmp_path, commit=H)
    assert plugins[0].pin_matches_source is True and warnings == []
    plugins, _, warnings = resolve([p], tmp_path, commit="f" * 40)
    assert plugins[0].pin_matches_source is False
    assert "pins Triton 2eb709b95d8f" in warnings[0]
    plugins, _, _ = resolve([p], tmp_path, commit=None)
    assert plugins[0].pin_matches_source is None


def test_triton_submodule_is_the_pin_without_triton_hash_txt(plugin, tmp_path: Path) -> None:
    p = plugin("old-shared", "triton_shared")
    git = {str(p): GitState(commit="a" * 40, dirty=False, submodules=(("docs", "b" * 40), ("triton", H)))}
    found, _, warnings = resolve_plugins([(str(p), "--plugin-dir")], cwd=tmp_path, in_tree=IN_TREE,
                                         source_commit="f" * 40, git_states=git)
    assert (found[0].triton_pin, found[0].triton_pin_from, found[0].pin_matches_source) == \
        (H, "its triton submodule", False)
    assert "(its triton submodule) but the source is at ffffffffffff" in warnings[0]
    (p / "triton-hash.txt").write_text("f" * 40)
    found, _, warnings = resolve_plugins([(str(p), "--plugin-dir")], cwd=tmp_path, in_tree=IN_TREE,
                                         source_commit="f" * 40, git_states=git)
    assert (found[0].triton_pin_from, found[0].pin_matches_source, warnings) == ("triton-hash.txt", True, [])


def test_submodules_of_ls_tree_output() -> None:
    out = (f"100644 blob {'1' * 40}\tCMakeLists.txt\n040000 tree {'2' * 40}\tbackend\n"
           f"160000 commit {H}\ttriton\n160000 commit {'3' * 40}\tthird party/x\n")
    assert submodules(out) == (("triton", H), ("third party/x", "3" * 40))
    assert submodules("") == ()


def test_a_tool_cmake_builds_is_not_a_package_extra(plugin, tmp_path: Path) -> None:
    p = plugin("shared", "triton_shared")
    (p / "tools" / "pyhelper").mkdir()  # a Python tools extra, like nvidia's tools/cuda
    assert (p / "tools" / "triton_shared-opt" / "CMakeLists.txt").is_file()  # like triton-shared-opt
    plugins, _, _ = resolve([p], tmp_path)
    assert plugins[0].tools == ("pyhelper",)


def test_declared_llvm_targets(plugin, tmp_path: Path) -> None:
    p = plugin("spv", llvm_targets=("SPIRV",))
    plugins, _, _ = resolve([p], tmp_path)
    assert plugins[0].llvm_targets == ("SPIRV",)


@pytest.mark.parametrize("name", ["compiler", "driver"])
def test_a_plugin_named_like_a_module_of_triton_backends_is_refused(plugin, tmp_path: Path, name: str) -> None:
    # triton/backends/compiler/ would hide Triton's triton/backends/compiler.py: the import fails after the build
    p = plugin("pc", name)
    with pytest.raises(UserError, match=rf"'{name}' .* is the name of a module of Triton's own package"):
        resolve([p], tmp_path)


@pytest.mark.parametrize("pin", ["HEAD", "master", "--upload-pack=touch /tmp/PWN", "\x1b]0;PWN\x07", "abc"])
def test_a_plugin_pin_that_is_no_commit_is_refused_escaped(plugin, tmp_path: Path, pin: str) -> None:
    p = plugin("pinned", triton_hash="0" * 40)
    (p / "triton-hash.txt").write_text(pin + "\n")
    with pytest.raises(UserError, match="which is not a commit") as err:
        resolve([p], tmp_path)
    assert "\x1b" not in str(err.value) and "\x07" not in str(err.value)
