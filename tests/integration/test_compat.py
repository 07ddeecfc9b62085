"""C++ drift between a plugin's Triton pin and the source, from the source's git history (real git)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import one_of
from tests.integration.conftest import git_commit, run_cli
from tritonbuild import example


def history(tmp_path: Path) -> tuple[Path, str]:
    """A source whose HEAD is 3 commits past ``pin``; one of them changes a header the plugin includes."""
    root = example.write_tree(tmp_path / "triton")
    pin = git_commit(root, "the plugin's pin")
    core = root / "include" / "triton" / "Core.h"
    core.write_text(core.read_text() + "// a changed interface\n")
    git_commit(root, "Change Core.h", init=False)
    (root / "lib" / "Core.cpp").write_text((root / "lib" / "Core.cpp").read_text() + "\n")
    git_commit(root, "Touch Core.cpp", init=False)
    (root / "python" / "triton" / "knob.py").write_text("X = 1\n")
    git_commit(root, "Add a knob", init=False)
    return root, pin


def check(source: Path, plugin: Path, cwd: Path) -> tuple[int, dict]:
    proc = run_cli("backends", "--check", "--json", "--source", str(source), "--plugin-dir", str(plugin), cwd=cwd,
                   check=False)
    data = json.loads(proc.stdout)
    return proc.returncode, next(b["api"] for b in data["backends"] if b["origin"] == "plugin")


def test_commits_since_the_pin_and_those_touching_included_headers(tmp_path: Path) -> None:
    source, pin = history(tmp_path)
    plugin = example.write_plugin(tmp_path / "plugin", "shared", triton_hash=pin)
    rc, api = check(source, plugin, tmp_path)
    drift = api["drift"]
    assert rc == 0 and api["verdict"] == "risky"
    assert drift["status"] == "ok" and drift["commits"] == 3 and drift["touching_count"] == 1
    assert drift["headers"] == ["include/triton/Core.h"]
    assert [t["subject"] for t in drift["touching"]] == ["Change Core.h"]
    assert any("1 of the 3 source commits since the plugin's Triton pin changed headers it includes" in f["message"]
               for f in api["findings"])
    same = example.write_plugin(tmp_path / "same", "same", triton_hash=git_head(source))
    assert check(source, same, tmp_path)[1] == {"verdict": "compatible", "findings": [], "drift": None}


def test_a_shallow_clone_and_a_pin_not_in_history_are_said_so(tmp_path: Path) -> None:
    source, pin = history(tmp_path)
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{source}", str(shallow)], check=True)
    plugin = example.write_plugin(tmp_path / "plugin", "shared", triton_hash=pin)
    _, api = check(shallow, plugin, tmp_path)
    assert "not found (the source is a shallow clone)" in api["drift"]["status"]
    assert "git fetch --unshallow" in api["drift"]["status"]
    stranger = example.write_plugin(tmp_path / "stranger", "stranger", triton_hash="0123456789" * 4)
    _, api = check(source, stranger, tmp_path)
    assert "not found (the source's history does not have it)" in api["drift"]["status"]


def test_a_plugin_for_an_older_interface_fails_the_check_and_the_build_before_compiling(tmp_path: Path) -> None:
    source = example.write_tree(tmp_path / "triton")
    old = example.write_plugin(tmp_path / "old", "old", api="old")
    rc, api = check(source, old, tmp_path)
    assert rc == 1 and api["verdict"] == "will fail"
    proc = run_cli("build", "--source", str(source), "--plugin-dir", str(old), "--cache-dir", str(tmp_path / "c"),
                   cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "does not define hash" in " ".join(proc.stderr.split())
    assert not (tmp_path / "c" / "build").exists()  # refused before any build dir exists


def test_a_stage_calling_a_binding_the_old_way_is_named_before_building(tmp_path: Path) -> None:
    source = example.write_tree(tmp_path / "triton")  # its ir.cc binds pass_manager.run(mod, repro_pipeline_tag)
    plugin = example.write_plugin(tmp_path / "plugin", "old_stages")
    compiler = plugin / "backend" / "compiler.py"
    stage = ("\n\ndef make_ttir(mod, metadata, options):\n    from triton._C.libtriton import ir\n\n"
             "    pm = ir.pass_manager()\n    pm.run(mod{})\n    return mod\n")
    base = compiler.read_text()
    compiler.write_text(base + stage.format(""))  # May 2025 trees bound run(mod)
    rc, api = check(source, plugin, tmp_path)
    assert rc == 1 and api["verdict"] == "will fail", api
    message = next(f["message"] for f in api["findings"] if "pass_manager" in f["message"])
    line = compiler.read_text().splitlines().index("    pm.run(mod)") + 1
    assert message.startswith(f"compiler.py:{line} calls pass_manager.run() with 1 argument(s)")
    assert "binds it with 2" in message and "incompatible function arguments" in message
    proc = run_cli("plan", "--source", str(source), "--plugin-dir", str(plugin), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "pass_manager.run()" in " ".join(proc.stderr.split())
    compiler.write_text(base + stage.format(', "make_ttir"'))  # as the source binds it: nothing to say
    rc, api = check(source, plugin, tmp_path)
    assert rc == 0 and not any("pass_manager" in f["message"] for f in api["findings"]), api


def git_head(root: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


def test_a_dep_given_as_a_git_url_is_cloned_at_the_pinned_tag(tmp_path: Path) -> None:
    repo = example.write_googletest(tmp_path / "googletest-repo", version="1.16.0")
    git_commit(repo, "googletest 1.16")
    subprocess.run(["git", "tag", "v1.16.0"], cwd=repo, check=True)
    (repo / "include" / "gtest" / "gtest.h").write_text('#pragma once\n#define TB_GTEST_VERSION "1.17.0"\n')
    git_commit(repo, "googletest 1.17", init=False)
    subprocess.run(["git", "tag", "v1.17.0"], cwd=repo, check=True)
    source = example.write_tree(tmp_path / "triton")
    args = ["plan", "--json", "--source", str(source), "--cmake-arg=-DTRITON_BUILD_UT=ON", "--offline",
            "--cache-dir", str(tmp_path / "cache")]
    online = [a for a in args if a != "--offline"]  # offline never clones (#35): a first plan fills the cache
    run_cli(*online, f"--dep=googletest=file://{repo}", cwd=tmp_path)
    plan = one_of(run_cli(*args, f"--dep=googletest=file://{repo}", cwd=tmp_path).stdout, "plans")
    deps = {d["name"]: d for d in plan["deps"]}
    dep = deps["googletest"]
    assert dep["tag"] == "v1.17.0" and dep["tag_matches"] is True
    clone = Path(dep["supplied"])
    assert clone.is_relative_to(tmp_path / "cache") and "1.17.0" in (clone / "include/gtest/gtest.h").read_text()
    assert f"googletest={clone}" in dict(plan["cmake"]["defines"])["TRITONBUILD_DEPS"].split(";")
    # a local checkout at another tag is used, with a warning
    subprocess.run(["git", "checkout", "-q", "v1.16.0"], cwd=repo, check=True)
    plan = one_of(run_cli(*args, f"--dep=googletest={repo}", cwd=tmp_path).stdout, "plans")
    assert {d["name"]: d for d in plan["deps"]}["googletest"]["tag_matches"] is False
    assert any("not at the tree's pinned v1.17.0" in w for w in plan["warnings"])
