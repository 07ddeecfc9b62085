"""--submodule PATH=REPO (#47: triton-cpu's cpu backend add_subdirectory()s the git submodule third_party/sleef, which
snapshots and plain clones lack): the commit the checkout records is exported from a local clone into tritonbuild's
copy of the source (never into the checkout), the copy is rewritten only where content changed, and every bad entry
is refused before anything is made. ``llvm compat``'s exports fill the same gitlinks from the same clones."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.integration.conftest import git_commit, refused
from tests.integration.conftest import offline_plan as plan
from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.gather import commits

SUB = "third_party/sleef"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd,
                          capture_output=True, text=True, check=True).stdout.strip()


def _sub_repo(where: Path, text: str = "# sleef\n") -> tuple[Path, str]:
    where.mkdir(exist_ok=True)
    (where / "CMakeLists.txt").write_text(text)
    (where / "src").mkdir(exist_ok=True)
    (where / "src" / "f.c").write_text("int f(void) { return 1; }\n")
    return where, git_commit(where, init=not (where / ".git").exists())


def _tree_with_gitlink(tmp_path: Path, commit: str) -> Path:
    tree = example.write_tree(tmp_path / "triton")
    (tree / ".gitmodules").write_text(f'[submodule "sleef"]\n\tpath = {SUB}\n\turl = https://example.invalid/sleef\n')
    cml = tree / "third_party" / "cpu" / "CMakeLists.txt"
    cml.write_text(cml.read_text() + f'add_subdirectory("${{CMAKE_SOURCE_DIR}}/{SUB}" sleef)\n')
    git_commit(tree)
    _git(tree, "update-index", "--add", "--cacheinfo", f"160000,{commit},{SUB}")
    _git(tree, "commit", "-qm", "the submodule")
    (tree / SUB).mkdir(parents=True)  # as a clone without `submodule update` has it: an empty dir
    return tree


def _plan(tree: Path, tmp_path: Path, *args: str) -> dict:
    proc = plan(tree, tmp_path, "--backends", "cpu", "--json", *args, check=True)
    return json.loads(proc.stdout)["plans"][0]


def test_the_recorded_commit_is_exported_into_the_copy_and_the_checkout_is_untouched(tmp_path: Path) -> None:
    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    refused(plan(tree, tmp_path, "--backends", "cpu"), f"submodule update --init {SUB}", f"--submodule {SUB}=")
    p = _plan(tree, tmp_path, "--submodule", f"{SUB}={repo}")
    root = Path(p["source"]["root"])
    assert p["source"]["submodules"] == [[SUB, first]] and p["source"]["checkout"] == str(tree)
    assert root != tree and (root / SUB / "CMakeLists.txt").read_text() == "# sleef\n"
    assert (root / SUB / "src" / "f.c").is_file() and not (root / SUB / commits.MARKER).exists()
    assert _git(tree, "status", "--porcelain") == "" and list((tree / SUB).iterdir()) == []
    before = (root / SUB / "src" / "f.c").stat().st_mtime_ns
    assert _plan(tree, tmp_path, "--submodule", f"{SUB}={repo}")["key"] == p["key"]  # the same plan again
    assert (root / SUB / "src" / "f.c").stat().st_mtime_ns == before  # rewritten only where content changed
    # the checkout moves its submodule on: the copy follows, at the new commit
    (repo / "CMakeLists.txt").write_text("# sleef, newer\n")
    second = git_commit(repo, init=False)
    _git(tree, "update-index", "--cacheinfo", f"160000,{second},{SUB}")
    again = _plan(tree, tmp_path, "--submodule", f"{SUB}={repo}")
    assert again["source"]["submodules"] == [[SUB, second]] and again["key"] != p["key"]
    assert (Path(again["source"]["root"]) / SUB / "CMakeLists.txt").read_text() == "# sleef, newer\n"


def test_a_checked_out_submodule_is_the_checkouts_own(tmp_path: Path) -> None:
    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    (tree / SUB / "CMakeLists.txt").write_text("# the user's own\n")
    proc = plan(tree, tmp_path, "--backends", "cpu", "--submodule", f"{SUB}={repo}", check=True)
    assert f"the submodule {SUB} is checked out" in " ".join(proc.stderr.split())
    assert not (tmp_path / "cache" / "patched").exists()


@pytest.mark.parametrize(("entry", "words"), [
    ("third_party/other={repo}", "is not a submodule of the source"),
    (f"{SUB}={{tmp}}/missing", "is not a directory"),
    (f"{SUB}={{tmp}}/other", "has no commit"),
    (f"{SUB}", "not PATH=REPO"),
    ("../x={repo}", "not a plain path inside the source"),
    ("third_party/.git/x={repo}", "not a plain path inside the source"),
])
def test_bad_entries_are_refused_before_anything_is_made(tmp_path: Path, entry: str, words: str) -> None:
    repo, first = _sub_repo(tmp_path / "sleef")
    _sub_repo(tmp_path / "other", "# another project\n")
    tree = _tree_with_gitlink(tmp_path, first)
    given_entry = entry.format(repo=repo, tmp=tmp_path)
    refused(plan(tree, tmp_path, "--backends", "cpu", "--submodule", given_entry), words)
    assert not (tmp_path / "cache" / "patched").exists() and not (tmp_path / "cache" / "submodules").exists()


def test_a_source_without_git_cannot_say_its_submodules_commit(tmp_path: Path) -> None:
    repo, _ = _sub_repo(tmp_path / "sleef")
    tree = example.write_tree(tmp_path / "triton")
    (tree / ".gitmodules").write_text(f'[submodule "sleef"]\n\tpath = {SUB}\n')
    refused(plan(tree, tmp_path, "--backends", "cpu", "--submodule", f"{SUB}={repo}"), "is not a git checkout")


def test_llvm_compat_exports_fill_the_gitlinks_from_the_clones(tmp_path: Path) -> None:
    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    head = _git(tree, "rev-parse", "HEAD")
    history = commits.History(tree, "", head, head, (commits.Commit(head, ""),))
    out = commits.export(history, head, tmp_path / "trees", {SUB: repo})
    assert (out / SUB / "CMakeLists.txt").read_text() == "# sleef\n" and (out / "CMakeLists.txt").is_file()
    plain = commits.export(history, head, tmp_path / "plain")
    assert not (plain / SUB).exists()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["100644", "100755", "120000", "160000", "040000", "160000x"]),
                          st.sampled_from(["blob", "commit", "tree"]),
                          st.text(alphabet="ab/.\x00\t\n-", min_size=0, max_size=12)), max_size=12))
def test_hostile_listings_keep_no_entry_inside_a_gitlink_nor_a_bad_one(rows: list[tuple[str, str, str]]) -> None:
    listing = "".join(f"{mode} {kind} {'1' * 40}\t{name}\0" for mode, kind, name in rows)
    try:
        entries, gitlinks = commits._entries(listing, "a test listing")
    except UserError:
        return
    names = [name for _, _, name in entries]
    for name in [*names, *gitlinks]:
        parts = name.split("/")
        assert name and not name.startswith("/") and ".." not in parts and "" not in parts and ".git" not in parts
    assert not any(n.startswith(g + "/") for n in names for g in gitlinks)
    assert all(mode in ("100644", "100755", "120000") for mode, _, _ in entries)


def test_an_export_past_its_caps_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listing = "".join(f"100644 blob {'1' * 40}\tf{i}\0" for i in range(5))
    monkeypatch.setattr(commits, "MAX_ENTRIES", 4)
    with pytest.raises(UserError, match="4 entries"):
        commits._entries(listing, "a test listing")
    repo, first = _sub_repo(tmp_path / "sleef")
    monkeypatch.setattr(commits, "MAX_BYTES", 10)
    with pytest.raises(UserError, match="takes the export past"):
        commits.export_tree(repo, first, first, tmp_path / "trees")
    assert not (tmp_path / "trees" / first).exists()


def test_llvm_compat_fills_the_submodule_of_each_commit_it_tests(tmp_path: Path) -> None:
    from tests.integration.conftest import LLVM, run_cli

    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    (tree / "CHANGES.txt").write_text("a change\n")
    head = git_commit(tree, init=False)
    args = ("llvm", "compat", "--source", str(tree), "--llvm", str(LLVM), "--backends", "cpu", "--no-proton",
            "--offline", "--no-canary", "--range", "HEAD~1..HEAD", "--json", "--cache-dir", str(tmp_path / "cache"))
    without = run_cli(*args, cwd=tmp_path, check=False)
    assert without.returncode == 1 and "submodule update --init" in without.stdout + without.stderr
    found = run_cli(*args, "--submodule", f"{SUB}={repo}", cwd=tmp_path, check=False)
    assert found.returncode == 0, found.stdout + found.stderr
    assert json.loads(found.stdout)["answer"]["newest_passing"]["commit"] == head
    assert "is checked out" not in found.stderr and list((tree / SUB).iterdir()) == []


def test_status_shows_and_clean_all_removes_the_exports(tmp_path: Path) -> None:
    from tests.integration.conftest import run_cli

    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    _plan(tree, tmp_path, "--submodule", f"{SUB}={repo}")
    cache = str(tmp_path / "cache")
    status = json.loads(run_cli("status", "--json", "--cache-dir", cache, cwd=tmp_path).stdout)
    kinds = {c["kind"]: c["of"] for c in status["cache_copies"]}
    assert kinds["submodule export"] == f"commit {first}" and "patched copy" in kinds
    run_cli("clean", "--all", "--cache-dir", cache, cwd=tmp_path)
    assert list((tmp_path / "cache" / "submodules").iterdir()) == []
    assert list((tree / SUB).iterdir()) == [] and (repo / "CMakeLists.txt").is_file()


def _evil_partial_clone(tmp_path: Path, repo: Path) -> tuple[Path, Path]:
    """A blob-less clone of ``repo`` whose own config names a program as its promisor's upload-pack."""
    _git(repo, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    _git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", f"file://{repo}", str(clone))
    ran = tmp_path / "ran.txt"
    evil = tmp_path / "evil.sh"
    evil.write_text(f'#!/bin/sh\necho ran >> {ran}\nexec git-upload-pack "$@"\n')
    evil.chmod(0o755)
    _git(clone, "config", "remote.origin.uploadpack", str(evil))
    return clone, ran


def test_a_partial_clone_is_refused_and_a_read_never_fetches(tmp_path: Path) -> None:
    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    clone, ran = _evil_partial_clone(tmp_path, repo)
    refused(plan(tree, tmp_path, "--backends", "cpu", "--submodule", f"{SUB}={clone}"), "is a partial clone")
    with pytest.raises(UserError):  # the export itself (llvm compat's, on a partial checkout) fetches nothing
        commits.export_tree(clone, first, first, tmp_path / "trees")
    assert not ran.exists() and not (tmp_path / "trees" / first).exists()


def test_llvm_compat_refuses_bad_clones_up_front_and_caches_no_missing_commit(tmp_path: Path) -> None:
    from tests.integration.conftest import LLVM, run_cli

    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    (tree / "CHANGES.txt").write_text("a change\n")
    git_commit(tree, init=False)
    other, _ = _sub_repo(tmp_path / "other", "# another project\n")
    args = ("llvm", "compat", "--source", str(tree), "--llvm", str(LLVM), "--backends", "cpu", "--no-proton",
            "--offline", "--no-canary", "--range", "HEAD~1..HEAD", "--cache-dir", str(tmp_path / "cache"))
    refused(run_cli(*args, "--submodule", f"third_party/x={repo}", cwd=tmp_path, check=False), "is not a submodule")
    refused(run_cli(*args, "--submodule", f"{SUB}={tmp_path}/none", cwd=tmp_path, check=False), "not a directory")
    refused(run_cli(*args, "--submodule", f"{SUB}={other}", cwd=tmp_path, check=False), "has no commit")
    _git(other, "fetch", "-q", str(repo), "main:refs/heads/theirs")
    found = run_cli(*args, "--submodule", f"{SUB}={other}", cwd=tmp_path, check=False)
    assert found.returncode == 0, found.stdout + found.stderr  # the refusal above was not cached as a finding


def test_links_in_the_submodule_are_carried_as_links_and_a_repeat_is_a_no_op(tmp_path: Path) -> None:
    repo, _ = _sub_repo(tmp_path / "sleef")
    (repo / "srcdir").symlink_to("src")
    (repo / "dangling").symlink_to("nothing-here")
    (repo / "link.c").symlink_to("src/f.c")
    commit = git_commit(repo, init=False)
    tree = _tree_with_gitlink(tmp_path, commit)
    root = Path(_plan(tree, tmp_path, "--submodule", f"{SUB}={repo}")["source"]["root"]) / SUB
    assert {n: str((root / n).readlink()) for n in ("srcdir", "dangling", "link.c")} == {
        "srcdir": "src", "dangling": "nothing-here", "link.c": "src/f.c"}
    before = {p.name: p.lstat().st_mtime_ns for p in root.iterdir()}
    export = tmp_path / "cache" / "submodules" / commit
    made = export.stat().st_ino
    _plan(tree, tmp_path, "--submodule", f"{SUB}={repo}")
    assert {p.name: p.lstat().st_mtime_ns for p in root.iterdir()} == before
    assert export.stat().st_ino == made  # the export of that commit is used again, not made afresh


@pytest.mark.parametrize(("setup", "entry", "words"), [
    ("file", f"{SUB}={{repo}}", "is a file"),
    ("link", f"{SUB}={{repo}}", "is a link"),
    ("", f"{SUB}={{repo}}", "more than once"),
    ("nested", "deps={repo}", "records no submodule commit at deps"),
])
def test_odd_places_and_entries_are_refused_naming_the_submodule(tmp_path: Path, setup: str, entry: str,
                                                                   words: str) -> None:
    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    (tree / SUB).rmdir()
    if setup == "file":
        (tree / SUB).write_text("junk\n")
    elif setup == "link":
        (tree / SUB).symlink_to(repo)
    else:
        (tree / SUB).mkdir()
    if setup == "nested":
        (tree / ".gitmodules").write_text('[submodule "deps"]\n\tpath = deps\n')
        _git(tree, "update-index", "--add", "--cacheinfo", f"160000,{first},deps/sleef")
    given = ["--submodule", entry.format(repo=repo)] + (["--submodule", f"./{SUB}/={repo}"] if not setup else [])
    refused(plan(tree, tmp_path, "--backends", "cpu", *given), words, "--submodule")
    assert not (tmp_path / "cache" / "patched").exists()


def test_a_patch_into_the_supplied_submodule_is_refused(tmp_path: Path) -> None:
    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    (tmp_path / "p.diff").write_text(f"--- /dev/null\n+++ b/{SUB}/extra.c\n@@ -0,0 +1 @@\n+int x;\n")
    refused(plan(tree, tmp_path, "--backends", "cpu", "--submodule", f"{SUB}={repo}", "--patch", "p.diff"),
            "a file of the submodule that --submodule supplies")


def test_container_runs_refuse_submodules_before_the_engine(tmp_path: Path) -> None:
    from tests.integration.conftest import run_cli

    repo, first = _sub_repo(tmp_path / "sleef")
    tree = _tree_with_gitlink(tmp_path, first)
    engine = tmp_path / "bin" / "docker"
    engine.parent.mkdir()
    engine.write_text(f"#!/bin/sh\necho ran >> {tmp_path}/engine.txt\n")
    engine.chmod(0o755)
    import os

    proc = run_cli("build", "--source", str(tree), "--backends", "cpu", "--submodule", f"{SUB}={repo}",
                   "--container", "quay.io/pypa/manylinux_2_28_x86_64", "--container-engine", "docker",
                   "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path, check=False,
                   env={"PATH": f"{engine.parent}:{os.environ['PATH']}"})
    refused(proc, "--container does not mount --submodule")
    assert not (tmp_path / "engine.txt").exists()


def test_gitmodules_is_read_as_git_reads_it() -> None:
    from tritonbuild.resolve.source import parse_gitmodules

    text = ('[submodule "sleef"]\n\tpath = third_party/sleef\n\turl = https://x\n[include]\n\tpath = /etc/x\n'
            '[submodule "b"]\n\tPath = "third_party/b c" ; a comment\n')
    assert parse_gitmodules(text) == ("third_party/sleef", "third_party/b c")
