"""``tritonbuild llvm compat`` through the real CLI (#36): real git histories of the example tree, planned (and
canary-compiled) commit by commit against Debian's LLVM 22. The boundary is found by the include preflight (a
commit that includes llvm/Passes/PassPlugin.h, which LLVM 22.1 moved) and by the canary (a commit that overrides
RewritePattern::match, which LLVM 21 removed); the checkout is never touched, the steps are cached, only the
boundary's trees are kept, and bad input is refused before any work."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.gather import commits

from .conftest import LLVM, flat, run_cli

ARGS = ("--llvm", str(LLVM), "--backends", "nvidia", "--no-proton", "--offline")
CAUSE = "triton::FoldCorePattern::match() const' marked 'override', but does not override"
GIT = ("git", "-c", "user.email=t@example.com", "-c", "user.name=t")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", message)
    return _git(repo, "rev-parse", "HEAD")


def _history(base: Path, count: int, breaks_at: int, breaking: Path, files: tuple[str, ...]) -> tuple[Path, list[str]]:
    """A repository of ``count`` commits of the example tree; commit ``breaks_at`` (1-based) copies ``files`` from
    the tree ``breaking`` (written for an older LLVM), and the later commits keep them."""
    repo = example.write_tree(base / "triton")
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for i in range(1, count + 1):
        if i == breaks_at:
            for rel in files:
                shutil.copy(breaking / rel, repo / rel)
        (repo / "CHANGES.txt").write_text(f"change {i}\n")
        shas.append(_commit(repo, f"change {i}"))
    return repo, shas


def _compat(base: Path, repo: Path, *extra: str, cache: str = "cache") -> tuple[int, str, str]:
    proc = run_cli("llvm", "compat", "--source", str(repo), *ARGS, "--cache-dir", str(base / cache), *extra,
                   cwd=base, check=False)
    assert "Traceback" not in proc.stderr + proc.stdout
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def includes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """7 commits; the 5th includes llvm/Passes/PassPlugin.h (the old_includes tree's files), the rest keep it."""
    base = tmp_path_factory.mktemp("compat-includes")
    old = example.write_tree(base / "old" / "triton", old_includes=True)
    repo, shas = _history(base, 7, 5, old, example.OLD_INCLUDE_FILES)
    return base, repo, shas


def test_the_preflight_finds_the_boundary_and_the_checkout_is_untouched(
        includes: tuple[Path, Path, list[str]]) -> None:
    base, repo, shas = includes
    head, status = _git(repo, "rev-parse", "HEAD"), _git(repo, "status", "--porcelain", "--ignored")
    rc, stdout, stderr = _compat(base, repo, "--range", f"{shas[0]}..{shas[-1]}", "--no-canary")
    out = flat(stdout + stderr)
    assert rc == 0, out
    assert f"newest passing: {shas[3][:12]} change 4" in out
    assert f"first failing: {shas[4][:12]} change 5" in out
    assert (f"preflight: python/src/ir.cc:2, test/lib/Instrumentation/Hello.cpp:2 include {example.OLD_PASS_PLUGIN}: "
            "moved to llvm/Plugins/PassPlugin.h in this LLVM") in out
    steps = [line for line in stdout.splitlines() if line.startswith("step ") and "(of at most" in line]
    assert 4 <= len(steps) <= math.ceil(math.log2(7)) + 2 and not any("cached" in s for s in steps), stdout
    # at most: both ends, the probes between failing ends (3), the halving
    assert steps[0].startswith(f"step 1 (of at most 8): {shas[6][:12]} change 7: fail (")
    assert steps[1].startswith(f"step 2 (of at most 8): {shas[0][:12]} change 1: pass (")
    # the checkout: same HEAD, nothing changed, added or ignored; no worktree
    assert _git(repo, "rev-parse", "HEAD") == head and _git(repo, "status", "--porcelain", "--ignored") == status
    assert len(_git(repo, "worktree", "list").splitlines()) == 1
    # only the boundary's exported trees are kept, and they are the commits' trees
    trees = base / "cache" / "compat" / "trees"
    assert sorted(p.name for p in trees.iterdir()) == sorted([shas[3], shas[4]])
    assert f"trees kept (exported commits): {trees / shas[3]}, {trees / shas[4]}" in out
    assert example.OLD_PASS_PLUGIN in (trees / shas[4] / "python/src/ir.cc").read_text()
    assert example.OLD_PASS_PLUGIN not in (trees / shas[3] / "python/src/ir.cc").read_text()


def test_a_nightly_recipe_does_not_fail_every_exported_commit(includes: tuple[Path, Path, list[str]]) -> None:
    """An exported commit is no checkout, so it has no commit date: with the nightly recipe's reproducible = true
    and version_scheme = "date+git" every step failed on SOURCE_DATE_EPOCH, and with require_pinned_llvm = true on
    the pin, whatever the LLVM. The finder makes no wheel and is for LLVMs that are not the pin: neither counts."""
    base, repo, shas = includes
    rc, stdout, stderr = _compat(base, repo, "--range", f"{shas[0]}..{shas[-1]}", "--no-canary", "--reproducible",
                                 "--version-scheme", "date+git", "--require-pinned-llvm", "--json", cache="cache-repro")
    assert rc == 0, stderr
    data = json.loads(stdout)
    assert (data["answer"]["newest_passing"]["commit"], data["answer"]["first_failing"]["commit"]) == (shas[3], shas[4])
    assert not any(s["reason"] for s in data["steps"])


def _answer(data: dict) -> tuple:
    a = data["answer"]
    return a["found"], a["newest_passing"], a["first_failing"], [(s["commit"], s["ok"], s["preflight"], s["causes"])
                                                                  for s in a["failing_shown"]]


def test_a_second_run_is_answered_from_the_cache(includes: tuple[Path, Path, list[str]]) -> None:
    base, repo, shas = includes
    args = ("--range", f"{shas[0]}..{shas[-1]}", "--no-canary", "--json")
    first = json.loads(_compat(base, repo, *args, cache="cache-2")[1])
    rc, stdout, _ = _compat(base, repo, *args, cache="cache-2")
    second = json.loads(stdout)
    assert rc == 0 and _answer(first) == _answer(second)
    assert second["answer"]["newest_passing"] == {"commit": shas[3], "subject": "change 4"}
    assert second["answer"]["first_failing"] == {"commit": shas[4], "subject": "change 5"}
    assert [s["commit"] for s in first["steps"]] == [s["commit"] for s in second["steps"]]
    assert not any(s["cached"] for s in first["steps"]) and all(s["cached"] for s in second["steps"])
    computed = sum(s["seconds"] for s in first["steps"])
    assert sum(s["seconds"] for s in second["steps"]) < computed / 4, (first["steps"], second["steps"])
    # a damaged entry is recomputed, not believed; another LLVM setting is another cache
    results = Path(second["cache"])
    (results / f"{shas[4]}.json").write_text('{"schema": 1, "commit": "' + shas[4] + '", "ok": true}')
    (results / f"{shas[3]}.json").write_text("\0garbage")
    third = json.loads(_compat(base, repo, *args, cache="cache-2")[1])
    assert _answer(third) == _answer(second)
    cached = {s["commit"]: s["cached"] for s in third["steps"]}
    assert cached[shas[4]] is False and cached[shas[3]] is False and cached[shas[6]] is True
    other = json.loads(_compat(base, repo, *args, "--backends", "nvidia;amd", cache="cache-2")[1])
    assert other["cache"] != second["cache"] and not any(s["cached"] for s in other["steps"])


def test_the_canary_finds_the_commit_that_breaks_the_compile(tmp_path: Path) -> None:
    broken = example.write_tree(tmp_path / "broken" / "triton", old_override=True)
    repo, shas = _history(tmp_path, 3, 3, broken, (example.OLD_OVERRIDE_HEADER, example.OLD_OVERRIDE_USER))
    rc, stdout, stderr = _compat(tmp_path, repo, "--range", f"{shas[0]}..{shas[2]}", "--json")
    assert rc == 0, stderr
    data = json.loads(stdout)
    assert [s["commit"] for s in data["steps"]] == [shas[2], shas[0], shas[1]]
    assert [s["ok"] for s in data["steps"]] == [False, True, True]
    answer = data["answer"]
    assert answer["newest_passing"]["commit"] == shas[1] and answer["first_failing"]["commit"] == shas[2]
    (failing,) = answer["failing_shown"]
    assert failing["preflight"] == [] and failing["reason"] is None  # the preflight cannot see it: the canary does
    (cause,) = failing["causes"]
    assert CAUSE in cause["cause"] and cause["kind"] == "API change"
    assert cause["example"].startswith(f"{example.OLD_OVERRIDE_HEADER}:9: ")  # relative to the commit's tree
    # the first commit's tree and build dir are gone; the boundary's stay
    assert sorted(p.name for p in (tmp_path / "cache" / "compat" / "trees").iterdir()) == sorted(shas[1:])
    assert len(list((tmp_path / "cache" / "build").iterdir())) == 2


def test_an_export_with_a_link_out_of_the_tree_is_a_failing_step(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path, 1, 0, tmp_path, ())
    (repo / "python" / "triton" / "evil").symlink_to("/etc/passwd")
    shas.append(_commit(repo, "a link out"))
    rc, stdout, stderr = _compat(tmp_path, repo, "--range", f"{shas[0]}..{shas[1]}", "--no-canary")
    out = flat(stdout + stderr)
    assert rc == 0, out
    assert f"first failing: {shas[1][:12]} a link out" in out
    assert "reason: Refusing to extract the export of commit" in out and "'python/triton/evil'" in out
    assert not (tmp_path / "cache" / "compat" / "trees" / shas[1]).exists()


def test_no_passing_commit_exits_1_with_the_oldest_and_newest_causes(includes: tuple[Path, Path, list[str]]) -> None:
    base, repo, shas = includes
    rc, stdout, stderr = _compat(base, repo, "--range", f"{shas[4]}..{shas[6]}", "--no-canary", cache="cache-none")
    out = flat(stdout + stderr)
    assert rc == 1, out
    assert f"oldest (fails): {shas[4][:12]} change 5" in out and f"newest (fails): {shas[6][:12]} change 7" in out
    assert out.count(f"include {example.OLD_PASS_PLUGIN}: moved to") == 2
    assert f"No commit of {shas[4]}..{shas[6]}" in out and "the oldest and the newest both fail" in out
    assert "and so do the 1 commit(s) tested between them" in out  # change 6, the middle
    assert sorted(p.name for p in (base / "cache-none" / "compat" / "trees").iterdir()) == sorted([shas[4], shas[6]])
    rc, stdout, _ = _compat(base, repo, "--range", f"{shas[4]}..{shas[6]}", "--no-canary", "--json",
                            cache="cache-none")
    data = json.loads(stdout)
    assert rc == 1 and data["answer"]["found"] is False and data["answer"]["newest_passing"] is None
    assert [s["commit"] for s in data["answer"]["failing_shown"]] == [shas[4], shas[6]]


def _windowed(base: Path, passing: str) -> tuple[Path, list[str]]:
    """A history of len(passing) commits; "P": the commit builds, "F": it includes the moved header."""
    old = example.write_tree(base / "old" / "triton", old_includes=True)
    new = example.write_tree(base / "new" / "triton")
    repo = example.write_tree(base / "triton")
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for i, mark in enumerate(passing, 1):
        for rel in example.OLD_INCLUDE_FILES:
            shutil.copy((new if mark == "P" else old) / rel, repo / rel)
        (repo / "CHANGES.txt").write_text(f"change {i}\n")
        shas.append(_commit(repo, f"change {i}"))
    return repo, shas


@pytest.mark.parametrize("passing", ["FFFPPPPFF", "FPFFF"])
def test_a_window_of_passing_commits_between_failing_ends_is_found(tmp_path: Path, passing: str) -> None:
    """A system LLVM between two of the fork's LLVM bumps: the oldest commits are too old for it, the newest too new
    (upstream's January 2026 against LLVM 22.1.8). Probing finds the window, bisecting its newest commit; both
    boundary trees are kept, also when one was tested as a probe before the window was found (FPFFF: the third)."""
    repo, shas = _windowed(tmp_path, passing)
    rc, stdout, stderr = _compat(tmp_path, repo, "--range", f"{shas[0]}..{shas[-1]}", "--no-canary", "--json")
    assert rc == 0, stderr
    data = json.loads(stdout)
    last = passing.rindex("P")
    answer = data["answer"]
    assert answer["found"] is True
    assert (answer["newest_passing"]["commit"], answer["first_failing"]["commit"]) == (shas[last], shas[last + 1])
    trees = tmp_path / "cache" / "compat" / "trees"
    assert sorted(data["exports"]) == sorted(str(trees / s) for s in (shas[last], shas[last + 1]))
    assert sorted(p.name for p in trees.iterdir()) == sorted([shas[last], shas[last + 1]])


def test_a_commit_that_is_no_triton_tree_is_a_failing_step_with_the_reason(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path, 1, 0, tmp_path, ())
    (repo / "cmake" / "llvm-hash.txt").unlink()
    shas.append(_commit(repo, "drop the pin"))
    rc, stdout, stderr = _compat(tmp_path, repo, "--range", f"{shas[0]}..{shas[1]}", "--no-canary", "--json")
    assert rc == 0, stderr
    failing = json.loads(stdout)["answer"]["failing_shown"][0]
    assert failing["commit"] == shas[1] and failing["ok"] is False
    assert failing["reason"].startswith(f"The Triton source commit {shas[1][:12]} has no LLVM pin")


def _one_paragraph(rc: int, stderr: str, *needles: str) -> None:
    assert rc == 2, stderr
    paragraphs = [p for p in stderr.strip().split("\n\n") if p.strip()]
    assert len(paragraphs) == 1, stderr
    for needle in needles:
        assert needle in flat(stderr), stderr


@pytest.mark.parametrize(("given", "needle"), [
    ("--upload-pack=x", "is not a range of two commits"),
    ("--upload-pack=x..main", "'--upload-pack=x' is not a commit name"),
    ("a..b..c", "is not a range of two commits"),
    ("main..nope", "'nope' names no commit of this checkout"),
    ("main..main~3", "is not on the first-parent history of main~3"),
])
def test_a_bad_range_is_refused_before_any_work(includes: tuple[Path, Path, list[str]], given: str,
                                                 needle: str) -> None:
    base, repo, _ = includes
    rc, stdout, stderr = _compat(base, repo, "--range", given, "--no-canary", cache="cache-bad")
    _one_paragraph(rc, stderr, needle)
    assert not stdout and not (base / "cache-bad" / "compat").exists()


def test_a_source_that_is_no_checkout_or_an_llvm_per_commit_is_refused(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "plain" / "triton")
    rc, _, stderr = _compat(tmp_path, tree, "--no-canary")
    _one_paragraph(rc, stderr, f"The source {tree} is not a git checkout")
    proc = run_cli("llvm", "compat", "--source", str(tree), "--llvm", "auto", "--cache-dir", str(tmp_path / "c"),
                   cwd=tmp_path, check=False)
    _one_paragraph(proc.returncode, proc.stderr, "answers for one LLVM, but --llvm is auto")
    assert not (tmp_path / "cache").exists() and not (tmp_path / "c").exists()


# --- the exports against a hostile review (#36): the tree exactly as a checkout has it (its own .gitattributes
# cannot hide or rewrite a file), made afresh at each run, and only marked staging dirs ever removed -------------


def _repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "src").mkdir()
    (repo / "src" / "hidden.cc").write_bytes(b"#include <llvm/Passes/PassPlugin.h>\n")
    (repo / "src" / "stamp.txt").write_bytes(b"id $Format:%H$\n")
    (repo / "src" / "lf.txt").write_bytes(b"a\nb\n")
    (repo / "run.sh").write_bytes(b"#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "bin.dat").write_bytes(bytes(range(256)) * 64)
    (repo / "link").symlink_to("src/lf.txt")
    (repo / ".gitattributes").write_text("src/hidden.cc export-ignore\nsrc/stamp.txt export-subst\n"
                                         "*.txt text eol=crlf ident\n")
    return repo, _commit(repo, "attributes that git archive would apply")


def _history_of(repo: Path, sha: str) -> commits.History:
    return commits.History(repo, "", sha, sha, (commits.Commit(sha, ""),))


def test_the_export_is_the_tree_as_a_checkout_has_it_whatever_its_gitattributes_say(tmp_path: Path) -> None:
    repo, sha = _repo(tmp_path)
    sub = tmp_path / "sub"  # a submodule (mode 160000): left out, as git archive left it
    sub.mkdir()
    _git(sub, "init", "-q", "-b", "main")
    (sub / "f").write_text("x\n")
    sub_sha = _commit(sub, "sub")
    _git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub_sha},third_party/sub")
    _git(repo, "commit", "-qm", "with a submodule")
    sha = _git(repo, "rev-parse", "HEAD")
    tree = commits.export(_history_of(repo, sha), sha, tmp_path / "trees")
    assert tree == tmp_path / "trees" / sha
    listed = _git(repo, "ls-tree", "-r", "--name-only", sha).splitlines()
    on_disk = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if not p.is_dir() or p.is_symlink())
    assert on_disk == sorted([*(n for n in listed if n != "third_party/sub"), commits.MARKER])
    for name in listed:
        if name in ("third_party/sub", "link"):
            continue
        blob = subprocess.run(["git", "cat-file", "blob", f"{sha}:{name}"], cwd=repo, capture_output=True,
                              check=True).stdout
        assert (tree / name).read_bytes() == blob, name  # raw: no export-subst, no eol, no ident
    assert (tree / "src" / "stamp.txt").read_bytes() == b"id $Format:%H$\n"
    assert (tree / "src" / "lf.txt").read_bytes() == b"a\nb\n"
    assert os.readlink(tree / "link") == "src/lf.txt"
    assert os.access(tree / "run.sh", os.X_OK) and not os.access(tree / "bin.dat", os.X_OK)
    assert not (tree / "third_party").exists() and not [p for p in (tmp_path / "trees").iterdir() if p != tree]


def test_an_export_ignored_broken_file_fails_the_commit(tmp_path: Path) -> None:
    old = example.write_tree(tmp_path / "old" / "triton", old_includes=True)
    repo, shas = _history(tmp_path, 2, 2, old, example.OLD_INCLUDE_FILES)
    (repo / ".gitattributes").write_text("".join(f"{f} export-ignore\n" for f in example.OLD_INCLUDE_FILES))
    shas.append(_commit(repo, "hide the broken files from git archive"))
    rc, stdout, stderr = _compat(tmp_path, repo, "--range", f"{shas[0]}..{shas[2]}", "--no-canary")
    out = flat(stdout + stderr)
    assert rc == 0, out
    assert f"first failing: {shas[1][:12]} change 2" in out and example.OLD_PASS_PLUGIN in out


def test_a_tree_already_in_the_cache_is_exported_afresh(tmp_path: Path) -> None:
    repo, sha = _repo(tmp_path)
    trees = tmp_path / "trees"
    tree = commits.export(_history_of(repo, sha), sha, trees)
    (tree / "src" / "lf.txt").write_text("edited\n")
    (tree / "extra.cc").write_text("int x;\n")
    assert commits.export(_history_of(repo, sha), sha, trees) == tree
    assert (tree / "src" / "lf.txt").read_bytes() == b"a\nb\n" and not (tree / "extra.cc").exists()
    assert (tree / commits.MARKER).is_file() and [p.name for p in trees.iterdir()] == [sha]


def test_a_killed_runs_marked_staging_dir_is_removed_by_the_next_export(tmp_path: Path) -> None:
    repo, sha = _repo(tmp_path)
    trees = tmp_path / "trees"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead, mine = trees / f".{sha[:12]}-dead", trees / f".{sha[:12]}-mywork"
    for d in (dead, mine):
        d.mkdir(parents=True)
        (d / "keep.txt").write_text("x\n")
    (dead / commits.STAGING_MARK).write_text(json.dumps({"commit": sha, "pid": gone.pid}) + "\n")
    commits.export(_history_of(repo, sha), sha, trees)
    assert not dead.exists() and (mine / "keep.txt").is_file()


@pytest.mark.parametrize(("target", "reason"), [
    ("/etc/passwd", "is a symlink escaping the archive (/etc/passwd)"),
    ("../../x", "is a symlink escaping the archive (../../x)"),
])
def test_a_link_leaving_the_tree_is_refused_with_the_tar_checks_words(tmp_path: Path, target: str,
                                                                      reason: str) -> None:
    repo, _ = _repo(tmp_path)
    (repo / "src" / "evil").symlink_to(target)
    sha = _commit(repo, "a link out")
    with pytest.raises(UserError) as err:
        commits.export(_history_of(repo, sha), sha, tmp_path / "trees")
    assert f"Refusing to extract the export of commit {sha[:12]}: its entry 'src/evil' {reason}" in str(err.value)
    assert not (tmp_path / "trees" / sha).exists() and not list((tmp_path / "trees").iterdir())


def test_a_git_dir_in_the_tree_is_refused(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)

    def git_in(args: list[str], text: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, input=text, capture_output=True, text=True,
                              check=True).stdout.strip()

    blob = git_in(["hash-object", "-w", "--stdin"], "[core]\n")
    inner = git_in(["mktree"], f"100644 blob {blob}\tconfig\n")
    top = git_in(["mktree"], f"040000 tree {inner}\t.GIT\n")
    sha = _git(repo, "commit-tree", top, "-m", "a .git dir")
    with pytest.raises(UserError, match=r"its entry '\.GIT/config' is inside a \.git directory"):
        commits.export(_history_of(repo, sha), sha, tmp_path / "trees")


def test_the_git_dir_as_source_is_refused_without_git_s_false(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    rc, _, stderr = _compat(tmp_path, repo / ".git", "--no-canary")
    assert rc == 2 and f"The source {repo / '.git'} is not a git checkout:" in flat(stderr), stderr
    assert "(false)" not in stderr


def test_clean_all_removes_only_marked_old_staging_dirs(tmp_path: Path) -> None:
    trees = tmp_path / "cache" / "compat" / "trees"
    users, marked_old, marked_new = (trees / f".0123456789ab-{n}" for n in ("mywork", "old", "new"))
    for d in (users, marked_old, marked_new):
        (d / "tree").mkdir(parents=True)
        (d / "tree" / "f.txt").write_text("x\n")
    for d in (marked_old, marked_new):
        (d / commits.STAGING_MARK).write_text(json.dumps({"commit": "0123456789ab", "pid": 1}) + "\n")
    hours_ago = time.time() - 7200
    for d in (users, marked_old):
        for p in [*d.rglob("*"), d]:
            os.utime(p, (hours_ago, hours_ago))
    out = flat(run_cli("clean", "--all", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path).stdout)
    assert not marked_old.exists()
    assert (users / "tree" / "f.txt").is_file() and (marked_new / "tree" / "f.txt").is_file()
    assert f"{users} is no exported tree tritonbuild made (no marker): left alone" in out
    assert f"{marked_new} is an export llvm compat is writing now" in out


def test_llvm_system_is_the_newest_installed_llvm_with_mlir_as_plan_reads_it(tmp_path: Path) -> None:
    # a reviewer's finding: Debian's default llvm-config (LLVM 14, no MLIR) was taken, and every commit "failed"
    found = commits.llvm("system", tmp_path)
    assert found.has_mlir and found.prefix == str(LLVM)  # the only LLVM with MLIR the tests install
    repo, _ = _history(tmp_path, 1, 0, tmp_path, ())
    proc = run_cli("llvm", "compat", "--source", str(repo), "--llvm", "system", "--backends", "nvidia",
                   "--no-proton", "--offline", "--no-canary", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path,
                   check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"against LLVM {found.version} at {LLVM}" in flat(proc.stdout + proc.stderr)
