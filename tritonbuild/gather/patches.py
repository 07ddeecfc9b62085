"""Patches applied to a copy of the source that tritonbuild owns, never to the user's checkout (edge: reads the
patches and the source, runs ``git apply`` through ``safegit``, writes under ``<cache>/patched``).

Each patch (``--patch FILE``, a recipe's ``patches``) is input the user did not write: it is read as a regular
UTF-8 file under a size cap and read as ``git apply`` reads it: every path it names (``diff --git``,
``---``/``+++``, ``rename``/``copy`` lines; ``-p1``; C-quoted or not) must stay inside the source, outside ``.git``;
every mode it sets (any header, ``index`` lines too; octal in any spelling git reads) must be a regular file's,
100644 or 100755 (a link, a submodule, anything else is refused), and a binary diff is refused; every path it
writes is checked against the source as ``git apply`` in the checkout would see it (no file where the source has a
directory, none under a file of the source). Then, under the copy's file lock
(``<cache>/patched/<key>.lock``; key: the source's real path and the patches' sha256), the patched content of the
files the patches touch is computed in a scratch dir beside the copy (``<key>.scratch``: copies of just those
files, ``git apply`` there, outside any repository; one a killed run left is removed by the next run that takes
the lock, nothing goes to /tmp); a patch that does not apply is refused with git's own message before the copy is
written. Then the copy ``<cache>/patched/<key>/tree`` (marked by ``COPY_MARK`` beside it) is brought up to date:
a source file is copied (mtime kept) only when its size or mtime differ from the copy's, a patched file is written
only when its content differs, and what the source no longer has is removed. An unchanged source and patch set
leave every file of the copy as it was, so a rebuild stays a no-op for Ninja.
"""

from __future__ import annotations

import contextlib
import fcntl
import filecmp
import hashlib
import json
import os
import posixpath
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.gather.commits import MARKER as EXPORT_MARK
from tritonbuild.plan import PatchInfo
from tritonbuild.system import paths, safegit
from tritonbuild.system.fileutil import TEXT_LIMIT, name_problem, read_checked, walk

FIX = "Fix the patch (paths are read with -p1: a/PATH and b/PATH relative to the top of the source), or drop it."
SOURCE = "the source"  # the role of the tree patched (``what``): the Triton source, or "the plugin dir NAME"
_HUNK = re.compile(r"^@@ -[0-9]+(?:,([0-9]+))? \+[0-9]+(?:,([0-9]+))? @@")  # ASCII digits, as git's parse_num
REGULAR_MODES = (0o100644, 0o100755)  # the modes of a regular file git writes; any other is refused
_MODE_KEYS = ("old mode ", "new mode ", "deleted file mode ", "new file mode ")
_NAME_KEYS = ("rename old ", "rename new ", "rename from ", "rename to ", "copy from ", "copy to ")
_GIT_KEYS = ("--- ", "+++ ", *_MODE_KEYS, *_NAME_KEYS, "similarity index ", "dissimilarity index ", "index ")
_BINARY = ("GIT binary patch", "Binary files ")
_GIT_SPACE = " \t\n\r"  # git's isspace
_STRTOUL8 = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-7]+)")  # C's strtoul(s, &end, 8) in the C locale
_PLAIN = re.compile(r'[^"\\]*')
_OCTAL = re.compile(r"[0-3][0-7][0-7]")  # git's unquote_c_style: \000 to \377
# the timestamp diff and GNU diff put after a name (git's diff_timestamp_len): date, time, zone, at the line's end
_STAMP = re.compile(r"(?:\t| +)(?:[0-9]{2})?[0-9]{2}-[0-9]{2}-[0-9]{2}(?: [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)?"
                    r"(?: [+-][0-9]{4}| [+-][0-9]{2}:[0-9]{2})?$")
NAME_MAX, PATH_MAX = 255, 4096  # bytes: the longest file name and path Linux file systems take
ENTRIES_SHOWN = 10  # the source's entries a copy cannot carry named in one message (the rest counted)
_ESCAPES = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92, '"': 34}  # git's C quoting


def fix(what: str = SOURCE) -> str:
    """What to do about a patch that is refused, for the tree ``what`` ("the source", "the plugin dir NAME")."""
    return FIX if what == SOURCE else FIX.replace("the top of the source", f"the top of {what}")


def path_problem(raw: str, *, strip: bool, what: str = SOURCE) -> str | None:
    """Why ``raw``, a path named by a patch, cannot be patched inside the copy (None: it can). ``strip``: the path
    has the a/ or b/ component that -p1 removes (``---``, ``+++`` and ``diff --git`` names; not ``rename from``)."""
    if not raw:
        return "is empty"
    if raw.startswith("/"):
        return "is an absolute path"
    problem = next((p for p in map(name_problem, raw.split("/")) if p), None)
    if problem or "\0" in raw:
        return problem or "holds a NUL byte"
    parts = raw.split("/")
    if any(len(part.encode("utf-8", "surrogateescape")) > NAME_MAX for part in parts):
        return f"has a component longer than {NAME_MAX} bytes (no file system takes such a name)"
    if len(raw.encode("utf-8", "surrogateescape")) > PATH_MAX:
        return f"is longer than {PATH_MAX} bytes (no file system takes such a path)"
    if strip:
        if len(parts) < 2:
            return "has no leading directory (a/ or b/) for -p1 to remove"
        parts = parts[1:]
    if any(part in ("", ".", "..") for part in parts):
        return f"has an empty, '.' or '..' component (it could lead outside {what})"
    if any(part.lower() == ".git" for part in parts):
        return "lies in a .git directory (git's own files are never patched)"
    return None


def inside(raw: str, *, strip: bool) -> str:
    """The path ``raw`` names relative to the top of the source, once ``path_problem`` has accepted it."""
    return "/".join(raw.split("/")[1:] if strip else raw.split("/"))


# --- reading a patch as git apply reads it (git's apply.c: find_header, parse_git_diff_header, parse_fragment) ----

class Named(NamedTuple):
    """What one line of a patch names: a path (``raw`` as written, with the a/ or b/ that -p1 removes when
    ``strip``), or, with ``refusal`` set, a header tritonbuild refuses whatever it names (``raw``: the line)."""

    line: int
    raw: str
    strip: bool
    refusal: str | None = None
    listed: bool = True  # False: a second reading of a name, checked but not among the files the patch touches


def _unquote_at(text: str, i: int) -> tuple[str, int] | None:
    """The C-quoted name git reads at ``text[i]`` (a '"'), and the index after its closing quote; None where git
    finds none (a bad escape, no closing quote) and reads the quote as a character of the name. As in git, the
    name may run past the end of its line; octal escapes are bytes (\\000 to \\377), a name not UTF-8 keeps them
    as surrogates (``name_problem`` refuses it)."""
    out, j = bytearray(), i + 1
    while True:
        plain = _PLAIN.match(text, j)
        assert plain is not None  # [^"\\]* always matches
        out += plain.group().encode("utf-8", "surrogateescape")
        j = plain.end()
        if j >= len(text):
            return None
        if text[j] == '"':
            return out.decode("utf-8", "surrogateescape"), j + 1
        esc = text[j + 1:j + 2]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            j += 2
        elif _OCTAL.match(text, j + 1):
            out.append(int(text[j + 1:j + 4], 8))
            j += 4
        else:
            return None


def _prefix_end(name: str) -> int | None:
    """Where -p1 leaves ``name`` (after its first '/'), None where git strips nothing (no '/', or one first)."""
    slash = name.find("/")
    return None if slash <= 0 else slash + 1


def _def_names(text: str, i: int, eol: int) -> list[str]:
    """The default name git takes from a ``diff --git`` line (``text[i:eol]`` follows "diff --git "), raw with
    its a/ prefix: the one name both halves give once -p1 strips them (C-quoted or not, split at a space or tab;
    the first such split; a quoted first name with an unquoted second gives none), or none (a rename's names are
    on its own lines). A mode change, a new or deleted
    empty file, a rename or copy header changes this name with no ---/+++ line."""
    if text.startswith('"', i):
        first = _unquote_at(text, i)
        cut = _prefix_end(first[0]) if first else None
        if first is None or cut is None or first[1] > eol:
            return []
        j = first[1]
        while j < eol and text[j] in _GIT_SPACE:
            j += 1
        # an unquoted second name git compares with its line's newline: it matches only on a last line
        second = _unquote_at(text, j) if text.startswith('"', j) else (text[j:eol], eol) if eol == len(text) else None
        cut2 = _prefix_end(second[0]) if second and j < eol else None
        return [first[0]] if second and cut2 is not None and second[0][cut2:] == first[0][cut:] else []
    line = text[i:eol]
    cut = _prefix_end(line)
    if cut is None:
        return []
    name = line[cut:]
    quote = name.find('"')
    if quote >= 0:  # the first name is not quoted: a quote begins the second
        second = _unquote_at(text, i + cut + quote)
        cut2 = _prefix_end(second[0]) if second else None
        if second is None or cut2 is None:
            return []
        tail = second[0][cut2:]
        ok = len(tail) < quote and name.startswith(tail) and name[len(tail)] in _GIT_SPACE
        return [second[0]] if ok else []
    for k, ch in enumerate(name):
        rest = name[k + 1:]
        cut2 = _prefix_end(rest) if ch in " \t" else None
        if cut2 is not None and rest[cut2:] == name[:k]:
            return [line[:cut + k]]
    return []


def _dash_names(text: str, i: int, eol: int, git: bool) -> list[str]:
    """The names git can read on a ``---``/``+++`` line (``text[i:eol]`` follows the marker), raw with their
    a/ or b/, the one git reads first: C-quoted; else in a git diff header (``git``) up to a tab or CR, in a
    traditional diff without the timestamp diff or GNU diff put at the end of the line (else up to a tab or CR).
    The other reading, where it differs, follows: it is checked too. /dev/null names none."""
    if text.startswith("/dev/null", i) and text[i + 9:i + 10] in _GIT_SPACE:
        return []
    if text.startswith('"', i) and (quoted := _unquote_at(text, i)) is not None:
        return [quoted[0]]
    line = text[i:eol]
    plain = re.split(r"[\t\r]", line, maxsplit=1)[0]
    stamp = _STAMP.search(line)
    if stamp is None or line[:stamp.start()] == plain:
        return [plain]
    return [plain, line[:stamp.start()]] if git else [line[:stamp.start()], plain]


def _plain_name(text: str, i: int, eol: int) -> str:
    """The name of a ``rename``/``copy`` line (-p0): C-quoted, else the rest of the line up to a CR (spaces and
    tabs included)."""
    if text.startswith('"', i) and (quoted := _unquote_at(text, i)) is not None:
        return quoted[0]
    return text[i:eol].split("\r", 1)[0]


def _git_mode(text: str, i: int) -> int | None:
    """The mode git reads at ``text[i:]`` (parse_mode_line: strtoul base 8, which skips leading white space,
    newlines too, takes a sign and octal digits; then white space must follow), as C's unsigned long made an
    unsigned int; None where git refuses it (invalid mode)."""
    number = _STRTOUL8.match(text, i)
    if number is None or text[number.end():number.end() + 1] not in tuple(_GIT_SPACE):
        return None
    value = int(number.group(2), 8)
    if value >= 1 << 64:
        value = (1 << 64) - 1  # ERANGE: ULONG_MAX, the sign ignored
    elif number.group(1) == "-":
        value = -value % (1 << 64)
    return value & 0xFFFFFFFF


def _index_mode(text: str, i: int) -> tuple[bool, int | None]:
    """Whether git reads a mode on an ``index <old>..<new> <mode>`` line (``text[i:]`` follows "index "), and
    which: the first '.' (within 64 characters: git ignores one farther than its longest hash) must begin '..',
    and a space after it on the same line precedes the mode."""
    dot = text.find(".", i, i + 65)
    if dot < 0 or not text.startswith("..", dot):
        return False, None
    eol = text.find("\n", dot + 2)
    space = text.find(" ", dot + 2, len(text) if eol < 0 else eol)
    return (True, _git_mode(text, space + 1)) if space >= 0 else (False, None)


def _mode_refusal(mode: int | None) -> str | None:
    """Why tritonbuild refuses a mode git read (None: a regular file's, 100644 or 100755)."""
    if mode in REGULAR_MODES:
        return None
    if mode is None:
        return "a mode git cannot read (git apply stops there: invalid mode)"
    kind = {0o120000: "a symlink", 0o160000: "a submodule (a gitlink)", 0o040000: "a directory"}
    what = kind.get(mode & 0o170000, "no regular file's mode")
    return f"the mode {mode:06o}, which git reads as {what}"


def _header(text: str, at: int, line: str, number: int, git: bool) -> list[Named]:
    """What the header line ``line`` (at ``text[at]``, outside any hunk; ``git``: in a git diff header) names, as
    git reads it."""
    eol = at + len(line)
    if line.startswith(("--- ", "+++ ")):
        names = _dash_names(text, at + 4, eol, git)
        return [Named(number, name, True, listed=n == 0) for n, name in enumerate(names)]
    if line.startswith("diff --git "):
        return [Named(number, name, True) for name in _def_names(text, at + 11, eol)]
    if (key := next((k for k in _NAME_KEYS if line.startswith(k)), None)) is not None:
        return [Named(number, _plain_name(text, at + len(key), eol), False)]
    if (key := next((k for k in _MODE_KEYS if line.startswith(k)), None)) is not None:
        refusal = _mode_refusal(_git_mode(text, at + len(key)))
        return [Named(number, line, False, refusal)] if refusal else []
    if line.startswith("index "):
        has, mode = _index_mode(text, at + 6)
        refusal = _mode_refusal(mode) if has else None
        return [Named(number, line, False, refusal)] if refusal else []
    if line.startswith(_BINARY):
        return [Named(number, line, False, "a binary diff, whose content no one can read in the patch")]
    return []


def named_paths(text: str) -> list[Named]:
    """Every path the patch names and every header it has that tritonbuild refuses (a mode that is no regular
    file's, in any spelling git reads; a binary diff), in order; hunk bodies are skipped by their line counts (a
    removed line ``-- x`` reads ``--- x``). Every line git could read as a header is read, wherever it is."""
    found: list[Named] = []
    old = new = at = 0
    git = False  # in a git diff header: the lines after "diff --git" up to a hunk or a line git does not know
    for number, line in enumerate(text.split("\n"), 1):
        here, at = at, at + len(line) + 1
        if old > 0 or new > 0:
            tag = line[:1]
            if tag in (" ", "", "-", "+", "\\"):
                old -= tag in (" ", "", "-")
                new -= tag in (" ", "", "+")
                continue
            old = new = 0
        git = git and line.startswith(_GIT_KEYS)
        hunk = _HUNK.match(line)
        if hunk:
            old, new = int(hunk.group(1) or 1), int(hunk.group(2) or 1)
        else:
            found += _header(text, here, line, number, git)
        git = git or line.startswith("diff --git ")
    return found


def _shown_line(line: str) -> str:
    return repr(line if len(line) <= 100 else line[:100] + "...")


def touched_files(text: str, shown: str, what: str = SOURCE) -> tuple[str, ...]:
    """The files a patch touches (relative to the top of the source), refused (UserError) when one of its paths
    would leave the source or names .git, when it sets a mode that is no regular file's (a link, a submodule) or
    holds a binary diff, or when it names no file at all."""
    names = named_paths(text)
    for number, raw, strip, refusal, _ in names:
        if refusal:
            raise UserError(f"The patch {shown} has {refusal} (line {number}: {_shown_line(raw)}): tritonbuild "
                            "applies text patches to regular files only (git modes 100644 and 100755, in any "
                            f"spelling git reads), never to links, submodules or binary files. {fix(what)}")
        problem = path_problem(raw, strip=strip, what=what)
        if problem:
            raise UserError(f"The patch {shown} names the path {raw!r} (line {number}), which {problem}: every "
                            f"path a patch names must lie inside {what}. {fix(what)}")
    files = tuple(sorted({inside(n.raw, strip=n.strip) for n in names if n.listed}))
    if not files:
        raise UserError(f"The patch {shown} names no file: it is not a unified diff (git diff or diff -u output, "
                        f"with --- a/PATH and +++ b/PATH lines). {fix(what)}")
    return files


def read_patch(given: str, base: Path, origin: str, what: str = SOURCE) -> tuple[PatchInfo, bytes]:
    """One patch as given (relative to ``base``): its facts and its bytes, refused as one paragraph when it is no
    regular UTF-8 text file under the size cap, holds a NUL byte, or names a path outside the source."""
    path = base / given
    shown = f"{given} ({origin})"
    what = f"the patch given by {origin}"
    try:
        text = read_checked(path, Path(os.path.realpath(path)).parent, what, limit=TEXT_LIMIT)
    except OSError as exc:
        raise UserError(f"The patch {shown} cannot be read: {exc.strerror or exc}.") from None
    if text is None:
        raise UserError(f"The patch {shown} does not exist (looked at {path}). Check the path: a patch on the "
                        "command line or in TRITONBUILD_PATCHES is relative to the current directory, one in a "
                        "recipe to the recipe's directory.")
    if "\0" in text:
        raise UserError(f"The patch {shown} holds a NUL byte: it is not a text diff. {fix(what)}")
    data = text.encode("utf-8")
    return PatchInfo(path=given, sha256=hashlib.sha256(data).hexdigest(), files=touched_files(text, shown, what)), data


def read_all(given: Sequence[str], origin: str, cwd: Path, what: str = SOURCE) -> list[tuple[PatchInfo, bytes]]:
    """Every patch, in order, each checked before any is applied."""
    return [read_patch(str(g), cwd, origin, what) for g in given]


# --- the files of the source ---------------------------------------------------------------------------------------

def source_files(root: Path, what: str = SOURCE) -> list[str]:
    """The files of the source (relative, posix): a git checkout's tracked and untracked-but-not-ignored files
    (``git ls-files -co --exclude-standard``; a submodule's files walked), else every file but ``.git``."""
    if (root / ".git").exists():
        res = safegit.run_git(root, "ls-files", "-z", "-co", "--exclude-standard", timeout=120)
        if not res.ok:
            raise UserError(f"git cannot list the files of {what} {root}: {res.output or 'no output'}. Fix "
                            "the checkout (git status should work there), or pass a copy without .git.")
        listed = sorted({name for name in res.stdout.split("\0") if name})
    else:
        listed = [""]
    out: list[str] = []
    for rel in listed:
        if "\ufffd" in rel:
            raise UserError(f"{_cap(what)} {root} has a file whose name is not UTF-8 ({rel!r}): rename it.")
        path = root / rel if rel else root
        if path.is_dir() and not path.is_symlink():
            out += _walk(root, path, what)
        elif os.path.lexists(path):  # a tracked file deleted in the work tree is not part of the copy
            out.append(rel)
    # the links a build or develop puts into the checkout (compile_commands.json, python/triton/_C's libraries, a 2024
    # tree's backend links: paths.made_link) are no part of the source: the copy's own build links its own, and
    # copying them would refuse the checkout after any develop (absolute links that leave the source)
    return sorted(rel for rel in set(out) if not paths.made_link(root / rel, root))


def _cap(what: str) -> str:
    return what[:1].upper() + what[1:]


def _walk(root: Path, top: Path, what: str = SOURCE) -> list[str]:
    """The entries under ``top`` a copy carries, bounded as every walk of a tree the user named (``fileutil.walk``:
    links listed, never followed; no other file system; a cap on entries and depth)."""
    found: list[str] = []
    for here, dirs, files in walk(top, f"{_cap(what)} to patch"):
        dirs[:] = [d for d in dirs if d != ".git"]
        found += [Path(here, f).relative_to(root).as_posix() for f in files if f != ".git"]
    return found


def check_entries(root: Path, files: Sequence[str], what: str = SOURCE) -> None:
    """Refuse what a copy cannot carry, every such entry in one message (the first ``ENTRIES_SHOWN`` named, the
    rest counted), each with what it is and what to do: a link that leaves the source, an absolute link, one that
    dangles or loops, an entry that is no file or link (a FIFO, socket, device), a name that is not UTF-8."""
    base = os.path.realpath(root)
    found = [f"{rel!r} {problem}" for rel in files if (problem := _entry_problem(root, rel, base, what))]
    if not found:
        return
    more = len(found) - ENTRIES_SHOWN
    listed = "; ".join(found[:ENTRIES_SHOWN]) + (f"; and {more} more such entr{'ies' if more > 1 else 'y'}"
                                                   if more > 0 else "")
    drop = "--patch" if what == SOURCE else f"the patches for {what}"
    raise UserError(f"{_cap(what)} {root} holds {len(found)} entr{'ies' if len(found) > 1 else 'y'} that a patched "
                    f"copy of {what} cannot carry: {listed}. Fix them in {'the checkout' if what == SOURCE else what}"
                    f", or build without {drop}.")


def _entry_problem(root: Path, rel: str, base: str, what: str = SOURCE) -> str | None:
    """What is wrong with one entry of the source for the copy, and the fix (None: nothing)."""
    problem = next((p for p in map(name_problem, rel.split("/")) if p), None)
    if problem:
        return f"{problem}: rename it"
    path = root / rel
    try:
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            return _link_problem(path, rel, base, what)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc}): remove it or make it readable"
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device"
        return f"is {kind}, not a regular file, directory or link: remove it (or move it out of {what})"
    return None


def _link_problem(path: Path, rel: str, base: str, what: str = SOURCE) -> str | None:
    target = os.readlink(path)
    try:
        real: str | None = os.path.realpath(path, strict=True)
    except OSError:
        real = None
    inside_base = real is not None and (real == base or real.startswith(base + os.sep))
    fix = ("remove it, or replace it with a copy of the file or directory it points at"
           if real and (Path(real).is_file() or Path(real).is_dir()) else "remove it")
    if target.startswith("/"):
        if inside_base:
            return (f"is an absolute link (-> {target}) into {what} itself: its copy would point back into "
                    f"{'the checkout' if what == SOURCE else what}; make it a relative link")
        return f"is an absolute link that leaves {what} (-> {target}): {fix}"
    if posixpath.normpath(posixpath.join(posixpath.dirname(rel), target)).split("/")[0] == "..":
        return f"is a link that leaves {what} (-> {target}): {fix}"
    if real is None:
        return f"is a link that dangles or loops (-> {target}): remove it or point it at a file of {what}"
    return None if inside_base else (f"is a link through which {what} leads outside itself, to {real}: "
                                     f"{fix}")


# --- applying ------------------------------------------------------------------------------------------------------

def check_writes(root: Path, patches: Sequence[tuple[PatchInfo, bytes]], what: str = SOURCE) -> None:
    """Check every path the patches write against the source, as ``git apply`` in the checkout would see it (the
    patches are applied in a scratch tree that holds only the files they touch, where git sees no directory):
    a path that is a directory in the source, lies under a file of the source, or is or lies under a link is
    refused, naming the patch, its line and the path."""
    touched = {f for info, _ in patches for f in info.files}
    for info, data in patches:
        for rel in info.files:
            problem = _write_problem(root, rel, touched, what)
            if problem:
                line = _line_of(data.decode("utf-8"), rel)
                raise UserError(f"The patch {info.path} writes {rel!r} (line {line}), which {problem}. Nothing "
                                f"was changed. {fix(what)}")


def _line_of(text: str, rel: str) -> int:
    """The first line of the patch that names ``rel``."""
    return next((n.line for n in named_paths(text) if not n.refusal and inside(n.raw, strip=n.strip) == rel), 0)


def _write_problem(root: Path, rel: str, touched: set[str], what: str = SOURCE) -> str | None:
    """Why git apply in the checkout could not write ``rel`` (None: it could; what is missing it creates). A
    parent that is a file the patches touch is left to git apply in the scratch tree, where that file is."""
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        sub = "/".join(parts[:i])
        try:
            st = (root / sub).lstat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            return (f"cannot be looked up in {what} {root} ({exc.strerror or exc}): no file system path can "
                    "be made of it")
        if stat.S_ISLNK(st.st_mode):
            return (f"in {what} {root} is a link or lies under one ({sub}): tritonbuild patches files, not "
                    "links")
        if i == len(parts) and stat.S_ISDIR(st.st_mode):
            return (f"is a directory in {what} {root}: git apply in the checkout refuses to write a file "
                    "where a directory is (unable to write file: Directory not empty)")
        if i < len(parts) and not stat.S_ISDIR(st.st_mode) and sub not in touched:
            return (f"lies under {sub}, which is a file in {what} {root}: git apply in the checkout refuses "
                    "to write it (a file cannot hold another)")
    return None


SCRATCH_MARK = ".tritonbuild-patch-scratch"  # in a scratch tree: tritonbuild made it (clean may remove it)


def patched_contents(root: Path, patches: Sequence[tuple[PatchInfo, bytes]], scratch: Path, what: str = SOURCE
                     ) -> dict[str, tuple[bytes, int] | None]:
    """The content and mode of every file the patches touch once they are all applied (None: the patches delete
    it), computed in ``scratch`` (a dir of the cache, beside the copy, its lock held by the caller: one left by a
    run that was killed is removed first, and this one is removed when done); the first patch that does not apply
    is refused with git apply's message."""
    touched = sorted({f for info, _ in patches for f in info.files})
    check_writes(root, patches, what)
    remove_scratch(scratch)
    tree = scratch / "tree"
    tree.mkdir(parents=True)
    (scratch / SCRATCH_MARK).write_text("a scratch tree of tritonbuild's --patch\n")
    try:
        for rel in touched:
            if (root / rel).is_file():
                (tree / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(root / rel, tree / rel)
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": os.path.realpath(scratch)}  # no repository above it
        for number, (info, data) in enumerate(patches):
            _apply(tree, scratch / f"{number}.patch", info, data, env, earlier=number, what=what)
        return _results(tree, touched, patches, what)
    finally:
        remove_scratch(scratch)


def remove_scratch(scratch: Path) -> None:
    """A scratch dir removed (a link in its place is removed, never followed)."""
    if scratch.is_symlink() or (os.path.lexists(scratch) and not scratch.is_dir()):
        scratch.unlink()
    elif scratch.is_dir():
        shutil.rmtree(scratch)


def _apply(tree: Path, file: Path, info: PatchInfo, data: bytes, env: Mapping[str, str], earlier: int,
           what: str = SOURCE) -> None:
    file.write_bytes(data)  # what was hashed is what is applied
    # -p1 as the reader took it (git would guess -p0 for a traditional diff whose names have no '/')
    res = safegit.run_git(tree, "apply", "-p1", "--whitespace=nowarn", str(file), timeout=120, env=env)
    if res.ok:
        return
    said = "; ".join(line.strip() for line in res.output.splitlines() if line.strip()) or "git apply failed"
    after = f" (after the {earlier} patch{'es' if earlier > 1 else ''} before it)" if earlier else ""
    raise UserError(f"The patch {info.path} does not apply to {what}{after}: {said}. Nothing was changed: "
                    f"update the patch for {'this source' if what == SOURCE else what} (git diff in a checkout "
                    "where it applies writes one), or drop it.")


def _results(tree: Path, touched: list[str], patches: Sequence[tuple[PatchInfo, bytes]], what: str = SOURCE
             ) -> dict[str, tuple[bytes, int] | None]:
    out: dict[str, tuple[bytes, int] | None] = {}
    parents = {"/".join(f.split("/")[:i]) for f in touched for i in range(1, f.count("/") + 1)}
    for here, dirs, files in os.walk(tree):  # a link to a dir is listed in dirs: checked as a file is
        files = [*files, *(d for d in dirs if Path(here, d).is_symlink()
                           or Path(here, d).relative_to(tree).as_posix() not in parents)]
        for name in files:
            path = Path(here, name)
            rel = path.relative_to(tree).as_posix()
            st = path.lstat()
            if rel not in touched or not stat.S_ISREG(st.st_mode):
                shown = ", ".join(p.path for p, _ in patches)
                why = ("not a regular file: tritonbuild patches regular files only" if rel in touched else
                        "which the patches do not name as a file they change: tritonbuild cannot tell what they "
                        "touch")
                raise UserError(f"git apply wrote {rel!r} (patches: {shown}), {why}. Nothing was changed. {fix(what)}")
            out[rel] = (path.read_bytes(), stat.S_IMODE(st.st_mode))
    return {rel: out.get(rel) for rel in touched}


# --- the copy ------------------------------------------------------------------------------------------------------

COPY_MARK = ".tritonbuild-patched-copy"  # in <cache>/patched/<key>: tritonbuild made it (clean may remove it)


def copy_key(root: Path, patches: Sequence[PatchInfo], submodules: Sequence[str] = ()) -> str:
    """The copy's name: the source's real path, the patches' sha256 and each supplied submodule's path and commit."""
    identity = "\n".join([os.path.realpath(root), *(p.sha256 for p in patches), *submodules])
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:16]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def sync(root: Path, files: Sequence[str], patched: Mapping[str, tuple[bytes, int] | None], dest: Path,
         extra: Mapping[str, Path] | None = None) -> None:
    """Make ``dest`` hold ``files`` of ``root`` (copied only when size or mtime differ, links as links) with the
    patched files' contents (written only when they differ). What an earlier sync put there and the source no
    longer has is removed; what a build or ``develop`` wrote there (compile_commands.json, the editable install's
    library links) is left alone: ``<dest>.synced.json`` records what the syncs wrote. Without that record (a
    first sync, a damaged record) everything else in ``dest`` goes. ``extra``: files from elsewhere (a supplied
    submodule's export) by their place in the copy, written only when their content differs."""
    extra = extra or {}
    wanted = {f for f in files if f not in patched} | {f for f, c in patched.items() if c is not None} | set(extra)
    dirs = {"/".join(f.split("/")[:i]) for f in wanted for i in range(1, f.count("/") + 1)}
    record = dest.with_name(dest.name + ".synced.json")
    previous = _synced(record)
    dest.mkdir(parents=True, exist_ok=True)
    if previous is None:
        _prune(dest, dest, wanted, dirs)
    else:
        _remove_stale(dest, previous - wanted, dirs)
    record.write_text(json.dumps(sorted(wanted | (previous or set()))))  # a sync cut short leaves no stray
    for rel in files:
        if rel not in patched:
            _copy(root / rel, dest / rel)
    for rel, content in patched.items():
        if content is not None:
            _write(dest / rel, *content)
    for rel, src in extra.items():
        _copy_content(src, dest / rel)
    record.write_text(json.dumps(sorted(wanted)))


def _copy_content(src: Path, dst: Path) -> None:
    """``src`` (a regular file tritonbuild exported) at ``dst`` unless ``dst`` already has its bytes and mode: an
    export made afresh has new mtimes, and copying by mtime would rebuild what it feeds at every run. A link is
    carried as a link (``_copy``)."""
    st = src.lstat()
    if stat.S_ISLNK(st.st_mode):
        _copy(src, dst)
        return
    have = _lstat(dst)
    if have and stat.S_ISREG(have.st_mode) and have.st_size == st.st_size and filecmp.cmp(src, dst, shallow=False):
        if stat.S_IMODE(have.st_mode) != stat.S_IMODE(st.st_mode):
            dst.chmod(stat.S_IMODE(st.st_mode))
        return
    _clear(dst, have)
    tmp = dst.with_name(f".{dst.name}.tritonbuild-tmp")
    shutil.copy2(src, tmp)
    os.replace(tmp, dst)


def _synced(record: Path) -> set[str] | None:
    """What the last sync wrote into the copy, or None when its record is missing or damaged."""
    try:
        listed = json.loads(record.read_text())
    except (OSError, ValueError):
        return None
    return set(listed) if isinstance(listed, list) and all(isinstance(x, str) for x in listed) else None


def _remove_stale(dest: Path, stale: set[str], dirs: set[str]) -> None:
    """Remove what an earlier sync wrote and the source no longer has (with the dirs it leaves empty), and any
    file or link standing where the source now has a dir."""
    for rel in sorted(stale, reverse=True):
        path = dest / rel
        if path.is_symlink() or path.is_file():
            path.unlink()
            for parent in path.parents:
                if parent == dest or any(parent.iterdir()):
                    break
                parent.rmdir()
    for rel in sorted(dirs):
        path = dest / rel
        if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
            path.unlink()


def _prune(dest: Path, here: Path, wanted: set[str], dirs: set[str]) -> None:
    """Remove from the copy every entry that is not wanted there (or is a file where a dir is wanted)."""
    with os.scandir(here) as it:
        entries = list(it)
    for e in entries:
        rel = Path(e.path).relative_to(dest).as_posix()
        if e.is_dir(follow_symlinks=False):
            if rel in dirs:
                _prune(dest, Path(e.path), wanted, dirs)
            else:
                shutil.rmtree(e.path)
        elif rel not in wanted or rel in dirs:
            Path(e.path).unlink()


def _copy(src: Path, dst: Path) -> None:
    st = src.lstat()
    have = _lstat(dst)
    if stat.S_ISLNK(st.st_mode):
        if have and stat.S_ISLNK(have.st_mode) and os.readlink(dst) == os.readlink(src):
            return
        _clear(dst, have)
        dst.symlink_to(os.readlink(src))
        return
    if have and stat.S_ISREG(have.st_mode) and (have.st_size, have.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
        return
    _clear(dst, have)
    tmp = dst.with_name(f".{dst.name}.tritonbuild-tmp")
    shutil.copy2(src, tmp)
    os.replace(tmp, dst)


def _write(dst: Path, data: bytes, mode: int) -> None:
    have = _lstat(dst)
    if have and stat.S_ISREG(have.st_mode) and have.st_size == len(data) and dst.read_bytes() == data:
        if stat.S_IMODE(have.st_mode) != mode:
            dst.chmod(mode)
        return
    _clear(dst, have)
    tmp = dst.with_name(f".{dst.name}.tritonbuild-tmp")
    tmp.write_bytes(data)
    tmp.chmod(mode)
    os.replace(tmp, dst)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None


def _clear(dst: Path, have: os.stat_result | None) -> None:
    """Make room for ``dst``: its parent dirs exist, and no dir or link stands where it goes."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if have is not None and stat.S_ISDIR(have.st_mode):
        shutil.rmtree(dst)
    elif have is not None and stat.S_ISLNK(have.st_mode):
        dst.unlink()


def prepare(root: Path, given: Sequence[str], origin: str, cwd: Path, cache: Path, what: str = SOURCE,
            check: Callable[[Sequence[PatchInfo]], None] | None = None,
            submodules: Mapping[str, tuple[str, Path]] | None = None) -> tuple[Path, tuple[PatchInfo, ...]]:
    """The patched copy of ``root`` and the patches' facts: every patch read and checked, every file of the source
    checked, then under the copy's lock the patches applied in its scratch dir and only then the copy brought up to
    date. ``root`` is the Triton source, or a plugin dir (``what``: "the plugin dir NAME"): the same checks, the same
    copy under ``<cache>/patched``, keyed by the dir's real path and the patches' sha256. ``check``: the caller's
    own refusal of what the patches touch, once they are read, before anything is written. ``submodules``: by
    path, (commit, export) of each submodule the copy carries (``gather.submodules``)."""
    patches = read_all(given, origin, cwd, what)
    if check is not None:
        check([info for info, _ in patches])
    files = source_files(root, what)
    check_entries(root, files, what)
    check_writes(root, patches, what)
    infos = tuple(info for info, _ in patches)
    subs = submodules or {}
    where = cache / "patched" / copy_key(root, infos, [f"submodule {p} {c}" for p, (c, _) in sorted(subs.items())])
    extra = {f"{p}/{rel}": tree / rel for p, (_, tree) in subs.items() for rel in _walk(tree, tree, what)
             if rel != EXPORT_MARK}
    try:
        with _locked(where.with_name(where.name + ".lock")):
            patched = patched_contents(root, patches, where.with_name(where.name + ".scratch"), what)
            where.mkdir(parents=True, exist_ok=True)
            (where / COPY_MARK).write_text(f"tritonbuild's patched copy of {os.path.realpath(root)}\n")
            sync(root, files, patched, where / "tree", extra)
    except OSError as exc:
        raise EnvironmentProblem(f"The patched copy of {what} cannot be written under {where}: "
                        f"{exc.strerror or exc}. Check that the cache dir is writable and has room.") from None
    return where / "tree", infos

