"""Trust at the boundary (#35): git run on a plugin's or the source's repository runs none of the programs its own
config names, ``--offline`` clones and fetches nothing, and URLs or refs git could misread are refused first."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import one_of
from tests.integration.conftest import flat, git_commit, plan_json, run_cli
from tritonbuild.errors import UserError
from tritonbuild.gather import compat
from tritonbuild.system import safegit


def repo(path: Path) -> Path:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(path)]
    path.mkdir(parents=True)
    (path / "a.txt").write_text("one\n")
    (path / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run([*git, *argv], check=True)
    (path / "a.txt").write_text("two\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    return path


def set_config(path: Path, key: str, value: str) -> None:
    subprocess.run(["git", "-C", str(path), "config", key, value], check=True)


def test_repository_keys_are_neutralised_and_global_ones_kept(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    (tmp_path / "inc.cfg").write_text('[filter "inc"]\n\tclean = touch INC\n')
    for key, value in [("core.fsmonitor", "touch FS"), ("filter.evil.clean", "touch C"),
                       ("filter.evil.required", "true"), ("diff.evil.textconv", "touch T"),
                       ("diff.external", "touch X"), ("core.askPass", "touch A"), ("core.sshCommand", "touch S"),
                       ("credential.helper", "touch H"), ("include.path", str(tmp_path / "inc.cfg"))]:
        set_config(root, key, value)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text('[core]\n\tsshCommand = ssh -4\n[filter "lfs"]\n\tclean = git-lfs clean\n')
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home)}
    entries = safegit.read_config(root, env)
    assert ("local", "filter.inc.clean", "touch INC") in entries  # an included file has its includer's scope
    got = dict(safegit.overrides(entries))
    assert got["core.fsmonitor"] == "false" and got["core.hooksPath"] == "/dev/null"
    assert got["filter.evil.clean"] == "" and got["filter.evil.required"] == "false"
    assert got["filter.inc.clean"] == "" and got["diff.evil.textconv"] == "" and got["diff.external"] == ""
    assert got["core.askpass"] == "" and got["core.sshcommand"] == "ssh -4"  # the user's own value restored
    assert "filter.lfs.clean" not in got  # the user's global filter stays
    assert got["protocol.allow"] == "never" and got["protocol.file.allow"] == "always"
    assert "protocol.ext.allow" not in got
    assert safegit.network_keys(entries) == ["credential.helper"]


def test_run_git_runs_none_of_the_repository_programs(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    marker = tmp_path / "RAN"
    for key in ("core.fsmonitor", "filter.evil.clean", "diff.evil.textconv", "diff.external"):
        set_config(root, key, f"touch {marker}; cat")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "post-checkout", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    set_config(root, "core.hooksPath", str(hooks))
    os.utime(root / "a.txt", (1, 1))  # stat-dirty: git status runs the clean filter on it
    argvs = [("status", "--porcelain"), ("log", "-p", "-2"), ("show", "HEAD"), ("checkout", "-q", "HEAD~1"),
             ("update-ref", "refs/x", "HEAD")]
    for argv in argvs:
        res = safegit.run_git(root, *argv)
        assert not marker.exists(), (argv, res)
    # the same commands without safegit run them: the test holds the hardening, not a quiet repository
    subprocess.run(["git", "-C", str(root), "log", "-p", "-2"], capture_output=True, check=False)
    assert marker.exists()


def test_fetch_refuses_repository_network_config(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    set_config(root, "url.https://evil.example/.insteadOf", "https://github.com/")
    assert safegit.run_git(root, "rev-parse", "HEAD").ok  # reading is fine
    with pytest.raises(UserError, match=r"url\.https://evil\.example/\.insteadof"):
        safegit.run_git(root, "fetch", "origin", fetch=True)


def test_environment_cannot_point_git_at_another_repository(tmp_path: Path) -> None:
    one, two = repo(tmp_path / "one"), repo(tmp_path / "two")
    set_config(two, "user.name", "two")
    env = {**os.environ, "GIT_DIR": str(two / ".git"), "GIT_WORK_TREE": str(two)}
    res = safegit.run_git(one, "rev-parse", "--show-toplevel", env=env)
    assert res.stdout.strip() == str(one)


def test_unreadable_repository_config_is_one_paragraph(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    with (root / ".git" / "config").open("a") as f:
        f.write("[core\n\tbroken\n")
    with pytest.raises(UserError, match="git cannot read the configuration of the repository"):
        safegit.run_git(root, "status")


# --- hostile repository config: plan runs none of its programs ---------------------------------------------------

def _fsmonitor(repo: Path, marker: Path) -> None:
    set_config(repo, "core.fsmonitor", f"touch {marker}; false")


def _hooks(repo: Path, marker: Path) -> None:
    hooks = repo.parent / f"{repo.name}-hooks"
    hooks.mkdir()
    for name in ("post-index-change", "post-checkout", "reference-transaction", "pre-auto-gc"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    set_config(repo, "core.hooksPath", str(hooks))


def _clean_filter(repo: Path, marker: Path) -> None:
    set_config(repo, "filter.evil.clean", f"touch {marker}; cat")
    set_config(repo, "filter.evil.required", "true")


def _process_filter(repo: Path, marker: Path) -> None:
    set_config(repo, "filter.evil.process", f"touch {marker}")


def _diff_drivers(repo: Path, marker: Path) -> None:
    set_config(repo, "diff.external", f"touch {marker}; true")
    set_config(repo, "diff.evil.textconv", f"touch {marker}; cat")
    set_config(repo, "diff.evil.command", f"touch {marker}; true")


def _pager(repo: Path, marker: Path) -> None:
    set_config(repo, "core.pager", f"touch {marker}; cat")
    set_config(repo, "pager.status", f"touch {marker}; cat")


def _include(repo: Path, marker: Path) -> None:
    included = repo.parent / f"{repo.name}-included.cfg"
    included.write_text(f'[core]\n\tfsmonitor = touch {marker}; false\n[filter "evil"]\n\tclean = touch {marker}\n')
    set_config(repo, "include.path", str(included))


HOSTILE = {"fsmonitor": _fsmonitor, "hooks": _hooks, "clean-filter": _clean_filter,
           "process-filter": _process_filter, "diff-drivers": _diff_drivers, "pager": _pager,
           "include-path": _include}


def hostile_repo(root: Path, how: str, marker: Path) -> None:
    """``root`` committed (a .gitattributes routing *.py and *.txt through the 'evil' filter and diff drivers),
    the hostile config set, and every file made stat-dirty, so ``git status`` would hash them (through filters)."""
    (root / ".gitattributes").write_text("*.py filter=evil diff=evil\n*.txt filter=evil diff=evil\n")
    git_commit(root, init=not (root / ".git").exists())
    HOSTILE[how](root, marker)
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            os.utime(path, (1_000_000_000, 1_000_000_000))


@pytest.mark.parametrize("how", sorted(HOSTILE))
def test_a_plugin_repository_config_runs_nothing(tree, plugin, tmp_path: Path, how: str) -> None:
    root = tree()
    git_commit(root)
    plug = plugin("triton-shared", "triton_shared")
    marker = tmp_path / "RAN"
    hostile_repo(plug, how, marker)
    data = plan_json("--source", str(root), "--plugin-dir", str(plug), "--cache-dir", str(tmp_path / "c"),
                     cwd=tmp_path)
    assert not marker.exists(), f"{how}: the plugin's git config ran a program"
    shared = next(b for b in data["backends"] if b["name"] == "triton_shared")
    assert shared["commit"] and shared["dirty"] is False  # the filter was 'cat': content unchanged


@pytest.mark.parametrize("how", sorted(HOSTILE))
def test_the_source_repository_config_runs_nothing(tree, plugin, tmp_path: Path, how: str) -> None:
    root = tree()
    pin = git_commit(root, "the plugin's pin")
    core = root / "include" / "triton" / "Core.h"
    core.write_text(core.read_text() + "// moved on\n")
    git_commit(root, "Change Core.h", init=False)  # a plugin pinned one commit back: the drift asks git log
    plug = plugin("triton-shared", "triton_shared", triton_hash=pin)
    marker = tmp_path / "RAN"
    hostile_repo(root, how, marker)
    data = plan_json("--source", str(root), "--plugin-dir", str(plug), "--cache-dir", str(tmp_path / "c"),
                     cwd=tmp_path)
    assert not marker.exists(), f"{how}: the source's git config ran a program"
    assert data["source"]["commit"] and data["source"]["dirty"] is False
    api = next(b for b in data["backends"] if b["name"] == "triton_shared")["api"]
    assert api["drift"]["commits"] == 2  # the history was still read (Core.h, then the .gitattributes commit)


def test_dirty_flag_stays_right_with_filters_neutralised(tree, tmp_path: Path) -> None:
    root = tree()
    marker = tmp_path / "RAN"
    hostile_repo(root, "clean-filter", marker)
    assert plan_json("--source", str(root), "--cache-dir", str(tmp_path / "c"), cwd=tmp_path)["source"]["dirty"] \
        is False
    (root / "setup.py").write_text((root / "setup.py").read_text() + "# an edit\n")
    assert plan_json("--source", str(root), "--cache-dir", str(tmp_path / "c"), cwd=tmp_path)["source"]["dirty"] \
        is True
    assert not marker.exists()


def test_a_hostile_plugin_pin_is_never_a_git_argument(tmp_path: Path) -> None:
    root = repo(tmp_path / "r")
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    out = tmp_path / "written"
    moved = compat.drift(root, head, f"--output={out}", ["a.txt"])
    assert not out.exists() and "is not a commit hash" in moved["status"]


# --- offline: no network, no clone ----------------------------------------------------------------------------------

def bare_remote(tree, tmp_path: Path) -> Path:
    """A bare repository of the example tree with tag v1, to clone through a file:// URL (no network)."""
    root = tree("upstream")
    git_commit(root)
    subprocess.run(["git", "tag", "v1"], cwd=root, check=True)
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(bare)], check=True)
    return bare


def offline_refusal(proc: subprocess.CompletedProcess[str], given_as: str) -> str:
    text = flat(proc.stderr)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "fatal:" not in proc.stderr
    assert "neither clones nor fetches offline" in text and f"({given_as} DIR), or drop --offline" in text
    return text


def test_offline_source_url_is_not_cloned(tree, tmp_path: Path) -> None:
    url = f"file://{bare_remote(tree, tmp_path)}"
    cache = tmp_path / "cache"
    proc = run_cli("plan", "--source", url, "--ref", "v1", "--offline", "--cache-dir", str(cache), cwd=tmp_path,
                   check=False)
    assert "is not in tritonbuild's source cache" in offline_refusal(proc, "--source")
    assert not (cache / "sources").exists()
    # the environment variable is the same switch; a URL to nowhere gets the same paragraph, not git's error
    proc = run_cli("plan", "--source", f"file://{tmp_path}/nowhere.git", "--cache-dir", str(cache), cwd=tmp_path,
                   env={"TRITON_OFFLINE_BUILD": "1"}, check=False)
    offline_refusal(proc, "--source")
    assert not (cache / "sources").exists()


def test_offline_uses_a_cached_clone_that_has_the_ref(tree, tmp_path: Path) -> None:
    bare = bare_remote(tree, tmp_path)
    url, cache = f"file://{bare}", tmp_path / "cache"
    online = plan_json("--source", url, "--ref", "v1", "--cache-dir", str(cache), cwd=tmp_path)
    bare.rename(tmp_path / "gone.git")  # offline must not need the remote at all
    offline = plan_json("--source", url, "--ref", "v1", "--offline", "--cache-dir", str(cache), cwd=tmp_path)
    assert offline["source"]["root"] == online["source"]["root"]
    assert offline["source"]["commit"] == online["source"]["commit"]
    proc = run_cli("plan", "--source", url, "--ref", "v2", "--offline", "--cache-dir", str(cache), cwd=tmp_path,
                   check=False)
    assert "does not have v2" in offline_refusal(proc, "--source")


def test_offline_git_plugin_is_not_cloned_and_a_cached_one_is_used(tree, plugin, tmp_path: Path) -> None:
    root = tree()
    plug = plugin("shared-src", "triton_shared")
    git_commit(plug)
    subprocess.run(["git", "tag", "v1"], cwd=plug, check=True)
    spec, cache = f"git+file://{plug}@v1", tmp_path / "cache"
    args = ("--source", str(root), "--plugin-dir", spec, "--cache-dir", str(cache))
    proc = run_cli("plan", *args, "--offline", cwd=tmp_path, check=False)
    offline_refusal(proc, "--plugin-dir")
    assert not (cache / "sources").exists()
    online = plan_json(*args, cwd=tmp_path)
    offline = plan_json(*args, "--offline", cwd=tmp_path)
    path = next(b["path"] for b in offline["backends"] if b["name"] == "triton_shared")
    assert path == next(b["path"] for b in online["backends"] if b["name"] == "triton_shared")
    assert Path(path).is_relative_to(cache / "sources")


def test_offline_dep_url_is_not_cloned(tree, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    proc = run_cli("plan", "--source", str(tree()), "--offline", "--cache-dir", str(cache),
                   f"--dep=googletest=file://{tmp_path}/googletest", cwd=tmp_path, check=False)
    offline_refusal(proc, "--dep googletest=")
    assert not (cache / "sources").exists()


def test_offline_recipe_url_inside_a_checkout_builds_the_checkout(tree, tmp_path: Path) -> None:
    root = tree()
    git_commit(root)
    cache = tmp_path / "cache"
    proc = run_cli("plan", "--json", "--recipe", "nightly", "--offline", "--no-require-pinned-llvm",
                   "--cache-dir", str(cache), cwd=root)
    assert one_of(proc.stdout, "plans")["source"]["root"] == str(root)
    assert "building the Triton checkout in the current directory" in flat(proc.stderr)
    assert "https://github.com/triton-lang/triton.git" in flat(proc.stderr)
    assert not (cache / "sources").exists()
    # outside a checkout there is nothing to fall back on
    proc = run_cli("plan", "--recipe", "nightly", "--offline", "--cache-dir", str(cache), cwd=tmp_path, check=False)
    assert "https://github.com/triton-lang/triton.git at main" in offline_refusal(proc, "--source")


# --- URLs and refs git could misread: refused before any git runs ----------------------------------------------------

@pytest.mark.parametrize(("args", "fragment"), [
    (["--plugin-dir", "git+ext::sh -c touch% {marker}"], "names a git remote helper"),
    (["--source", "ext::sh -c touch% {marker}"], "names a git remote helper"),
    (["--source", "fd::17"], "names a git remote helper"),
    (["--source=ssh://-oProxyCommand=touch%20{marker}/x.git"], "starts with '-'"),
    (["--plugin-dir", "git+file:///nowhere.git@--upload-pack=touch%20RAN"], "is not a ref tritonbuild fetches"),
    (["--source", "file:///nowhere.git", "--ref=--upload-pack=touch {marker}"], "is not a git ref"),
])
def test_hostile_urls_and_refs_exit_2_before_git_runs(tree, tmp_path: Path, args: list[str], fragment: str) -> None:
    marker, cache = tmp_path / "RAN", tmp_path / "cache"
    full = [a.format(marker=marker) for a in args]
    if not any(a.startswith("--source") for a in full):
        full = ["--source", str(tree()), *full]
    proc = run_cli("plan", *full, "--cache-dir", str(cache), cwd=tmp_path, check=False)
    assert proc.returncode == 2, proc.stderr
    assert fragment in flat(proc.stderr) and "Traceback" not in proc.stderr
    assert not marker.exists() and not (cache / "sources").exists()


def test_a_ref_missing_from_the_cached_clone_is_fetched_online_then_kept_for_offline(tree, tmp_path: Path) -> None:
    bare = bare_remote(tree, tmp_path)
    url, cache = f"file://{bare}", tmp_path / "cache"
    first = plan_json("--source", url, "--ref", "v1", "--cache-dir", str(cache), cwd=tmp_path)
    upstream = tmp_path / "upstream"
    (upstream / "NEWS").write_text("v2\n")
    v2 = git_commit(upstream, "v2", init=False)
    subprocess.run(["git", "tag", "v2"], cwd=upstream, check=True)
    subprocess.run(["git", "push", "-q", str(bare), "v2"], cwd=upstream, check=True)
    second = plan_json("--source", url, "--ref", "v2", "--cache-dir", str(cache), cwd=tmp_path)
    assert second["source"]["root"] == first["source"]["root"] and second["source"]["commit"] == v2
    bare.rename(tmp_path / "gone.git")
    third = plan_json("--source", url, "--ref", "v2", "--offline", "--cache-dir", str(cache), cwd=tmp_path)
    assert third["source"]["commit"] == v2
