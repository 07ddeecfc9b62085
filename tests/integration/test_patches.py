"""--patch (#36) through the real CLI on the example tree against Debian's LLVM 22: patches are applied to a copy of
the source that tritonbuild owns (the checkout stays as it was: its files, their mtimes, git status), a patch that
does not apply or names a path outside the source is refused at plan time, the patches' sha256 go into the key and
the version, and the copy is re-synced without touching what did not change."""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.helpers import WHEEL_ONLY, one_of, patch_headers
from tests.integration.conftest import LLVM, cuda_stub, flat, git_commit, refused, run_cli, snapshot
from tests.integration.conftest import offline_plan as plan
from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.gather import patches
from tritonbuild.plan import PatchInfo
from tritonbuild.reporter import silent
from tritonbuild.system import paths

OLD, NEW = example.OLD_PASS_PLUGIN, "llvm/Plugins/PassPlugin.h"


def diff_of(tree: Path, rel: str, old: str, new: str) -> str:
    before = (tree / rel).read_text().splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, [line.replace(old, new) for line in before], f"a/{rel}", f"b/{rel}"))


def fix_includes(tree: Path, dest: Path) -> Path:
    """A patch that moves the old include to where LLVM 22.1 has it, in every file that has it."""
    dest.write_text("".join(diff_of(tree, rel, OLD, NEW) for rel in example.OLD_INCLUDE_FILES))
    return dest





def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def old_tree(tmp_path: Path) -> Path:
    tree = example.write_tree(tmp_path / "triton", old_includes=True)
    git_commit(tree)
    return tree


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    tree = example.write_tree(tmp_path / "triton")
    git_commit(tree)
    return tree


def test_a_patch_fixes_the_moved_include_and_the_checkout_is_untouched(old_tree: Path, tmp_path: Path) -> None:
    fix = fix_includes(old_tree, tmp_path / "fix.diff")
    refused(plan(old_tree, tmp_path), f"include {OLD}: moved to {NEW}")
    before = snapshot(old_tree)
    data = one_of(plan(old_tree, tmp_path, "--json", "--patch", "fix.diff", check=True).stdout, "plans")
    assert snapshot(old_tree) == before and before[1] == ""
    src = data["source"]
    assert src["checkout"] == str(old_tree) and Path(src["root"]).is_relative_to(tmp_path / "cache" / "patched")
    digest = sha256(fix.read_bytes())
    assert src["patches"] == [{"path": "fix.diff", "sha256": digest, "files": sorted(example.OLD_INCLUDE_FILES)}]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=old_tree, capture_output=True, text=True,
                            check=True).stdout.strip()
    assert src["commit"] == commit and src["dirty"] is False  # the git facts are the checkout's
    assert data["wheel"]["version"] == f"3.6.0+git{commit[:8]}.p{sha256(digest.encode())[:8]}"
    for rel in example.OLD_INCLUDE_FILES:
        assert NEW in (Path(src["root"]) / rel).read_text() and OLD in (old_tree / rel).read_text()
    shown = flat(plan(old_tree, tmp_path, "--patch", "fix.diff", check=True).stdout)
    assert f"fix.diff (sha256 {digest[:16]}; python/src/ir.cc, test/lib/Instrumentation/Hello.cpp)" in shown


def test_the_key_and_the_version_follow_the_patches(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "lib/Core.cpp", "A"))
    (tmp_path / "b.diff").write_text(_comment_patch(tree, "python/src/main.cc", "B"))

    def key(*args: str) -> tuple[str, str]:
        data = one_of(plan(tree, tmp_path, "--json", *args, check=True).stdout, "plans")
        return data["key"], data["wheel"]["version"]

    plain, a, b, ab = key(), key("--patch", "a.diff"), key("--patch", "b.diff"), key("--patch", "a.diff",
                                                                                    "--patch", "b.diff")
    assert len({plain[0], a[0], b[0], ab[0]}) == 4 and key("--patch", "a.diff") == a
    assert "+p" not in plain[1] and ".p" not in plain[1]
    assert a[1].startswith(plain[1] + ".p") and a[1] != b[1]
    # a release branch has no +git label: the patches' label is the local label
    subprocess.run(["git", "checkout", "-q", "-b", "release/3.6.x"], cwd=tree, check=True)
    assert key("--patch", "a.diff")[1] == "3.6.0+p" + a[1].rsplit(".p", 1)[1]
    # with the env variable (';' separated, relative to the current dir), the same patches
    env_key = one_of(run_cli("plan", "--json", "--source", str(tree), "--llvm", str(LLVM), "--cache-dir",
                             str(tmp_path / "cache"), "--offline", cwd=tmp_path,
                             env={"TRITONBUILD_PATCHES": "a.diff;b.diff"}).stdout, "plans")
    assert env_key["source"]["patches"][1]["path"] == "b.diff"


def _comment_patch(tree: Path, rel: str, mark: str) -> str:
    lines = (tree / rel).read_text().splitlines(keepends=True)
    return "".join(difflib.unified_diff(lines, [f"// patched {mark}\n", *lines], f"a/{rel}", f"b/{rel}"))


def test_a_patch_that_does_not_apply_is_refused_and_nothing_is_made(old_tree: Path, tmp_path: Path) -> None:
    fix = fix_includes(old_tree, tmp_path / "fix.diff")
    fix.write_text(fix.read_text().replace(f"-#include \"{OLD}\"", "-#include \"llvm/Elsewhere.h\"", 1))
    before = snapshot(old_tree)
    err = refused(plan(old_tree, tmp_path, "--patch", "fix.diff"), "The patch fix.diff does not apply",
                  "patch failed: python/src/ir.cc:1")
    assert "Nothing was changed" in err
    assert snapshot(old_tree) == before  # and of the copy nothing but its lock file: no tree, no scratch
    assert [p.suffix for p in (tmp_path / "cache" / "patched").iterdir()] == [".lock"]


def _hostile(kind: str, tree: Path, tmp_path: Path) -> str:
    good = diff_of(tree, "python/src/ir.cc", OLD, NEW)
    path = tmp_path / "bad.diff"
    if kind == "dotdot":
        path.write_text(good.replace("a/python/src/ir.cc", "a/../outside.cc").replace("b/python/src/ir.cc",
                                                                                     "b/../outside.cc"))
    elif kind == "absolute":
        path.write_text(good.replace("a/python/src/ir.cc", "/tmp/outside.cc").replace("b/python/src/ir.cc",
                                                                                     "/tmp/outside.cc"))
    elif kind == "gitconfig":
        path.write_text("diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n"
                        "@@ -1 +1,2 @@\n [core]\n+\tfsmonitor = touch /tmp/pwned\n")
    elif kind == "binary":
        path.write_bytes(good.encode() + b"\xff\xfe\x00binary")
    elif kind in ("link", "link-to-dir"):  # #44: a symlink's mode spelled as git reads it (0120000)
        target = "/etc" if kind == "link" else "python"
        path.write_text(f"diff --git a/lib/l b/lib/l\nnew file mode 0120000\n--- /dev/null\n+++ b/lib/l\n"
                        f"@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n")
    elif kind == "mode-only":  # #44: no ---/+++ lines, git takes the path from the diff --git line
        path.write_text("diff --git a/../../x b/../../x\nold mode 100644\nnew mode 100755\n")
    elif kind == "rename":
        path.write_text("diff --git a/setup.py b/setup.py\nsimilarity index 100%\nrename from setup.py\n"
                        "rename to ../x\n")
    elif kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize(("kind", "words"), [
    ("dotdot", "'..'"), ("absolute", "absolute path"), ("gitconfig", ".git directory"),
    ("binary", "not UTF-8 text"), ("directory", "a directory"), ("fifo", "fifo"),
    ("link", "(line 2: 'new file mode 0120000')"), ("link-to-dir", "mode 120000, which git reads as a symlink"),
    ("mode-only", "'a/../../x' (line 1)"), ("rename", "'../x' (line 4)"),
])
def test_hostile_patches_are_refused_before_any_work(old_tree: Path, tmp_path: Path, kind: str, words: str) -> None:
    given = _hostile(kind, old_tree, tmp_path)
    before = snapshot(old_tree)
    refused(plan(old_tree, tmp_path, "--patch", given), given, words)
    assert snapshot(old_tree) == before and not (tmp_path / "cache" / "patched").exists()
    assert not Path("/tmp/outside.cc").exists()


def test_the_copy_follows_the_checkout_and_keeps_what_did_not_change(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    (tree / ".gitignore").write_text("ignored/\n")
    git_commit(tree, init=False)
    planned = one_of(plan(tree, tmp_path, "--json", "--patch", "a.diff", check=True).stdout, "plans")
    root = Path(planned["source"]["root"])
    mtimes = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    assert (root / "python/src/ir.cc").read_text().startswith("// patched A\n")
    (tree / "lib/Core.cpp").write_text((tree / "lib/Core.cpp").read_text() + "// edited in the checkout\n")
    os.utime(tree / "lib/Core.cpp", ns=(1, 1))  # whatever the clock did, the copy must take the edit
    (tree / "lib/ExamplePlugin.cpp").unlink()
    (tree / "lib/New.cpp").write_text("// untracked, not ignored\n")
    (tree / "ignored").mkdir()
    (tree / "ignored/big.o").write_text("ignored\n")
    plan(tree, tmp_path, "--patch", "a.diff", check=True)
    assert (root / "lib/Core.cpp").read_text().endswith("// edited in the checkout\n")
    assert not (root / "lib/ExamplePlugin.cpp").exists() and (root / "lib/New.cpp").is_file()
    assert not (root / "ignored").exists()
    kept = {p: t for p, t in mtimes.items() if p.name not in ("Core.cpp", "ExamplePlugin.cpp")}
    assert {p: p.stat().st_mtime_ns for p in kept} == kept  # the patched ir.cc among them
    # what a build or develop links into the copy (compile_commands.json, python/triton/_C's libraries) stays
    (root / "python/triton/_C/libtriton.so").symlink_to(tmp_path / "build-dir-lib.so")
    plan(tree, tmp_path, "--patch", "a.diff", check=True)
    assert (root / "python/triton/_C/libtriton.so").is_symlink()


def test_a_recipes_patches_are_relative_to_the_recipe(old_tree: Path, tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    fix_includes(old_tree, recipes / "fix.diff")
    (recipes / "fixed.toml").write_text(f'source = "{old_tree}"\npatches = ["fix.diff"]\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run_cli("plan", "--json", "--recipe", str(recipes / "fixed.toml"), "--llvm", str(LLVM), "--cache-dir",
                   str(tmp_path / "cache"), "--offline", cwd=elsewhere)
    assert one_of(proc.stdout, "plans")["source"]["patches"][0]["path"] == str(recipes / "fix.diff")


def test_the_sync_writes_only_what_differs(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for rel, text in {"a.txt": "one\n", "d/b.txt": "two\n", "d/c.txt": "three\n"}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n"
    info = PatchInfo("p.diff", sha256(diff.encode()), patches.touched_files(diff, "p.diff"))
    dest = tmp_path / "copy"

    def sync() -> None:
        patches.sync(src, patches.source_files(src), patches.patched_contents(src, [(info, diff.encode())],
                                                                            tmp_path / "scratch"), dest)

    sync()
    assert (dest / "a.txt").read_text() == "ONE\n" and (src / "a.txt").read_text() == "one\n"
    before = {p: (dest / p).stat().st_mtime_ns for p in ("a.txt", "d/b.txt", "d/c.txt")}
    sync()
    assert {p: (dest / p).stat().st_mtime_ns for p in before} == before
    (dest / "compile_commands.json").symlink_to("/nowhere")  # what a build or develop writes there stays
    (dest / "d/c.txt").write_text("changed in the copy\n")
    os.utime(dest / "d/c.txt", ns=(before["d/c.txt"], before["d/c.txt"]))  # same mtime, other size
    (src / "d/b.txt").unlink()
    (src / "e").mkdir()
    (src / "e/f.txt").write_text("new\n")
    sync()
    assert (dest / "compile_commands.json").is_symlink() and (dest / "d/c.txt").read_text() == "three\n"
    assert not (dest / "d/b.txt").exists() and (dest / "e/f.txt").read_text() == "new\n"
    shutil.rmtree(src / "d")  # a dir the source no longer has goes, once empty of what the syncs wrote
    (src / "d").write_text("a file where a dir was\n")
    sync()
    assert (dest / "d").read_text() == "a file where a dir was\n"
    (dest.with_name("copy.synced.json")).write_text("{damaged")  # without the record, all but the source goes
    sync()
    assert not (dest / "compile_commands.json").is_symlink() and (dest / "a.txt").read_text() == "ONE\n"


def test_a_patch_that_does_not_apply_names_the_file_and_hunk(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("one\n")
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zero\n+ONE\n"
    with pytest.raises(UserError) as err:
        patches.patched_contents(src, [(PatchInfo("p.diff", "0" * 64, ("a.txt",)), diff.encode())],
                                 tmp_path / "scratch")
    assert not (tmp_path / "scratch").exists()
    assert "The patch p.diff does not apply" in str(err.value) and "a.txt:1" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("target", ["d", "f"])
def test_a_link_git_makes_in_the_scratch_tree_is_refused_and_nothing_is_made(tmp_path: Path, target: str) -> None:
    # the reader refuses a link's mode up front; were one to pass it, the scratch apply must still refuse the link
    # git made (#44: a link to a directory was listed among os.walk's dirs, missed, and "applied" went on)
    src = tmp_path / "src"
    (src / "d").mkdir(parents=True)
    (src / "f").write_text("x\n")
    diff = f"diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+{target}\n"
    with pytest.raises(UserError, match="l"):
        patches.touched_files(diff, "p.diff")
    with pytest.raises(UserError) as err:
        patches.patched_contents(src, [(PatchInfo("p.diff", "0" * 64, ("l",)), diff.encode())], tmp_path / "scr")
    assert "git apply wrote 'l' (patches: p.diff), not a regular file" in str(err.value)
    assert not (tmp_path / "scr").exists() and sorted(p.name for p in src.iterdir()) == ["d", "f"]


# --- the reader and git agree (#44): on generated headers, what git apply reads is what tritonbuild checked --------

def _git_reads(text: str, where: Path) -> tuple[int, set[str], set[int], str]:
    """What git apply reads in ``text`` outside any repository: its exit status, the paths (--numstat -z), the
    modes (--summary) and what it said."""
    (where / "p.diff").write_text(text)
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(where.parent)}
    run = [subprocess.run(["git", "apply", "-p1", how, "p.diff"], cwd=where, env=env, capture_output=True,
                          text=True, check=False) for how in ("--numstat", "--summary")]
    tokens = subprocess.run(["git", "apply", "-p1", "--numstat", "-z", "p.diff"], cwd=where, env=env,
                            capture_output=True, text=True, check=False).stdout.split("\0")
    paths = {t.split("\t", 2)[2] for t in tokens if t.count("\t") >= 2} | {t for t in tokens if "\t" not in t}
    said = run[1].stdout
    modes = {int(m, 8) for m in re.findall(r"^ (?:create|delete) mode ([0-7]+) ", said, re.MULTILINE)}
    modes |= {int(m, 8) for pair in re.findall(r"^ mode change ([0-7]+) => ([0-7]+) ", said, re.MULTILINE)
              for m in pair}
    return max(r.returncode for r in run), paths - {""}, modes, run[0].stderr + run[1].stderr


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(patch=patch_headers(hostile=False) | patch_headers())
def test_git_apply_reads_no_path_or_mode_the_reader_did_not_check(tmp_path: Path,
                                                                  patch: tuple[str, set[str], bool]) -> None:
    text, _, _ = patch
    where = Path(tempfile.mkdtemp(dir=tmp_path))
    rc, paths, modes, said = _git_reads(text, where)
    try:
        files: tuple[str, ...] | None = patches.touched_files(text, "p.diff")
    except UserError:
        files = None
    if "invalid mode" in said or not modes <= set(patches.REGULAR_MODES):
        assert files is None, (text, said, modes)  # a mode git reads as a link, a submodule, ... is refused
    if files is not None:
        assert rc == 0 and paths <= set(files), (text, said, paths, files)  # git reads no name left unchecked
        for rel in files:  # and git's own path checks find nothing wrong with them
            with contextlib.suppress(OSError):  # a rename of a to a/b: a stays a file
                (where / rel).parent.mkdir(parents=True, exist_ok=True)
                (where / rel).write_text("a\n")
        check = subprocess.run(["git", "apply", "-p1", "--check", "p.diff"], cwd=where, capture_output=True,
                               text=True, check=False, env={**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)})
        assert "invalid path" not in check.stderr and "beyond a symbolic link" not in check.stderr, check.stderr


def test_a_link_out_of_the_source_is_refused(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    (tree / "lib/secret.h").symlink_to("/etc/passwd")
    refused(plan(tree, tmp_path, "--patch", "a.diff"), "lib/secret.h", "absolute link")
    (tree / "lib/secret.h").unlink()
    (tree / "lib/secret.h").symlink_to("../../outside.h")
    refused(plan(tree, tmp_path, "--patch", "a.diff"), "lib/secret.h", "leaves the source")



def test_the_compile_commands_link_a_build_leaves_at_the_root_does_not_refuse_the_patch(tree: Path,
                                                                                          tmp_path: Path) -> None:
    # a build or develop links <source>/compile_commands.json into its build dir (an absolute link that leaves the
    # source): after any build, --patch refused the checkout because of tritonbuild's own link
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    made = tmp_path / "cache" / "build" / "0123456789abcdef" / "cmake" / "compile_commands.checkout.json"
    made.parent.mkdir(parents=True)
    made.write_text("[]")
    (tree / "compile_commands.json").symlink_to(made)
    proc = plan(tree, tmp_path, "--patch", "a.diff")
    assert proc.returncode == 0, proc.stderr
    (tree / "lib" / "elsewhere.json").symlink_to(made)  # any other link that leaves the source still is refused
    refused(plan(tree, tmp_path, "--patch", "a.diff"), "lib/elsewhere.json", "absolute link")


def test_the_links_develop_leaves_in_the_checkout_do_not_refuse_the_patch(tree: Path, tmp_path: Path) -> None:
    # develop links python/triton/_C's libraries into its build dir (they survive `pip uninstall triton`), and a
    # 2024 tree's backends into python/triton/backends: --patch on that checkout exited 2 ("an absolute link that
    # leaves the source", #45); they are tritonbuild's (a build dir holds its marker) and no part of the copy
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    build_dir = tmp_path / "cache" / "build" / "0123456789abcdef"
    lib = build_dir / "dev" / "tritonbuild-stage" / "triton" / "_C" / "libtriton.so"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(b"\x7fELF")
    (build_dir / paths.BUILD_DIR_MARKER).write_text("tritonbuild build dir 0123456789abcdef\n")
    (tree / "python/triton/_C").mkdir(parents=True, exist_ok=True)
    (tree / "python/triton/_C/libtriton.so").symlink_to(lib)
    (tree / "python/triton/backends").mkdir(parents=True, exist_ok=True)
    (tree / "python/triton/backends/nvidia").symlink_to(tree / "third_party/nvidia/backend")
    proc = plan(tree, tmp_path, "--patch", "a.diff")
    assert proc.returncode == 0, proc.stderr
    planned = one_of(plan(tree, tmp_path, "--patch", "a.diff", "--json", check=True).stdout, "plans")
    root = Path(planned["source"]["root"])
    assert not (root / "python/triton/_C/libtriton.so").exists()  # the copy's own develop links its own
    assert not (root / "python/triton/backends/nvidia").is_symlink()
    (build_dir / paths.BUILD_DIR_MARKER).unlink()  # the same link into a dir that is no build dir is the user's
    refused(plan(tree, tmp_path, "--patch", "a.diff"), "python/triton/_C/libtriton.so", "absolute link")


# --- one real build of a patched tree ------------------------------------------------------------------------------

def test_a_patched_build_names_its_patches_in_the_wheel_the_manifest_and_verify(old_tree: Path,
                                                                                 tmp_path: Path) -> None:
    fix = fix_includes(old_tree, tmp_path / "fix.diff")
    ptxas = tmp_path / "ptxas"
    shutil.copy(shutil.which("true") or "/bin/true", ptxas)
    env = {**WHEEL_ONLY, "TRITON_PTXAS_PATH": str(ptxas)}
    before = snapshot(old_tree)
    proc = run_cli("build", "--json", "--source", str(old_tree), "--llvm", str(LLVM), "--offline", "--backends",
                   "nvidia", "--no-proton", "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "dist"),
                   "--patch", str(fix), cwd=tmp_path, env=env)
    result = one_of(proc.stdout, "wheels")
    assert snapshot(old_tree) == before  # not even compile_commands.json: it goes into the copy
    digest = sha256(fix.read_bytes())
    named = {"path": str(fix), "sha256": digest, "files": sorted(example.OLD_INCLUDE_FILES)}
    with zipfile.ZipFile(result["wheel"]) as zf:
        info = json.loads(zf.read("triton/_build_info.json"))
    assert info["source"]["patches"] == [named] and info["source"]["checkout"] == str(old_tree)
    assert ".p" + sha256(digest.encode())[:8] in info["wheel"]["version"]
    manifest = json.loads(next((tmp_path / "dist").glob("*.manifest.json")).read_text())
    assert manifest["patches"] == [named] and manifest["plan"]["source"]["patches"] == [named]
    shown = flat(run_cli("verify", "--no-import", result["wheel"], cwd=tmp_path).stdout)
    assert f"patches: {fix} (sha256 {digest}) applied to the source" in shown


def test_an_editable_install_of_a_patched_source_is_warned_about(tree: Path, tmp_path: Path) -> None:
    from tritonbuild.gather.request import Request, make_plan

    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    kw = {"source": str(tree), "llvm": str(LLVM), "offline": True, "cache_dir": str(tmp_path / "cache"),
          "patches": ("a.diff",)}
    env = {**os.environ, "CUDA_HOME": cuda_stub()}
    develop = make_plan(Request.from_cli(kw, env, tmp_path, editable=True, warn=silent))
    said = f"the editable install points at tritonbuild's patched copy {develop.source.root}, not at the checkout"
    assert any(said in w for w in develop.warnings), develop.warnings
    assert not any(said in w for w in make_plan(Request.from_cli(kw, env, tmp_path, warn=silent)).warnings)


# --- what a hostile reviewer found (#36) ---------------------------------------------------------------------------

def _new_file(rel: str, text: str = "x\n") -> str:
    body = "".join(f"+{line}\n" for line in text.splitlines())
    return (f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n"
            f"@@ -0,0 +1,{len(text.splitlines())} @@\n{body}")


@pytest.mark.parametrize(("rel", "words"), [
    ("d/" * 3000 + "f.txt", "longer than 4096 bytes"),
    ("python/" + "n" * 300 + "/f.txt", "longer than 255 bytes"),
])
def test_a_name_no_file_system_takes_is_refused_when_the_patch_is_read(tree: Path, tmp_path: Path, rel: str,
                                                                       words: str) -> None:
    (tmp_path / "long.diff").write_text(_new_file(rel))
    refused(plan(tree, tmp_path, "--patch", "long.diff"), "The patch long.diff", "(line 1)", words)
    assert not (tmp_path / "cache" / "patched").exists()


@pytest.mark.parametrize(("rel", "words"), [
    ("python/src", "is a directory in the source"),  # git apply in the checkout: Directory not empty
    ("setup.py/x", "lies under setup.py, which is a file in the source"),
])
def test_a_path_git_could_not_write_in_the_checkout_is_refused(tree: Path, tmp_path: Path, rel: str,
                                                               words: str) -> None:
    (tmp_path / "clash.diff").write_text(_new_file(rel, "hi\n"))
    refused(plan(tree, tmp_path, "--patch", "clash.diff"), "The patch clash.diff", repr(rel), "(line 1)", words)
    assert not (tmp_path / "cache" / "patched").exists() and (tree / "python/src").is_dir()


def _big_patch(tree: Path, tmp_path: Path) -> Path:
    """An untracked 64 MiB file and a patch of its first line: the patch step takes a while."""
    (tree / "big.txt").write_bytes(b"first\n" + b"0123456789abcdef\n" * (4 << 20))
    (tmp_path / "big.diff").write_text("--- a/big.txt\n+++ b/big.txt\n@@ -1,2 +1,2 @@\n-first\n+FIRST\n"
                                       " 0123456789abcdef\n")
    return tmp_path / "big.diff"


def test_a_killed_patch_run_leaves_nothing_in_tmp_and_the_next_run_removes_its_scratch(tree: Path,
                                                                                      tmp_path: Path) -> None:
    _big_patch(tree, tmp_path)
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    patched = tmp_path / "cache" / "patched"
    env = {**os.environ, "TMPDIR": str(tmp), "CUDA_HOME": cuda_stub()}
    proc = subprocess.Popen([sys.executable, "-m", "tritonbuild", "plan", "--source", str(tree), "--llvm", str(LLVM),
                             "--cache-dir", str(tmp_path / "cache"), "--offline", "--patch", "big.diff"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            scratch = [p for p in (*tmp.glob("tritonbuild-patch-*"), *patched.glob("*.scratch")) if p.is_dir()]
            if scratch:
                break
            time.sleep(0.001)
    finally:
        proc.kill()  # kill -9 in the middle of the patch step
        proc.wait()
    assert scratch, "the patch step was not seen"
    assert list(tmp.iterdir()) == []  # nothing of a patch run goes to $TMPDIR
    assert [p.parent for p in scratch] == [patched]
    plan(tree, tmp_path, "--patch", "big.diff", check=True)  # the next run takes the lock: the scratch goes
    assert not scratch[0].exists() and list(tmp.iterdir()) == []
    (copy,) = [p for p in patched.iterdir() if p.is_dir()]
    assert (copy / "tree" / "big.txt").read_bytes().startswith(b"FIRST\n0123")


def test_a_scratch_dir_left_behind_is_removed_under_the_lock(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    planned = one_of(plan(tree, tmp_path, "--json", "--patch", "a.diff", check=True).stdout, "plans")
    root = Path(planned["source"]["root"])
    scratch = root.parent.with_name(root.parent.name + ".scratch")
    assert not scratch.exists()  # removed when done
    (scratch / "tree/python/src").mkdir(parents=True)
    (scratch / "tree/python/src/ir.cc").write_text("a full copy a killed run left\n")
    plan(tree, tmp_path, "--patch", "a.diff", check=True)
    assert not scratch.exists()


def test_every_entry_the_copy_cannot_carry_is_named_with_what_it_is(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    shutil.rmtree(tree / ".git")  # a source that is no checkout: every entry is looked at (git lists no FIFO)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tree / "third_party/evil").symlink_to(outside)
    (tree / "lib/zero").symlink_to("/dev/zero")
    os.mkfifo(tree / "lib/pipe")
    for n in range(12):
        (tree / f"third_party/zz{n:02}.h").symlink_to(outside / "x.h")  # sorted after the three above
    err = refused(plan(tree, tmp_path, "--patch", "a.diff"), "15 entries that a patched copy of the source "
                  "cannot carry", f"'third_party/evil' is an absolute link that leaves the source (-> {outside})",
                  "'lib/zero' is an absolute link that leaves the source (-> /dev/zero): remove it;",
                  "'lib/pipe' is a FIFO, not a regular file, directory or link: remove it",
                  "and 5 more such entries")
    assert "point back into the checkout" not in err and "copy of what it points at" not in err
    assert not (tmp_path / "cache" / "patched").exists()


def test_advice_names_the_checkout_and_keeps_the_patches(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "a.diff").write_text(_comment_patch(tree, "python/src/ir.cc", "A"))
    err = refused(plan(tree, tmp_path, "--patch", "a.diff", "--require-pinned-llvm"),
                  f"`tritonbuild llvm build --source {tree} --patch a.diff --backends")
    assert "cache/patched" not in err
    (tree / ".gitmodules").write_text('[submodule "sleef"]\n\tpath = third_party/sleef\n')
    cml = tree / "third_party" / "cpu" / "CMakeLists.txt"
    cml.write_text(cml.read_text() + 'add_subdirectory("${CMAKE_SOURCE_DIR}/third_party/sleef" sleef)\n')
    err = refused(plan(tree, tmp_path, "--patch", "a.diff", "--backends", "cpu"),
                  f"`git -C {tree} submodule update --init third_party/sleef`")
    assert "cache/patched" not in err


@pytest.mark.parametrize("given", ["/etc/passwd", "../x.diff", "inside/../../x.diff", "link.diff"])
def test_a_recipes_patches_stay_in_the_recipes_directory(old_tree: Path, tmp_path: Path, given: str) -> None:
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    fix_includes(old_tree, tmp_path / "x.diff")
    (recipes / "link.diff").symlink_to(tmp_path / "x.diff")
    (recipes / "r.toml").write_text(f'source = "{old_tree}"\npatches = ["{given}"]\n')
    proc = run_cli("plan", "--recipe", str(recipes / "r.toml"), "--llvm", str(LLVM), "--cache-dir",
                   str(tmp_path / "cache"), "--offline", cwd=tmp_path, check=False)
    refused(proc, f"The recipe {recipes / 'r.toml'}", given, "lies outside the recipe's directory")
    assert not (tmp_path / "cache" / "patched").exists()
