"""The patch reader (#36): every path a patch names lies inside the source or the patch is refused; hunk bodies are
not read as headers; quoted names and renames are read as git writes them. (Applying and syncing run git:
tests/integration/test_patches.py.)"""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.errors import UserError
from tritonbuild.gather import patches

PARTS = st.sampled_from(["a", "b", "src", ".", "..", "", ".git", ".GIT", "x.h", "/", "\\", " ", "é", "\x01"])
RAW = st.lists(PARTS, min_size=0, max_size=6).map("/".join) | st.text(max_size=30)


def _lands_inside(rel: str) -> bool:
    """``rel`` joined to a root stays under it, names no .git and no parent."""
    root = "/copy/tree"
    full = posixpath.normpath(posixpath.join(root, rel))
    return (full.startswith(root + "/") and ".." not in rel.split("/")
            and ".git" not in [p.lower() for p in rel.split("/")])


@settings(max_examples=400, deadline=None)
@given(raw=RAW, strip=st.booleans())
def test_a_named_path_lies_inside_the_copy_or_is_refused(raw: str, strip: bool) -> None:
    if patches.path_problem(raw, strip=strip) is None:
        assert _lands_inside(patches.inside(raw, strip=strip)), raw


@settings(max_examples=300, deadline=None)
@given(old=RAW.filter(lambda r: "\n" not in r and "\t" not in r and "\r" not in r),
       new=RAW.filter(lambda r: "\n" not in r and "\t" not in r and "\r" not in r))
def test_every_path_of_a_whole_patch_lies_inside_the_copy_or_the_patch_is_refused(old: str, new: str) -> None:
    text = (f"diff --git a/{old} b/{new}\n--- a/{old}\n+++ b/{new}\n@@ -1 +1 @@\n-x\n+y\n"
            f"diff --git a/f b/f\nrename from {old}\nrename to {new}\n")
    try:
        files = patches.touched_files(text, "p.diff")
    except UserError:
        return
    assert files and all(_lands_inside(f) for f in files), files


@pytest.mark.parametrize(("text", "words"), [
    ("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "'..'"),
    ("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "absolute path"),
    ("diff --git a/.git/config b/.git/config\n--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n",
     ".git directory"),
    ("diff --git a/x b/x\nrename from x\nrename to sub/../../y\n", "'..'"),
    ("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n", "a symlink"),
    ('--- "a/\\303\\251/../../x"\n+++ "b/\\303\\251/../../x"\n@@ -1 +1 @@\n-a\n+b\n', "'..'"),
    ("just some text\n", "names no file"),
    ("--- /dev/null\n+++ b/" + "d/" * 3000 + "f\n@@ -0,0 +1 @@\n+x\n", "longer than 4096 bytes"),
    ("--- a/" + "n" * 256 + "\n+++ b/" + "n" * 256 + "\n@@ -1 +1 @@\n-a\n+b\n", "longer than 255 bytes"),
    ("--- a/caf\u00e9" + "\u00e9" * 127 + "\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "longer than 255 bytes"),  # bytes
])
def test_hostile_paths_are_refused(text: str, words: str) -> None:
    with pytest.raises(UserError, match=r"p\.diff") as err:
        patches.touched_files(text, "p.diff")
    assert words in str(err.value)


def test_a_removed_line_that_reads_like_a_header_is_hunk_content() -> None:
    # removing the line "-- /etc/passwd" makes the hunk line "--- /etc/passwd": content, not a file header
    text = ("--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,2 @@\n keep\n--- /etc/passwd\n+++ ../escape\n"
            " end\n")
    assert patches.touched_files(text, "p.diff") == ("notes.txt",)


def test_quoted_names_and_renames_are_read_as_git_writes_them() -> None:
    text = ('diff --git "a/caf\\303\\251 x.h" "b/caf\\303\\251 x.h"\n--- "a/caf\\303\\251 x.h"\n'
            '+++ "b/caf\\303\\251 x.h"\n@@ -1 +1 @@\n-a\n+b\n'
            "diff --git a/old.h b/new.h\nsimilarity index 100%\nrename from old.h\nrename to new.h\n")
    assert patches.touched_files(text, "p.diff") == ("café x.h", "new.h", "old.h")

