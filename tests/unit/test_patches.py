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


def _fine(rel: str) -> bool:
    """``rel`` (relative to the top) is a name tritonbuild must accept: inside, no .git, no control character,
    no empty component, short."""
    return (_lands_inside(rel) and all(p not in ("", ".") for p in rel.split("/")) and len(rel) < 200
            and not _control(rel))


def _control(text: str) -> bool:
    return any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)


@settings(max_examples=400, deadline=None)
@given(raw=RAW, strip=st.booleans())
def test_a_named_path_lies_inside_the_copy_or_is_refused(raw: str, strip: bool) -> None:
    # both ways, so that it cannot pass by refusing everything (#48): accepted exactly when it lands inside
    rel = "/".join(raw.split("/")[1:]) if strip else raw
    accepted = patches.path_problem(raw, strip=strip) is None
    assert accepted == (_fine(rel) and not _control(raw) and not raw.startswith("/") and (not strip or "/" in raw)), raw
    if accepted:
        assert patches.inside(raw, strip=strip) == rel


# --- generated patch headers (#44): modes in any spelling git reads, every kind of header, quoted names ------------

SAFE_PARTS = ["a", "src", "x.h", "my file", "caf\u00e9", "b", "q\"t", "back\\slash", "-", "1"]
HOSTILE_PARTS = ["..", ".", ".git", ".GIT", "", "\x01", "\x7f"]
MODES = [0o100644, 0o100755, 0o120000, 0o120777, 0o160000, 0o040000, 0o100664, 0o644, 0o1100644]
SPELLINGS = ["{o}", "0{o}", "00{o}", " {o}", "  {o}", "\t{o}", "+{o}", "{o} junk", "{o}\r", "{o}x", "x{o}", ""]
KINDS = ["mode", "new", "deleted", "index", "rename", "copy", "binary"]


@st.composite
def names(draw: st.DrawFn) -> str:
    """A path relative to the top of the source: mostly safe parts, at times a hostile one, at times absolute."""
    parts = draw(st.lists(st.sampled_from(SAFE_PARTS) | st.sampled_from(HOSTILE_PARTS), min_size=1, max_size=4)
                 if draw(st.booleans()) else st.lists(st.sampled_from(SAFE_PARTS), min_size=1, max_size=4))
    return ("/" if draw(st.integers(0, 9)) == 0 else "") + "/".join(parts)


def quote(name: str, octal: set[int]) -> str:
    """``name`` C-quoted as git writes it, the characters at ``octal`` (and every byte that needs it) as \\ooo."""
    out = []
    for i, ch in enumerate(name):
        if ch in '"\\':
            out.append("\\" + ch)
        elif i in octal or ord(ch) < 0x20 or ord(ch) >= 0x7F:
            out.append("".join(f"\\{b:03o}" for b in ch.encode()))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@st.composite
def headers(draw: st.DrawFn) -> tuple[str, set[str], bool]:
    """A generated patch (one file's header and maybe a hunk), the paths it touches, and whether tritonbuild
    must accept it (every path fine, every mode a regular file's, spelled as git reads it, no binary diff)."""
    kind = draw(st.sampled_from(KINDS))
    old = draw(names())
    new = draw(names()) if kind in ("rename", "copy") else old
    modes = [draw(st.sampled_from(MODES)) for _ in range(2)]
    spells = [draw(st.sampled_from(SPELLINGS)) for _ in range(2)]

    def shown(name: str, side: str) -> str:
        plain = not any(c in name for c in '"\\') and not _control(name) and not name.startswith('"')
        full = f"{side}/{name}" if side else name  # rename and copy names have no a/ or b/
        if plain and draw(st.booleans()):
            return full
        return quote(full, set(draw(st.lists(st.integers(0, len(full)), max_size=4))))

    def mode(n: int) -> str:
        return spells[n].format(o=f"{modes[n]:o}")

    lines = [f"diff --git {shown(old, 'a')} {shown(new, 'b')}"]
    used = {"mode": [0, 1], "new": [0], "deleted": [0], "index": [0]}.get(kind, [])
    hunk = [f"--- {shown(old, 'a')}", f"+++ {shown(new, 'b')}", "@@ -1 +1 @@", "-a", "+b"]
    if kind == "mode":
        lines += [f"old mode {mode(0)}", f"new mode {mode(1)}"]
    elif kind == "new":
        lines += [f"new file mode {mode(0)}", "--- /dev/null", f"+++ {shown(new, 'b')}", "@@ -0,0 +1 @@", "+x"]
    elif kind == "deleted":
        lines += [f"deleted file mode {mode(0)}", f"--- {shown(old, 'a')}", "+++ /dev/null", "@@ -1 +0,0 @@", "-x"]
    elif kind == "index":
        lines += [f"index 1234567..89abcde {mode(0)}", *hunk]
    elif kind in ("rename", "copy"):
        lines += ["similarity index 90%", f"{kind} from {shown(old, '')}", f"{kind} to {shown(new, '')}", *hunk]
    else:
        lines += ["index 1234567..89abcde 100644", "GIT binary patch", "literal 0", "HcmV?d00001", ""]
    fine = all(_fine(n) and not n.startswith("/") for n in {old, new})
    regular = all(modes[n] in patches.REGULAR_MODES and spells[n] not in ("{o}x", "x{o}", "") for n in used)
    return "\n".join(lines) + "\n", {old, new}, fine and regular and kind != "binary"


@settings(max_examples=300, deadline=None)
@given(patch=headers())
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
    assert set(files) == touched and all(_lands_inside(f) for f in files), (files, text)


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

