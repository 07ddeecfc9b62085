"""The patch reader (#36): every path a patch names lies inside the source or the patch is refused; hunk bodies are
not read as headers; quoted names and renames are read as git writes them. (Applying and syncing run git:
tests/integration/test_patches.py.)"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import control, fine, lands_inside, patch_headers
from tritonbuild.errors import UserError
from tritonbuild.gather import patches

PARTS = st.sampled_from(["a", "b", "src", ".", "..", "", ".git", ".GIT", "x.h", "/", "\\", " ", "é", "\x01"])
RAW = st.lists(PARTS, min_size=0, max_size=6).map("/".join) | st.text(max_size=30)


@settings(max_examples=400, deadline=None)
@given(raw=RAW, strip=st.booleans())
def test_a_named_path_lies_inside_the_copy_or_is_refused(raw: str, strip: bool) -> None:
    # both ways, so that it cannot pass by refusing everything (#48): accepted exactly when it lands inside
    rel = "/".join(raw.split("/")[1:]) if strip else raw
    accepted = patches.path_problem(raw, strip=strip) is None
    assert accepted == (fine(rel) and not control(raw) and not raw.startswith("/") and (not strip or "/" in raw)), raw
    if accepted:
        assert patches.inside(raw, strip=strip) == rel


@settings(max_examples=300, deadline=None)
@given(patch=patch_headers())
def test_a_generated_patch_is_accepted_exactly_when_its_paths_and_modes_are_safe(
        patch: tuple[str, set[str], bool]) -> None:
    text, touched, safe = patch
    try:
        files = patches.touched_files(text, "p.diff")
    except UserError as err:
        said = str(err)
        assert not safe, said  # a patch of regular files inside the source is never refused
        assert said.startswith("The patch p.diff ") and "(line " in said and "\n" not in said, said
        return
    assert safe, text
    assert set(files) == touched and all(lands_inside(f) for f in files), (files, text)


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


LINK = "diff --git a/l b/l\nnew file mode {}\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n"


@pytest.mark.parametrize(("text", "line", "words"), [
    # a symlink's mode in every spelling git reads (strtoul base 8: leading zeros, white space, a tail after it)
    (LINK.format("0120000"), 2, "mode 120000, which git reads as a symlink"),
    (LINK.format("120777"), 2, "mode 120777, which git reads as a symlink"),
    (LINK.format("120000 junk"), 2, "mode 120000, which git reads as a symlink"),
    (LINK.format(" 120000"), 2, "mode 120000, which git reads as a symlink"),  # two spaces after "mode"
    (LINK.format("+120000\r"), 2, "mode 120000, which git reads as a symlink"),
    (LINK.format("\n120000"), 2, "mode 120000, which git reads as a symlink"),  # strtoul skips the newline
    (LINK.format("160000"), 2, "mode 160000, which git reads as a submodule"),
    (LINK.format("040755"), 2, "mode 040755, which git reads as a directory"),
    (LINK.format("100664"), 2, "mode 100664, which git reads as no regular file's mode"),
    (LINK.format("120000x"), 2, "a mode git cannot read"),
    ("diff --git a/l b/l\nindex 0000000..e69de29 120000\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n-a\n+b\n", 2,
     "mode 120000, which git reads as a symlink"),
    ("diff --git a/l b/l\nold mode 100644\nnew mode 0120000\n", 3, "symlink"),  # a mode change to a link
    ("diff --git a/l b/l\nold mode 120000\nnew mode 100644\n", 2, "symlink"),  # and from one
    ("diff --git a/l b/l\ndeleted file mode 120000\n", 2, "symlink"),
    ("diff --git a/x b/x\nindex 1234567..89abcde 100644\nGIT binary patch\nliteral 0\nHcmV?d00001\n\n", 3,
     "a binary diff"),
    ("diff --git a/x b/x\nindex 1234567..89abcde\nBinary files a/x and b/x differ\n", 3, "a binary diff"),
    # paths git takes from the diff --git line alone, and from rename and copy lines
    ("diff --git a/../../x b/../../x\nold mode 100644\nnew mode 100755\n", 1, "'a/../../x'"),
    ("diff --git a/../../x b/../../x\nnew file mode 100644\n", 1, "'..'"),
    ("diff --git a/../x\tb/../x\nnew file mode 100644\n", 1, "'..'"),  # a tab between the names
    ('diff --git "a/\\056\\056/x" "b/\\056\\056/x"\nnew file mode 100644\n', 1, "'a/../x'"),
    ('diff --git a/.git/config "b/\\056git/config"\nold mode 100644\nnew mode 100755\n', 1, ".git directory"),
    ("diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to ../x\n", 4, "'../x'"),
    ("diff --git a/x b/y\nsimilarity index 100%\nrename old x\nrename new ../x\n", 4, "'../x'"),
    ("diff --git a/x b/y\nsimilarity index 90%\ncopy from x\ncopy to /etc/x\n", 4, "absolute path"),
    ('diff --git a/x b/y\nsimilarity index 90%\ncopy from x\ncopy to "\\056\\056/x"\n', 4, "'../x'"),
    ("diff --git a/x b/y\nrename from x\nrename to y\t/../../z\n", 3, "control character"),  # the tab too
    # a traditional diff's name ends at its timestamp: the name before it is checked
    ("--- a/x/.. 2010-07-05 19:41:17\n+++ b/x/.. 2010-07-05 19:41:17\n@@ -1 +1 @@\n-a\n+b\n", 1, "'a/x/..'"),
])
def test_a_header_git_reads_is_refused_up_front(text: str, line: int, words: str) -> None:
    with pytest.raises(UserError) as err:
        patches.touched_files(text, "p.diff")
    said = str(err.value)
    assert said.startswith("The patch p.diff ") and f"(line {line}" in said and words in said, said
    assert "\n" not in said


def test_names_and_modes_git_reads_as_regular_files_are_accepted() -> None:
    text = ("diff --git a/x b/x\nold mode 100644\nnew mode 0100755\n"  # a mode change, no ---/+++: its name
            'diff --git "a/caf\\303\\251" "b/caf\\303\\251"\nnew file mode  100644\n'
            "diff --git a/my file b/my file\nindex 1234567..89abcde 100755 \n--- a/my file\n+++ b/my file\n"
            "@@ -1 +1 @@\n-a\n+b\n"
            "--- a/t.c\t2010-07-05 19:41:17.620000023 -0500\n+++ b/t.c 2010-07-05 19:41:17 +0100\n"
            "@@ -1 +1 @@\n-a\n+b\n"
            "diff --git a/o b/n\nsimilarity index 90%\nrename old o\nrename new n\n")
    assert patches.touched_files(text, "p.diff") == ("café", "my file", "n", "o", "t.c", "x")


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

