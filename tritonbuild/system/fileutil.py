"""Small file helpers shared by the edge modules."""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import json
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tritonbuild.errors import UserError

TEXT_LIMIT = 8 << 20  # bytes: no file tritonbuild parses at plan time is near this (Triton's largest is ~100 KB)
WALK_ENTRIES = 200_000  # files and dirs one walk of a source or plugin dir looks at (a real tree's are ~10,000)
WALK_DEPTH = 64  # directory levels below the walked dir (Triton's deepest is ~12)
SYSTEM_DIRS = ("/proc", "/sys", "/dev")  # never walked into: endless, changing, or blocking on read


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def record_hash(data: bytes, algo: str = "sha256") -> str:
    """A wheel RECORD digest: urlsafe base64 without padding (PEP 376/427)."""
    return base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()


def write_if_changed(path: Path, text: str) -> bool:
    """Atomically (re)write ``path`` only when its content differs; return whether it was written.

    Unchanged files keep their mtime, so Ninja/CMake see nothing new on a no-op run.
    """
    if path.is_file() and path.read_text() == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_with(path, text)
    return True


def replace_with(path: Path, text: str | bytes, mode: int = 0o666,
                 times_ns: tuple[int, int] | None = None) -> None:
    """``path`` atomically replaced by ``text`` (bytes as they are): written to a new temporary file beside it
    (created exclusively, never through a link planted at its name; ``mode`` less the umask; ``times_ns``: its
    access and modification times), then renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        if times_ns is not None:
            os.utime(tmp, ns=times_ns)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_tree(path: Path) -> None:
    """``shutil.rmtree``, with the OSError of the first entry it could not remove naming that entry's whole path
    (rmtree's own names only the entry, as it works relative to its dir); it stops there."""
    def stop(_func: object, where: str, exc: BaseException) -> None:
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror, where) from None
        raise exc

    shutil.rmtree(path, onerror=lambda func, where, info: stop(func, where, info[1]))


def place(src: Path, out_dir: Path) -> Path:
    """``src`` put into ``out_dir`` under its own name, never half-written: a hard link when the two share a file
    system (nothing writes a finished wheel in place, and a build dir's copy is unlinked, never rewritten), else a
    copy keeping its times, under a temporary name renamed into place. OSError when it cannot be."""
    final = out_dir / src.name
    tmp = out_dir / f".{src.name}.{os.getpid()}.partial"
    try:
        tmp.unlink(missing_ok=True)
        try:
            os.link(src, tmp, follow_symlinks=False)
        except OSError:  # another file system, or links not allowed there
            shutil.copy2(src, tmp)
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return final


def owned_file_problem(st: os.stat_result) -> str | None:
    """Why a file tritonbuild keeps for itself (a record, a memo) may not be trusted: not a regular file, another
    user's, or writable by others; None when it may."""
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_uid != os.geteuid():
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"others may write it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def plain_file_problem(st: os.stat_result) -> str | None:
    """Why a memo tritonbuild keeps (whose every entry its reader checks) may not be read: not a regular file; its
    owner and mode do not matter."""
    return None if stat.S_ISREG(st.st_mode) else "it is not a regular file"


def read_owned_json(path: Path, limit: int,
                    problem: Callable[[os.stat_result], str | None] = owned_file_problem) -> Any:
    """The JSON of a file tritonbuild keeps for itself, when ``problem`` finds nothing in its stat and it has at most
    ``limit`` bytes (opened without following a link or blocking on a fifo); None for anything else (no JSON,
    nested past the parser's depth)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if problem(os.fstat(fd)) is not None:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
        return json.loads(data) if len(data) <= limit else None
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(fd)


def read_text(path: Path, limit: int = TEXT_LIMIT) -> str:
    """A regular file's text, "" when it cannot be read or is no regular file (a fifo would block, a device never
    end); undecodable bytes replaced, at most ``limit`` bytes read. For a scan where any one file may be odd."""
    try:
        with open(path, "rb", opener=_nonblocking) as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return ""
            return f.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def walk(top: Path, what: str, *, limit: int = WALK_ENTRIES, depth: int = WALK_DEPTH
         ) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` for a tree the user named (a source or plugin dir), bounded: names sorted, links never
    followed (a link to a dir is listed in the files), no descent into another file system (a dir whose
    ``st_dev`` differs from ``top``'s is left out) nor into /proc, /sys or /dev. More than ``limit`` entries, more
    than ``depth`` levels, or a dir that cannot be read is a UserError naming ``what`` (one paragraph, exit 2).
    The caller may prune the dirs list in place, as with ``os.walk``. Nothing when ``top`` is no directory."""
    if not os.path.isdir(top):
        return
    real = os.path.realpath(top)
    dev, seen = Path(real).stat().st_dev, 0
    todo = [(os.fspath(top), real, 0)]
    while todo:
        here, real, level = todo.pop()
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
            subs = [e for e in entries if e.is_dir(follow_symlinks=False)]
            files = [e.name for e in entries if not e.is_dir(follow_symlinks=False)]
            inner = [e.name for e in subs if os.path.join(real, e.name) not in SYSTEM_DIRS
                     and e.stat(follow_symlinks=False).st_dev == dev]
        except OSError as exc:
            raise UserError(f"{what} {shown(Path(top))} could not be read: {shown(Path(exc.filename or here))} "
                            f"gave \"{exc.strerror or exc}\" while tritonbuild walked it. Check that the path is "
                            "the directory you meant, that it can be read, and that nothing changes it meanwhile."
                            ) from None
        seen += len(entries)
        if seen > limit or (inner and level >= depth):
            raise UserError(f"{what} {shown(Path(top))} holds more than {limit} files and directories, or more "
                            f"than {depth} levels of them (tritonbuild stopped walking it at {shown(Path(here))}). "
                            "Check that the path is the directory you meant (a checkout, not / or /usr), and move "
                            "build trees and other large directories out of it.")
        yield here, inner, files
        todo += [(os.path.join(here, d), os.path.join(real, d), level + 1) for d in reversed(inner)]


def files_under(top: Path, what: str, prune: Callable[[str], bool] = lambda name: False) -> Iterator[Path]:
    """Every entry that is no directory under ``top`` (files, links, ...), walked as ``walk`` walks, in sorted order;
    dirs whose name ``prune`` accepts are not walked into."""
    for here, dirs, files in walk(top, what):
        dirs[:] = [d for d in dirs if not prune(d)]
        yield from (Path(here, f) for f in files)


def _nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK)


def read_checked(path: Path, root: Path, what: str, *, limit: int = TEXT_LIMIT) -> str | None:
    """The UTF-8 text of ``path``, a file tritonbuild parses from an input it did not write (a source tree, a
    plugin): None when it does not exist; a UserError naming it when it is not a regular file, is reached through
    a symlink that leaves ``root``, is larger than ``limit`` bytes or is not UTF-8 text."""
    if not os.path.lexists(path):
        return None
    fix = f"Restore {what} from its repository, or correct it by hand."
    real = within(root, path, what)
    try:
        with open(real, "rb", opener=_nonblocking) as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise UserError(f"{path} ({what}) is not a regular file but a {_kind(st.st_mode)}. {fix}")
            data = f.read(limit + 1)
    except IsADirectoryError:
        raise UserError(f"{path} ({what}) is not a regular file but a directory. {fix}") from None
    except OSError as exc:
        raise UserError(f"{path} ({what}) cannot be read: {exc.strerror}. Check its permissions.") from None
    if len(data) > limit:
        raise UserError(f"{path} ({what}) is larger than {limit} bytes, far more than such a file holds. {fix}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path} ({what}) is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}). "
                        f"{fix}") from None


def _kind(mode: int) -> str:
    return "directory" if stat.S_ISDIR(mode) else "fifo" if stat.S_ISFIFO(mode) else "socket" if \
        stat.S_ISSOCK(mode) else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file"


def resolved(path: Path, what: str = "") -> Path:
    """``path.resolve()`` of a path the user gave (--source, --plugin-dir, --cache-dir): a link on the way that
    leads back to itself (Python 3.11 raises RuntimeError, not OSError) is a UserError paragraph naming it, not a
    traceback. ``what``: the path's role, said after it."""
    try:
        return path.resolve()
    except RuntimeError:
        named = f"{path} ({what})" if what else str(path)
        raise UserError(f"{named} is a symlink loop (a link that leads back to itself), not a directory. Point it "
                        "at a real directory or give the real directory's path.") from None


def given_file(path: Path, what: str, fix: str) -> bool | None:
    """Whether a file the user named is a regular file: True, False (something else: a dir, a fifo), None (nothing
    is there). A path the file system refuses to look at (a name over 255 bytes: ENAMETOOLONG; a link loop: ELOOP)
    is a UserError paragraph naming it (``what``, then ``fix``), not a traceback."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        text = str(path)
        shown = repr(text) if len(text) <= 300 else f"{text[:80]!r}... ({len(text)} characters)"
        raise UserError(f"The {what} {shown} cannot be looked at ({exc.strerror or exc}). {fix}") from None
    return stat.S_ISREG(mode)


def within(root: Path, path: Path, what: str) -> Path:
    """``path`` with its symlinks resolved, which must lie under ``root`` (resolved too); a UserError naming the
    link otherwise (one that leaves the root, dangles or loops)."""
    base = Path(os.path.realpath(root))
    try:
        real = Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        why = "is a symlink loop" if exc.errno == errno.ELOOP else "is a dangling symlink"
        raise UserError(f"{path} ({what}) {why}. Remove it or replace it with a copy of the file.") from None
    if not real.is_relative_to(base):
        raise UserError(f"{path} ({what}) is a symlink to {real}, outside {base}: tritonbuild reads and packages "
                        "only what lies inside it. Remove it or replace it with a copy of the file.")
    return real


def confined(root: Path, *parts: str, what: str = "a path") -> Path:
    """``root / parts``, refused (UserError) when the parts would leave ``root``: ``..``, an absolute part, or a
    symlink on the way that points outside. For every path built from an environment variable, a recipe, a plugin
    or an archive member's name."""
    base = Path(os.path.realpath(root))
    path = root.joinpath(*parts)
    real = Path(os.path.realpath(path))
    if any(Path(p).is_absolute() or ".." in Path(p).parts for p in parts) or not real.is_relative_to(base):
        raise UserError(f"{what[:1].upper() + what[1:]} ({'/'.join(parts)!r}) would lead outside {base}, to {real}. "
                        "Names that tritonbuild builds paths from must stay inside their directory: use a plain name.")
    return path


def unpackable_entries(root: Path, subdirs: tuple[str, ...] = ("",),
                       skip: Callable[[str], bool] = lambda rel: False) -> list[tuple[Path, str]]:
    """What in each ``root / sub`` (a dir that goes into a wheel) the wheel cannot carry, each with why: symlinks
    that would not survive a copy of each ``root / sub`` (what CMake installs into a wheel: it copies links as they
    are), a ``sub`` that resolves outside ``root``; inside a ``sub``, a link that leaves that ``sub``, is absolute
    (its copy would point back into this tree), dangles or loops (also a link to a directory it lies in, which a
    copy that follows links never finishes); links that stay inside are fine, and are not walked into (their
    targets are checked); an entry that is neither a regular file, a directory nor such a link (a fifo would block
    the install forever, a device never end); a name that is not UTF-8 or holds a control character (a wheel's
    RECORD cannot list it); a directory that cannot be read. ``skip(rel)``: entries (by their path relative to
    ``root``, posix) that are not looked at, nor walked into."""
    base = Path(os.path.realpath(root))
    found: list[tuple[Path, str]] = []
    for sub in subdirs:
        top = root / sub if sub else root
        if not os.path.lexists(top):
            continue
        top_bad = _bad_link(top, base)
        if top_bad:
            found += top_bad
            continue
        found += _walk(root, top, Path(os.path.realpath(top)), skip)
    return found


def refuse_unpackable(root: Path, subdirs: tuple[str, ...], skip: Callable[[str], bool] = lambda rel: False, *,
                      what: str) -> None:
    """A UserError, one paragraph naming each entry, when ``unpackable_entries`` finds any (``what``: the tree)."""
    bad = unpackable_entries(root, subdirs, skip)
    if not bad:
        return
    listed = "; ".join(f"{shown(p)} {why}" for p, why in bad[:5]) + (f"; and {len(bad) - 5} more" if
                                                                      len(bad) > 5 else "")
    raise UserError(f"{what} holds entries in what goes into the wheel that the wheel cannot carry (it would get "
                    "files from elsewhere or broken links, an install that blocks, or a file list that cannot name "
                    f"them): {listed}. Only regular files, directories and relative links that stay inside their "
                    "directory can go there: remove each entry named, or replace it with a copy of what it points "
                    "at (a link) or rename it (an odd name).")


def _walk(root: Path, top: Path, inner: Path, skip: Callable[[str], bool]) -> list[tuple[Path, str]]:
    """What ``unpackable_entries`` finds under ``top``, bounded as ``walk`` is (another file system is left out)."""
    found: list[tuple[Path, str]] = []
    todo, seen, dev = [(top, 0)], 0, inner.stat().st_dev
    while todo:
        here, level = todo.pop()
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            found.append((here, f"cannot be read ({exc.strerror or exc})"))
            continue
        seen += len(entries)
        if seen > WALK_ENTRIES or level > WALK_DEPTH:
            raise UserError(f"{shown(top)} holds more than {WALK_ENTRIES} files and directories, or more than "
                            f"{WALK_DEPTH} levels of them (tritonbuild stopped walking it at {shown(here)}), in "
                            "what goes into the wheel. Check that the path is the tree you meant, and move build "
                            "trees and other large directories out of it.")
        for e in entries:
            path = Path(e.path)
            if skip(path.relative_to(root).as_posix()):
                continue
            problem = name_problem(e.name)
            if problem:
                found.append((path, problem))
            elif e.is_symlink():
                found += _bad_link(path, inner, relative=True)
            elif e.is_dir(follow_symlinks=False):
                if _on_device(e, dev):
                    todo.append((path, level + 1))
            elif not e.is_file(follow_symlinks=False):
                found.append((path, _not_packable(path)))
    return sorted(found, key=lambda f: os.fsencode(f[0]))


def _on_device(entry: os.DirEntry[str], dev: int) -> bool:
    """Whether ``entry`` lies on the file system ``dev`` (False when it went away)."""
    try:
        return entry.stat(follow_symlinks=False).st_dev == dev
    except OSError:
        return False


def _not_packable(path: Path) -> str:
    try:
        kind = _kind(path.lstat().st_mode)
    except OSError:
        kind = "special file"
    return (f"is a {kind}, not a regular file, directory or link: installing it would block or never end "
            "(remove it)")


def name_problem(name: str) -> str | None:
    """Why a file name cannot go into a wheel (its RECORD is UTF-8 CSV, one line an entry), or None."""
    if any("\udc80" <= ch <= "\udcff" for ch in name):
        return "has a name that is not UTF-8 (rename it)"
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in name):
        return "has a name with a control character (a newline, a tab, an escape; rename it)"
    return None


def shown(path: Path) -> str:
    """``path`` for a one-line message: as it is when printable UTF-8, else quoted with its odd bytes escaped."""
    text = os.fsencode(path).decode("utf-8", "backslashreplace")
    if text == str(path) and text.isprintable():
        return text
    return "'" + "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text) + "'"


def _bad_link(link: Path, base: Path, relative: bool = False) -> list[tuple[Path, str]]:
    try:
        real = Path(os.path.realpath(link, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return [(link, "is a symlink loop")]
        return [(link, f"dangles (-> {os.readlink(link)})" if link.is_symlink() else "cannot be resolved")]
    if not real.is_relative_to(base):
        return [(link, f"points outside {base}, to {real}")]
    if relative and Path(os.readlink(link)).is_absolute():
        return [(link, f"is an absolute link (-> {os.readlink(link)}), which in the wheel would point back into "
                       "this checkout")]
    if link.is_symlink() and real.is_dir() and _leads_back(link, real):
        return [(link, f"is a symlink loop (-> {os.readlink(link)}: it leads back into a directory it lies in)")]
    return []


def _leads_back(link: Path, real: Path, budget: int = 2000) -> bool:
    """Whether following ``link`` (to the directory ``real``), and the directory links under it, reaches a
    directory it was reached from: a copy that follows links would never end."""
    todo = [(real, frozenset({Path(os.path.realpath(link.parent))}))]
    while todo and budget > 0:
        here, chain = todo.pop()
        if any(c.is_relative_to(here) for c in chain):
            return True
        budget -= 1
        try:
            with os.scandir(here) as it:
                subs = [Path(e.path) for e in it if e.is_dir()]
        except OSError:
            continue
        todo += [(Path(os.path.realpath(d)), chain | {here}) for d in subs]
    return False
