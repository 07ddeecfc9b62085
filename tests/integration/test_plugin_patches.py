"""#47: ``--patch NAME=FILE`` patches a copy of the plugin NAME's dir, as ``--patch FILE`` patches a copy of the source
(tests/integration/test_patches.py): the plan builds the copy and says so, the plugin dir is never edited, a patch
that leaves the plugin dir or names no selected plugin is refused before anything is made, and one build shows a
plugin that does not compile without its patch built with it, the patch recorded in the wheel and by verify."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.helpers import WHEEL_ONLY, one_of
from tests.integration.conftest import LLVM, cuda_stub, flat, git_commit, refused, run_cli, snapshot
from tests.integration.conftest import offline_plan as plan
from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.gather.request import Request, make_plan
from tritonbuild.plan import Plan
from tritonbuild.reporter import silent

PIN = "cd" * 20





def _diff(root: Path, rel: str, new: list[str]) -> str:
    old = (root / rel).read_text().splitlines(keepends=True)
    return "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}"))


@pytest.fixture
def work(tmp_path: Path) -> dict[str, Path]:
    tree = example.write_tree(tmp_path / "triton")
    git_commit(tree)
    plugin = example.write_plugin(tmp_path / "shared-dir", "shared", triton_hash="ab" * 20)
    git_commit(plugin)
    (tmp_path / "pin.diff").write_text(_diff(plugin, "triton-hash.txt", [PIN + "\n"]))
    return {"tree": tree, "plugin": plugin, "pin": tmp_path / "pin.diff"}


def _plugin(data: dict) -> dict:
    return next(b for b in data["backends"] if b["origin"] == "plugin")


def test_a_plugin_patch_changes_the_plan_and_never_the_plugin_dir(work: dict[str, Path], tmp_path: Path) -> None:
    before = snapshot(work["plugin"])
    plain = one_of(plan(work["tree"], tmp_path, "--json", "--plugin-dir", str(work["plugin"]), check=True).stdout,
                   "plans")
    data = one_of(plan(work["tree"], tmp_path, "--json", "--plugin-dir", str(work["plugin"]), "--patch",
                       "shared=pin.diff", check=True).stdout, "plans")
    assert snapshot(work["plugin"]) == before and before[1] == ""
    got, was = _plugin(data), _plugin(plain)
    digest = hashlib.sha256(work["pin"].read_bytes()).hexdigest()
    assert was["triton_pin"] == "ab" * 20 and was.get("patches", []) == [] and was.get("checkout") is None
    assert got["triton_pin"] == PIN and got["checkout"] == str(work["plugin"])
    assert got["patches"] == [{"path": "pin.diff", "sha256": digest, "files": ["triton-hash.txt"]}]
    copy = Path(got["path"])
    assert copy.is_relative_to(tmp_path / "cache" / "patched") and (copy / "triton-hash.txt").read_text() == PIN + "\n"
    assert got["commit"] == was["commit"]  # the git facts are the plugin dir's own
    assert data["source"]["patches"] == [] and data["key"] != plain["key"]
    assert data["wheel"]["version"].startswith(plain["wheel"]["version"] + ".p")
    notes = flat(" ".join(data["notes"]))
    assert f"1 patch applied to tritonbuild's copy of the plugin dir {work['plugin']} at {copy}" in notes
    # the same entry from the environment: the same copy
    env = one_of(run_cli("plan", "--json", "--source", str(work["tree"]), "--llvm", str(LLVM), "--cache-dir",
                         str(tmp_path / "cache"), "--offline", "--plugin-dir", str(work["plugin"]), cwd=tmp_path,
                         env={"TRITONBUILD_PATCHES": "shared=pin.diff"}).stdout, "plans")
    assert _plugin(env)["path"] == got["path"] and env["key"] == data["key"]


def test_a_plugin_patch_for_no_selected_plugin_or_out_of_its_dir_is_refused(work: dict[str, Path],
                                                                            tmp_path: Path) -> None:
    before = snapshot(work["plugin"])
    refused(plan(work["tree"], tmp_path, "--plugin-dir", str(work["plugin"]), "--patch", "other=pin.diff"),
            "'other=pin.diff'", "no selected plugin has that name", f"'shared' ({work['plugin']})")
    refused(plan(work["tree"], tmp_path, "--patch", "shared=pin.diff"), "no --plugin-dir given")
    escape = tmp_path / "escape.diff"
    escape.write_text(work["pin"].read_text().replace("a/triton-hash.txt", "a/../triton/setup.py")
                      .replace("b/triton-hash.txt", "b/../triton/setup.py"))
    refused(plan(work["tree"], tmp_path, "--plugin-dir", str(work["plugin"]), "--patch", "shared=escape.diff"),
            "escape.diff", "for the plugin shared", "'a/../triton/setup.py'", "'..'")
    (tmp_path / "shared=pin.diff").write_text("")
    refused(plan(work["tree"], tmp_path, "--plugin-dir", str(work["plugin"]), "--patch", "shared=pin.diff"),
            "ambiguous", "./shared=pin.diff")
    assert snapshot(work["plugin"]) == before and not (tmp_path / "cache" / "patched").exists()


# --- what a hostile reviewer found (#47) -----------------------------------------------------------------------------

def _make_plan(work: dict[str, Path], tmp_path: Path, patches: tuple[str, ...], *, editable: bool = False,
               plugin: Path | None = None) -> Plan:
    kw = {"source": str(work["tree"]), "llvm": str(LLVM), "offline": True, "cache_dir": str(tmp_path / "cache"),
          "plugin_dirs": (str(plugin or work["plugin"]),), "patches": patches}
    return make_plan(Request.from_cli(kw, {**os.environ, "CUDA_HOME": cuda_stub()}, tmp_path, editable=editable,
                                      warn=silent))


def test_develop_warns_that_a_patched_plugin_is_installed_from_the_copy(work: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    develop = _make_plan(work, tmp_path, ("shared=pin.diff",), editable=True)
    copy = next(b.path for b in develop.backends if b.origin == "plugin")
    said = (f"the editable install uses tritonbuild's patched copy {copy} of the plugin shared, not the plugin dir "
            f"{work['plugin']}")
    assert any(said in w for w in develop.warnings), develop.warnings
    assert not any(said in w for w in _make_plan(work, tmp_path, ("shared=pin.diff",)).warnings)


def test_a_plugin_patch_may_not_rename_the_plugin(work: dict[str, Path], tmp_path: Path) -> None:
    rename = tmp_path / "rename.diff"
    rename.write_text(_diff(work["plugin"], "backend/name.conf", ["plug_z\n"]))
    before = snapshot(work["plugin"])
    refused(plan(work["tree"], tmp_path, "--plugin-dir", str(work["plugin"]), "--patch", "shared=rename.diff"),
            "'shared=rename.diff'", "'backend/name.conf'", "NAME= selects a plugin by that name")
    assert snapshot(work["plugin"]) == before and not (tmp_path / "cache" / "patched").exists()


def test_a_plugin_dir_name_for_name_is_refused_with_the_backend_name(work: dict[str, Path], tmp_path: Path) -> None:
    mine = example.write_plugin(tmp_path / "my-plug", "my_plug", name_conf=False)
    (tmp_path / "fix.diff").write_text(_diff(mine, "backend/compiler.py", ["# fixed\n"]))
    for entry, name in (("my-plug=fix.diff", "my_plug"), ("my.plug=fix.diff", "my_plug")):
        with pytest.raises(UserError, match=re.escape(f"NAME must be the plugin's backend name (`{name}`): write "
                                                      f"--patch {name}=fix.diff")):
            _make_plan(work, tmp_path, (entry,), plugin=mine)
    bad = example.write_plugin(tmp_path / "1plug", "1plug", name_conf=False)
    with pytest.raises(UserError) as got:  # no identifier: the plugin's own refusal, not 'does not exist'
        _make_plan(work, tmp_path, ("1plug=fix.diff",), plugin=bad)
    assert "1plug" in str(got.value) and "does not exist" not in str(got.value)
    with pytest.raises(UserError, match=re.escape("write --patch shared=pin.diff")):
        _make_plan(work, tmp_path, ("shared-dir=pin.diff",))  # the dir's name, and no such file
    (tmp_path / "shared-dir=pin.diff").write_text(work["pin"].read_text().replace("a/triton-hash.txt",
                                                  "a/README.md").replace("b/triton-hash.txt", "b/README.md"))
    with pytest.raises(UserError, match="does not apply to the source"):  # a file of that name: a source patch
        _make_plan(work, tmp_path, ("shared-dir=pin.diff",))


def test_a_plugin_patchs_refusals_name_the_plugin_dir_not_the_source(work: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "stale.diff").write_text(work["pin"].read_text().replace("-" + "ab" * 20, "-" + "ef" * 20))
    with pytest.raises(UserError, match="does not apply to the plugin dir shared") as got:
        _make_plan(work, tmp_path, ("shared=stale.diff",))
    assert "source" not in str(got.value).replace("Triton source", "")
    (work["plugin"] / "loop").symlink_to("loop")
    with pytest.raises(UserError, match=f"The plugin dir shared {re.escape(str(work['plugin']))} holds 1 entry "
                                        "that a patched copy of the plugin dir shared cannot carry") as got:
        _make_plan(work, tmp_path, ("shared=pin.diff",))
    assert "source" not in str(got.value) and "without the patches for the plugin dir shared" in str(got.value)


def test_the_text_plan_shows_a_plugin_patch_as_the_source_patch_is_shown(work: dict[str, Path],
                                                                        tmp_path: Path) -> None:
    odd = tmp_path / "[bold]x.diff"
    shutil.copy(work["pin"], odd)
    shown = flat(plan(work["tree"], tmp_path, "--plugin-dir", str(work["plugin"]), "--patch", f"shared={odd.name}",
                      check=True).stdout)
    digest = hashlib.sha256(odd.read_bytes()).hexdigest()
    assert f"patches (plugin shared) [bold]x.diff (sha256 {digest[:16]}; triton-hash.txt); applied to the copy " \
           f"{tmp_path / 'cache' / 'patched'}" in shown, shown
    assert f"(made from the plugin dir {work['plugin']})" in shown


# --- one real build: a plugin that does not compile without its patch ------------------------------------------------

def test_a_plugin_that_needs_its_patch_builds_with_it_and_the_wheel_says_so(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    git_commit(tree)
    plugin = example.write_plugin(tmp_path / "broken-plugin", "broken", broken=True)
    git_commit(plugin)
    rel = "lib/Plugin.cpp"
    lines = (plugin / rel).read_text().splitlines(keepends=True)
    fix = tmp_path / "unbreak.diff"
    fix.write_text(_diff(plugin, rel, [line for line in lines if "#error" not in line]))
    before = snapshot(plugin)
    ptxas = tmp_path / "ptxas"
    shutil.copy(shutil.which("true") or "/bin/true", ptxas)
    env = {**WHEEL_ONLY, "TRITON_PTXAS_PATH": str(ptxas)}
    proc = run_cli("build", "--json", "--source", str(tree), "--llvm", str(LLVM), "--offline", "--backends",
                   "nvidia", "--no-proton", "--plugin-dir", str(plugin), "--cache-dir", str(tmp_path / "cache"),
                   "--out", str(tmp_path / "dist"), "--patch", f"broken={fix}", cwd=tmp_path, env=env)
    result = one_of(proc.stdout, "wheels")
    assert snapshot(plugin) == before
    named = {"path": str(fix), "sha256": hashlib.sha256(fix.read_bytes()).hexdigest(), "files": [rel]}
    with zipfile.ZipFile(result["wheel"]) as zf:
        info = json.loads(zf.read("triton/_build_info.json"))
        assert "triton/backends/broken/compiler.py" in zf.namelist()
    entry = next(b for b in info["backends"] if b["name"] == "broken")
    assert entry["patches"] == [named] and entry["checkout"] == str(plugin) and info["source"]["patches"] == []
    manifest = json.loads(next((tmp_path / "dist").glob("*.manifest.json")).read_text())
    assert manifest["plugin_patches"] == {"broken": [named]}
    shown = flat(run_cli("verify", "--no-import", result["wheel"], cwd=tmp_path).stdout)
    assert f"patches: {fix} (sha256 {named['sha256']}) applied to the plugin broken" in shown
    assert subprocess.run(["git", "status", "--porcelain"], cwd=plugin, capture_output=True, text=True,
                          check=True).stdout == ""
