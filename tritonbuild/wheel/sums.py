"""``SHA256SUMS`` read and written as GNU ``sha256sum -c`` (coreutils 9.1, Debian 12's) reads it (edge: ``lstat``
inside the file's dir), so ``verify`` and ``sha256sum -c`` run in that dir agree on every line.

The format, as ``sha256sum -c`` reads it (behaviour, not its code): a line whose first byte is ``#`` is a comment;
one trailing CR is dropped; an empty line is skipped. Blanks (space, tab) before the digest are skipped; a ``\\``
there means the name is escaped (``\\\\``, ``\\n``, ``\\r``; any other escape, a lone trailing backslash or a NUL
makes the line malformed). Then either a BSD tag line ``SHA256 (<name>) = <hex>`` (one optional space before the
``(``, the name up to the last ``)``, blanks around ``=``) or ``<hex><blank><type><name>``: 64 hex digits, a space
or tab, then ``' '`` (text) or ``'*'`` (binary) before the name. A line with one blank and no type character is the
"BSD reversed" form (``md5 -r``): the first such or standard line decides which of the two the file holds, and a
line of the other form is malformed (after a reversed line, a standard line's name keeps its leading space or
``*``). An unescaped name ends at a NUL byte, as C reads it. Malformed lines are skipped, as ``sha256sum -c`` skips
them (a warning there, no failure of any file).

A name is the file it opens when run in the SUMS file's dir: ``x``, ``./x``, ``.//x``, ``sub/../x`` (``sub`` a real
dir there), the dir's absolute path joined with ``x``, or another name of the same inode (a hard link). What is
not followed, so such a line counts as naming another file: a symbolic link (in the name or as the file itself),
``..`` above the dir, an absolute path not under the dir as given or as resolved. Nothing outside the dir is
looked up: a hostile name must not make ``verify`` reach an automounted host."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 4 << 20  # one line per wheel and provenance file of an output dir
MAX_LINES = 100_000
HEX = frozenset(b"0123456789abcdefABCDEF")
BLANK = b" \t"
TAG = b"SHA256"
DIGEST = 64
PATH_MAX = 4096  # Linux's, with the NUL
_ESCAPES = {ord("\\"): b"\\", ord("n"): b"\n", ord("r"): b"\r"}


@dataclass(frozen=True)
class Line:
    """One well-formed line: its number (from 1), the digest it gives (lower case) and the name as read."""

    number: int
    digest: str
    name: bytes


def _unescape(raw: bytes) -> bytes | None:
    """``raw`` with ``\\\\``, ``\\n`` and ``\\r`` undone; None when it holds a NUL, another escape or ends with
    a lone backslash."""
    out, i = bytearray(), 0
    while i < len(raw):
        c = raw[i]
        if c == 0:
            return None
        if c == ord("\\"):
            if i + 1 == len(raw) or raw[i + 1] not in _ESCAPES:
                return None
            out += _ESCAPES[raw[i + 1]]
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)


def _name(raw: bytes, escaped: bool) -> bytes | None:
    return _unescape(raw) if escaped else raw.split(b"\0", 1)[0]


def _is_hex(raw: bytes) -> bool:
    return len(raw) == DIGEST and all(c in HEX for c in raw)


def _tagged(s: bytes, escaped: bool) -> tuple[bytes, bytes] | None:
    """(digest, name) of the rest of a BSD tag line after ``SHA256 (``, or None when malformed."""
    end = s.rfind(b")")
    if end < 0:
        return None
    name = _name(s[:end], escaped)
    rest = s[end + 1:].lstrip(BLANK)
    if name is None or rest[:1] != b"=":
        return None
    digest = rest[1:].lstrip(BLANK).split(b"\0", 1)[0]  # the digest is read as a C string
    return (digest, name) if _is_hex(digest) else None


def _split(s: bytes, reversed_: bool | None) -> tuple[tuple[bytes, bytes] | None, bool | None]:
    """(digest, name) of one line without its line end, or None when malformed; and the file's form from now on
    (None: not known yet, True: BSD reversed, False: standard)."""
    i = len(s) - len(s.lstrip(BLANK))
    escaped = s[i:i + 1] == b"\\"
    i += escaped
    if s[i:i + len(TAG)] == TAG:
        i += len(TAG) + (s[i + len(TAG):i + len(TAG) + 1] == b" ")
        return (_tagged(s[i + 1:], escaped) if s[i:i + 1] == b"(" else None), reversed_
    if len(s) - i < DIGEST + 2 + (s[i:i + 1] == b"\\"):
        return None, reversed_
    digest, i = s[i:i + DIGEST], i + DIGEST
    if s[i] not in BLANK or not _is_hex(digest):
        return None, reversed_
    i += 1
    if len(s) - i == 1 or s[i] not in b" *":
        if reversed_ is False:
            return None, reversed_
        reversed_ = True
    elif reversed_ is not True:
        reversed_, i = False, i + 1
    name = _name(s[i:], escaped)
    return (None if name is None else (digest, name)), reversed_


def read(data: bytes) -> list[Line] | str:
    """The well-formed lines of a SHA256SUMS file's bytes, or what is wrong with it (over ``MAX_LINES``)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if len(lines) > MAX_LINES:
        return f"it has more than {MAX_LINES} lines"
    out, reversed_ = [], None
    for number, raw in enumerate(lines, 1):
        if raw[:1] == b"#":
            continue
        line = raw[:-1] if raw.endswith(b"\r") else raw
        if not line:
            continue
        found, reversed_ = _split(line, reversed_)
        if found is not None:
            out.append(Line(number, found[0].decode("ascii").lower(), found[1]))
    return out


def line(name: str, digest: str) -> str:
    """The line ``sha256sum`` writes for ``name`` (text mode): a name with a backslash, newline or CR escaped,
    the line then starting with a backslash."""
    if not any(c in name for c in "\\\n\r"):
        return f"{digest}  {name}\n"
    return "\\" + digest + "  " + name.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r") + "\n"


def _parts(directory: Path, name: bytes) -> list[bytes] | None:
    """The components of ``name`` relative to ``directory``: an absolute name under the dir (as given or as
    resolved) loses that prefix; None for an absolute name elsewhere."""
    parts = name.split(b"/")
    if not name.startswith(b"/"):
        return parts
    given = [p for p in parts if p not in (b"", b".")]
    for base in {directory.absolute(), directory.resolve()}:
        prefix = [os.fsencode(p) for p in base.parts[1:]]
        if given[:len(prefix)] == prefix and b".." not in given[:len(prefix)]:
            return given[len(prefix):]
    return None


def _walk(directory: Path, parts: list[bytes]) -> list[bytes] | None:
    """The path components from ``directory`` to the file ``parts`` names, each dir on the way checked to be a
    real dir (lstat: no link followed); None where the name leaves the dir or a dir on the way is not one."""
    stack: list[bytes] = []
    for part in parts[:-1]:
        if part in (b"", b"."):
            continue
        if part == b"..":
            if not stack:
                return None
            stack.pop()
            continue
        stack.append(part)
        try:
            if not stat.S_ISDIR(os.lstat(os.path.join(os.fsencode(directory), *stack)).st_mode):
                return None
        except (OSError, ValueError):
            return None
    return [*stack, parts[-1]]


def resolve(directory: Path, name: bytes) -> list[bytes] | None:
    """The components, inside ``directory``, of the file that ``sha256sum -c`` run there opens for ``name``, when
    the module's rules can tell (see its docstring); None otherwise."""
    if len(name) >= PATH_MAX:  # open(2) refuses it (ENAMETOOLONG): no file
        return None
    parts = _parts(directory, name)
    if not parts or parts[-1] in (b"", b".", b".."):
        return None
    return _walk(directory, parts)


def inode(path: bytes | Path) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the regular file ``path`` (lstat: a link is not one), or None."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None
