"""``tritonbuild llvm compat`` through the real CLI (#36): real git histories of the example tree, planned (and
canary-compiled) commit by commit against Debian's LLVM 22. The boundary is found by the include preflight (a
commit that includes llvm/Passes/PassPlugin.h, which LLVM 22.1 moved) and by the canary (a commit that overrides
RewritePattern::match, which LLVM 21 removed); the checkout is never touched, the steps are cached, only the
boundary's trees are kept, and bad input is refused before any work."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from tritonbuild import example

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
    assert steps[0].startswith(f"step 1 (of at most 5): {shas[6][:12]} change 7: fail (")
    assert steps[1].startswith(f"step 2 (of at most 5): {shas[0][:12]} change 1: pass (")
    # the checkout: same HEAD, nothing changed, added or ignored; no worktree
    assert _git(repo, "rev-parse", "HEAD") == head and _git(repo, "status", "--porcelain", "--ignored") == status
    assert len(_git(repo, "worktree", "list").splitlines()) == 1
    # only the boundary's exported trees are kept, and they are the commits' trees
    trees = base / "cache" / "compat" / "trees"
    assert sorted(p.name for p in trees.iterdir()) == sorted([shas[3], shas[4]])
    assert f"trees kept (exported commits): {trees / shas[3]}, {trees / shas[4]}" in out
    assert example.OLD_PASS_PLUGIN in (trees / shas[4] / "python/src/ir.cc").read_text()
    assert example.OLD_PASS_PLUGIN not in (trees / shas[3] / "python/src/ir.cc").read_text()


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
    assert sorted(p.name for p in (base / "cache-none" / "compat" / "trees").iterdir()) == sorted([shas[4], shas[6]])
    rc, stdout, _ = _compat(base, repo, "--range", f"{shas[4]}..{shas[6]}", "--no-canary", "--json",
                            cache="cache-none")
    data = json.loads(stdout)
    assert rc == 1 and data["answer"]["found"] is False and data["answer"]["newest_passing"] is None
    assert [s["commit"] for s in data["answer"]["failing_shown"]] == [shas[4], shas[6]]


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
