"""The one extractor (edge): every archive and wheel tritonbuild unpacks goes through here (prebuilt LLVM tarballs,
NVIDIA's wheels, the wheel a build checks), and ``verify``/``compare`` count a zip's members here before
``zipfile`` parses its central directory.

An archive is hostile input, and its member filter is this module's own, the same on every Python (tarfile's
"data" filter is not relied on: Debian 12's 3.11.2 has none). Only regular files, directories and links that stay
inside are written: a hardlink only to an earlier regular member, a symlink only where the caller takes them (a
relative one that stays inside, and not through another link). Every file is created here by this process, so
its owner is whoever runs tritonbuild, never the archive's (nothing is chowned); its mode is 0644, or 0755 when
the archive gives it an executable bit (a bundled ptxas stays runnable): no setuid, setgid, sticky, group or world
write; directories are 0755. Names are plain relative paths (no absolute path, ``..``, NUL, control character,
backslash or drive letter, no name twice). Caps, checked before their cost is paid: a zip's member count and
total size come from its end-of-central-directory record and a walk of its central directory before ``zipfile``
builds its list; a tar is read as a stream, one header at a time (never ``getmembers()``), and stops at the cap;
a member that inflates more than ``ratio`` times is refused (a zip's from its header, before anything is written;
a tar's while it is read); bytes are counted while they are written (headers lie). Only the members the caller
keeps are written. A refusal is one ``UserError`` paragraph naming the archive, the member and the cap; what was
written by then is the caller's staging dir's to remove.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import re
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, Literal

from tritonbuild.errors import UserError

BLOCK = 1 << 20
MAX_HEADER = 1 << 20  # bytes of one tar extended header (a pax record or a GNU long name): real ones are < 1 KiB
MAX_CHAIN = 8  # tar extended headers in a row before a member (pax, GNU long name and link: 3 at most)
RATIO_SLACK = 64 << 10  # compressed bytes a tar stream may have read ahead of the member being written
_DISK = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)  # the host's problem, not the archive's
ZIP_READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError,
                   RuntimeError, ValueError, struct.error)
TAR_READ_ERRORS = (tarfile.TarError, zlib.error, EOFError)
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Caps:
    """What one archive may hold. The official Triton 3.6.0 wheel has 410 members, an LLVM prefix ~10,000 files
    and ~2 GiB; NVIDIA's wheels a few hundred members; no real member inflates 100 times."""

    members: int = 200_000
    total: int = 16 << 30  # uncompressed bytes of all members together
    member: int = 8 << 30  # uncompressed bytes of one member (libtriton.so: 396 MiB; debug builds more)
    ratio: int = 100  # uncompressed / compressed, for a member over ratio_from bytes
    ratio_from: int = 1 << 20
    directory: int = 64 << 20  # bytes of a zip's central directory (200,000 members with 300-byte names)


class Refused(Exception):
    """An archive refused for a member (``member``, or None for the archive as a whole) and why: ``why`` is a
    clause (``"is a symlink"``; for the whole archive ``"it lists ..."``)."""

    def __init__(self, member: str | None, why: str) -> None:
        super().__init__(f"member {member!r} {why}" if member is not None else why)
        self.member, self.why = member, why


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def name_problem(name: str) -> str | None:
    """Why ``name`` (an archive member's, or a path a wheel's RECORD lists) could land outside the directory it is
    unpacked into or is unsafe to print, or None when it is a plain relative path (a trailing ``/`` allowed)."""
    if "\0" in name:
        return "holds a NUL byte"
    if "\\" in name:
        return "holds a backslash"
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in name):
        return "holds a control character (an escape, a newline: no archive needs one)"
    if any("\udc80" <= ch <= "\udcff" for ch in name):
        return "is not UTF-8"
    if name.startswith("/"):
        return "is an absolute path"
    if _DRIVE.match(name):
        return "starts with a drive letter"
    parts = name.removesuffix("/").split("/")
    if ".." in parts:
        return "contains '..'"
    if any(p in ("", ".") for p in parts):
        return "has an empty or '.' component"
    if len(name.encode()) > 4000 or any(len(p.encode()) > 255 for p in parts):
        return "is longer than a file system takes"
    return None


def _paragraph(verb: str, what: str, exc: Refused, outcome: str) -> UserError:
    subject = f"its entry {exc.member!r} " if exc.member is not None else ""
    return UserError(f"Refusing to {verb} {what}: {subject}{exc.why}. The archive is hostile or corrupt; {outcome}.")


def _corrupt(what: str, exc: BaseException, outcome: str, fix: str) -> UserError:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return UserError(f"{what[:1].upper() + what[1:]} is corrupt ({ascii(text)[1:-1]}); {outcome}. {fix}".rstrip())


# --- zip: the end-of-central-directory record and the central directory, read before zipfile -------------------

_EOCD = struct.Struct("<4s4H2LH")
_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")


@dataclass(frozen=True)
class Census:
    """What a zip's central directory says, read without ``zipfile``: its members and their total size."""

    members: int
    total: int


def _end_record(f: BinaryIO) -> tuple[int, int, int]:
    """``(members, directory size, directory start)`` from the end records, found as ``zipfile`` finds them (the
    last 22 bytes, else the last signature in the final 64 KiB; a zip64 record right before its locator)."""
    size = f.seek(0, os.SEEK_END)
    if size < _EOCD.size:
        raise zipfile.BadZipFile("File is not a zip file")
    f.seek(size - _EOCD.size)
    data = f.read(_EOCD.size)
    pos = size - _EOCD.size
    if data[:4] != b"PK\x05\x06" or data[-2:] != b"\0\0":
        start = max(size - (1 << 16) - _EOCD.size, 0)
        f.seek(start)
        tail = f.read()
        i = tail.rfind(b"PK\x05\x06")
        if i < 0 or len(tail) - i < _EOCD.size:
            raise zipfile.BadZipFile("File is not a zip file")
        pos, data = start + i, tail[i:i + _EOCD.size]
    _, _, _, _, members, cd_size, _, _ = _EOCD.unpack(data)
    start_dir = pos - cd_size
    if pos >= _LOCATOR.size:
        f.seek(pos - _LOCATOR.size)
        if f.read(4) == b"PK\x06\x07":
            if pos < _LOCATOR.size + _EOCD64.size:
                raise zipfile.BadZipFile("its zip64 end record is missing")
            f.seek(pos - _LOCATOR.size - _EOCD64.size)
            record = _EOCD64.unpack(f.read(_EOCD64.size))
            if record[0] != b"PK\x06\x06":
                raise zipfile.BadZipFile("its zip64 end record is missing")
            members, cd_size = record[7], record[8]
            start_dir = pos - _LOCATOR.size - _EOCD64.size - cd_size
    if start_dir < 0:
        raise zipfile.BadZipFile("its central directory lies before the start of the file")
    return members, cd_size, start_dir


def zip_census(path: Path, caps: Caps = Caps()) -> Census:
    """Count ``path``'s members and their sizes from its end records and central directory, entry by entry, before
    ``zipfile`` reads any of it: ``Refused`` at the first cap passed (a zip claiming millions of members costs a
    few reads), ``zipfile.BadZipFile`` when it is no zip. The same rules then hold ``zipfile``'s own parse."""
    with open(path, "rb") as f:
        claimed, cd_size, start = _end_record(f)
        if claimed > caps.members:
            raise Refused(None, f"it lists {claimed} members (at most {caps.members} are read)")
        if cd_size > caps.directory:
            raise Refused(None, f"its central directory is {mib(cd_size)} (at most {mib(caps.directory)} is read)")
        f.seek(start)
        return _walk_directory(f, cd_size, caps)


def _walk_directory(f: BinaryIO, cd_size: int, caps: Caps) -> Census:
    count = total = done = 0
    while done < cd_size:  # as zipfile walks it: entry after entry until the directory's bytes are used
        head = f.read(_CENTRAL.size)
        if len(head) < _CENTRAL.size or head[:4] != b"PK\x01\x02":
            raise zipfile.BadZipFile("Bad magic number for central directory")
        fields = _CENTRAL.unpack(head)
        flags, packed, size, n, m, k = fields[5], fields[10], fields[11], fields[12], fields[13], fields[14]
        raw, extra = f.read(n), f.read(m)
        f.seek(k, os.SEEK_CUR)
        done += _CENTRAL.size + n + m + k
        name = raw.decode("utf-8" if flags & 0x800 else "cp437", "replace")
        size, packed = _zip64_sizes(extra, size, packed)
        count += 1
        if count > caps.members:
            raise Refused(None, f"it has more than {caps.members} members (the rest were not read)")
        _check_sizes(name, size, packed, caps)
        total += size
        if total > caps.total:
            raise Refused(None, f"its members inflate to more than {mib(caps.total)} together (the cap)")
    return Census(count, total)


def _zip64_sizes(extra: bytes, size: int, packed: int) -> tuple[int, int]:
    """The sizes a zip64 extra field gives for those its header marks 0xFFFFFFFF (in that order)."""
    while len(extra) >= 4:
        tag, length = struct.unpack("<HH", extra[:4])
        body, extra = extra[4:4 + length], extra[4 + length:]
        if tag != 1:
            continue
        values = [v for (v,) in struct.iter_unpack("<Q", body[:len(body) // 8 * 8])]
        if size == 0xFFFFFFFF and values:
            size = values.pop(0)
        if packed == 0xFFFFFFFF and values:
            packed = values.pop(0)
    return size, packed


def _check_sizes(name: str, size: int, packed: int, caps: Caps) -> None:
    if size > caps.member:
        raise Refused(name, f"inflates to {mib(size)} (cap {mib(caps.member)})")
    if size > caps.ratio_from and size > caps.ratio * max(packed, 1):
        raise Refused(name, f"inflates {size // max(packed, 1)} times to {mib(size)} (a zip bomb? at most "
                            f"{caps.ratio} times is read)")


def zip_member_problem(info: zipfile.ZipInfo, symlinks: bool = False) -> str | None:
    """Why a zip member must not be unpacked (its name; a symlink; a device, fifo or socket), or None."""
    why = name_problem(info.orig_filename)
    if why:
        return why
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        return "is a symlink"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "is a device, fifo or socket"
    return None


@contextlib.contextmanager
def open_zip(path: Path, what: str, caps: Caps = Caps(), *, outcome: str = "nothing was unpacked from it",
             fix: str = "") -> Iterator[zipfile.ZipFile]:
    """``path`` opened with ``zipfile`` once its census passed the caps and every member passed the filter (a
    refusal names ``what``); a corrupt archive, here or while the caller reads it, is a UserError too."""
    try:
        zip_census(path, caps)
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > caps.members:  # zipfile parsed what the census walked: never more
                raise Refused(None, f"it has more than {caps.members} members")
            seen: set[str] = set()
            for info in infos:
                why = zip_member_problem(info) or ("appears twice" if info.filename in seen else None)
                if why:
                    raise Refused(info.orig_filename, why)
                seen.add(info.filename)
            yield zf
    except Refused as exc:
        raise _paragraph("unpack", what, exc, outcome) from None
    except ZIP_READ_ERRORS as exc:
        raise _corrupt(what, exc, outcome, fix) from None


def extract_zip(path: Path, dest: Path, what: str, *, keep: Callable[[str], bool] = lambda name: True,
                caps: Caps = Caps(), outcome: str = "nothing was unpacked from it", fix: str = "") -> Path:
    """Unpack the members of the zip ``path`` that ``keep`` takes (by name) into ``dest`` (made when missing),
    through the filter and caps above; every member is checked before anything is written. Returns ``dest``."""
    with open_zip(path, what, caps, outcome=outcome, fix=fix) as zf:
        out = _Writer(dest, caps)
        try:
            for info in zf.infolist():
                if not keep(info.filename):
                    continue
                if info.is_dir():
                    out.directory(info.filename.removesuffix("/"))
                    continue
                with zf.open(info) as src:
                    out.file(info.filename, src, size=info.file_size,
                             executable=bool(info.external_attr >> 16 & 0o111))
        except Refused as exc:
            raise _paragraph("unpack", what, exc, outcome) from None
    return dest


# --- tar: a stream read one header at a time ------------------------------------------------------------------

_EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
             tarfile.SOLARIS_XHDTYPE)
_FILE_TYPES = (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE)


def _guarded_info(caps: Caps) -> type[tarfile.TarInfo]:
    """A TarInfo whose header processing (tarfile's documented hook) refuses an extended header larger than
    ``MAX_HEADER`` (tarfile would read it whole into memory), more than ``MAX_CHAIN`` of them in a row (global
    headers recurse) and more header blocks than ``caps.members`` members can need."""
    state = {"headers": 0, "chain": 0}

    class Guarded(tarfile.TarInfo):
        def _proc_member(self, tar: tarfile.TarFile) -> tarfile.TarInfo:
            state["headers"] += 1
            if state["headers"] > 3 * caps.members + MAX_CHAIN:
                raise Refused(None, f"it has more than {caps.members} members (the rest were not read)")
            if self.type in _EXTENDED:
                state["chain"] += 1
                if self.size > MAX_HEADER:
                    raise Refused(self.name, f"is an extended header of {self.size} bytes (at most {MAX_HEADER})")
                if state["chain"] > MAX_CHAIN:
                    raise Refused(None, f"it has more than {MAX_CHAIN} extended headers in a row")
            else:
                state["chain"] = 0
            found: tarfile.TarInfo = super()._proc_member(tar)  # type: ignore[misc]
            return found

    return Guarded


def _tar_mode(raw: BinaryIO) -> Literal["r|gz", "r|"]:
    """``r|gz`` for a gzip stream, ``r|`` for a plain tar; anything else (bzip2, xz: their decompressors have no
    output bound in tarfile's stream) is refused."""
    head = raw.read(512)
    raw.seek(0)
    if head[:2] == b"\x1f\x8b":
        return "r|gz"
    if head[257:262] == b"ustar":
        return "r|"
    raise Refused(None, "it is neither a gzip-compressed nor a plain tar archive")


def extract_tar(path: Path, dest: Path, what: str, *, keep: Callable[[str], bool] = lambda name: True,
                caps: Caps = Caps(), symlinks: bool = True, outcome: str = "nothing was installed",
                fix: str = "") -> Path:
    """Unpack the members of the tar (or tar.gz) ``path`` that ``keep`` takes into ``dest`` (made when missing),
    read as a stream through the filter and caps above (``symlinks``: whether links are taken). A refusal may
    come after some members were written: ``dest`` is the caller's staging dir to drop. Returns ``dest``."""
    try:
        with open(path, "rb") as raw:
            mode = _tar_mode(raw)
            with tarfile.open(fileobj=raw, mode=mode, tarinfo=_guarded_info(caps)) as tar:
                out = _Writer(dest, caps)
                try:
                    _read_tar(tar, raw, out, keep, symlinks)
                    out.finish()
                except BaseException:
                    out.drop_links()  # what a refusal leaves in the staging dir holds no link at all
                    raise
    except Refused as exc:
        raise _paragraph("extract", what, exc, outcome) from None
    except TAR_READ_ERRORS as exc:
        raise _corrupt(what, exc, outcome, fix) from None
    return dest


def _read_tar(tar: tarfile.TarFile, raw: BinaryIO, out: _Writer, keep: Callable[[str], bool],
              symlinks: bool) -> None:
    count = declared = 0
    while (member := tar.next()) is not None:
        vars(tar)["members"].clear()  # tarfile keeps every header it read: a stream needs none of them
        count += 1
        if count > out.caps.members:
            raise Refused(None, f"it has more than {out.caps.members} members (the rest were not read)")
        name = _tar_name(member)
        if name is None:
            continue
        declared += member.size if member.type in _FILE_TYPES else 0
        if declared > out.caps.total:
            raise Refused(None, f"its members inflate to more than {mib(out.caps.total)} together (the cap)")
        if not keep(name):
            continue
        if member.type in _FILE_TYPES:
            src = tar.extractfile(member)
            assert src is not None
            out.file(name, src, size=member.size, executable=bool(member.mode & 0o111), mtime=member.mtime,
                     compressed=_read_since(raw))
        elif member.type == tarfile.DIRTYPE:
            out.directory(name)
        elif member.type == tarfile.LNKTYPE:
            out.hardlink(name, _link_name(member))
        elif symlinks:
            out.symlink(name, member.linkname)
        else:
            raise Refused(name, "is a symlink")


def _read_since(raw: BinaryIO) -> Callable[[], int]:
    """How many bytes of ``raw`` (the compressed stream) were read since now."""
    start = raw.tell()
    return lambda: raw.tell() - start


def _tar_name(member: tarfile.TarInfo) -> str | None:
    """The member's checked name (leading ``./`` dropped), None for the archive's root dir itself; ``Refused``
    for a bad name or a member that is no regular file, directory or link."""
    name = member.name
    while name.startswith("./"):
        name = name[2:]
    if name in ("", ".") and member.type == tarfile.DIRTYPE:
        return None
    why = name_problem(name)
    if why is None and (member.issparse() or member.type not in
                        (*_FILE_TYPES, tarfile.DIRTYPE, tarfile.LNKTYPE, tarfile.SYMTYPE)):
        why = "is a device, fifo, sparse file or other special entry"
    if why:
        raise Refused(member.name, why)
    return name


def _link_name(member: tarfile.TarInfo) -> str:
    target = member.linkname
    while target.startswith("./"):
        target = target[2:]
    why = name_problem(target)
    if why:
        raise Refused(member.name, f"is a hardlink whose target {target!r} {why}")
    return target


# --- writing: files made here, modes and owners ours ---------------------------------------------------------

class _Writer:
    """Writes members under ``root``: each directory made (0755) and checked to be a real directory, each file
    created new (never through a link, never over another) and counted as it is written."""

    def __init__(self, root: Path, caps: Caps) -> None:
        self.root, self.caps = root, caps
        self.dirs: set[str] = set()
        self.files: dict[str, int] = {}  # regular members written: name -> size (what a hardlink may name)
        self.names: set[str] = set()
        self.links: list[str] = []
        self.written = 0

    def _claim(self, name: str) -> None:
        if name in self.names or name in self.dirs:
            raise Refused(name, "appears twice in the archive")
        self.names.add(name)

    def directory(self, name: str) -> Path:
        """Make ``name`` and the dirs above it; ``Refused`` when one of them is a link or a file of the archive."""
        self.root.mkdir(parents=True, exist_ok=True)
        cur = ""
        for part in name.split("/") if name else []:
            cur = f"{cur}/{part}" if cur else part
            if cur in self.dirs:
                continue
            path = self.root / cur
            try:
                path.mkdir(0o755)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(path).st_mode):
                    raise Refused(name, f"lies below {cur!r}, a link or file of the archive") from None
            except OSError as exc:
                raise self._failed(name, exc) from None
            path.chmod(0o755)
            self.dirs.add(cur)
        return self.root / name if name else self.root

    def _failed(self, name: str, exc: OSError) -> Exception:
        if exc.errno in _DISK:
            return exc
        return Refused(name, f"cannot be written ({exc.strerror or exc})")

    def _create(self, name: str) -> int:
        self._claim(name)
        self.directory(posixpath.dirname(name))
        try:
            return os.open(self.root / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                           0o600)
        except OSError as exc:
            raise self._failed(name, exc) from None

    def file(self, name: str, src: IO[bytes], *, size: int, executable: bool, mtime: float | None = None,
             compressed: Callable[[], int] | None = None) -> None:
        """Write ``src`` as the new regular file ``name``: at most ``size`` bytes (what its header says), within the
        caps (``compressed()``: the archive bytes read for it so far, for the ratio cap)."""
        if size > self.caps.member:
            raise Refused(name, f"inflates to {mib(size)} (cap {mib(self.caps.member)})")
        fd = self._create(name)
        with os.fdopen(fd, "wb") as out:
            n = 0
            while block := src.read(BLOCK):
                n += len(block)
                if n > size:
                    raise Refused(name, f"inflates past the {size} bytes its header declares")
                if self.written + n > self.caps.total:
                    raise Refused(None, f"its members inflate to more than {mib(self.caps.total)} together (the cap)")
                if compressed and n > self.caps.ratio_from and n > self.caps.ratio * (compressed() + RATIO_SLACK):
                    raise Refused(name, f"inflates more than {self.caps.ratio} times (a bomb? at most "
                                        f"{self.caps.ratio} times is read)")
                out.write(block)
            os.fchmod(fd, 0o755 if executable else 0o644)
            if mtime is not None and 0 <= mtime < 1 << 33:
                os.utime(fd, (mtime, mtime))
        self.written += n
        self.files[name] = n

    def hardlink(self, name: str, target: str) -> None:
        """``name`` as a hardlink to ``target``, an earlier regular member written here."""
        if target not in self.files:
            raise Refused(name, f"is a hardlink to {target!r}, which is no earlier regular file of the archive")
        self._claim(name)
        self.directory(posixpath.dirname(name))
        self.written += self.files[target]
        if self.written > self.caps.total:
            raise Refused(None, f"its members inflate to more than {mib(self.caps.total)} together (the cap)")
        try:
            os.link(self.root / target, self.root / name, follow_symlinks=False)
        except OSError as exc:
            raise self._failed(name, exc) from None

    def symlink(self, name: str, target: str) -> None:
        """``name`` as a relative symlink to ``target``, which must stay inside (lexically, and not through another
        link of the archive: ``finish`` checks the links once all are made)."""
        why = "is absolute" if target.startswith("/") else "is empty" if not target else name_problem(target)
        if why in ("contains '..'", "has an empty or '.' component"):
            why = None  # what a relative link may hold; where it leads is checked here and in finish()
        lexical = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
        if why is None and (lexical == ".." or lexical.startswith("../")):
            why = "leads outside the archive"
        if why:
            raise Refused(name, f"is a symlink to {target!r}, which {why}")
        self._claim(name)
        self.directory(posixpath.dirname(name))
        try:
            (self.root / name).symlink_to(target)
        except OSError as exc:
            raise self._failed(name, exc) from None
        self.links.append(name)

    def finish(self) -> None:
        """Refuse a link that, with all links made, resolves outside ``root`` (one through a later link), or
        that cannot be resolved at all (a loop of links, a name too long); one to a missing member is left."""
        base = Path(os.path.realpath(self.root))
        for name in self.links:
            link = self.root / name
            try:
                link.stat()
            except FileNotFoundError:
                pass
            except OSError as exc:  # ELOOP, ENAMETOOLONG, ENOTDIR: where it leads is no path
                raise Refused(name, f"is a symlink to {os.readlink(link)!r}, which cannot be resolved "
                                    f"({(exc.strerror or str(exc)).lower()})") from None
            if not Path(os.path.realpath(link)).is_relative_to(base):
                raise Refused(name, f"is a symlink to {os.readlink(link)!r}, which leads outside the archive "
                                    "through another link of it")

    def drop_links(self) -> None:
        """Remove every link made (a refusal's leftovers are dropped by the caller; none may lead out meanwhile)."""
        for name in self.links:
            with contextlib.suppress(OSError):
                (self.root / name).unlink()
