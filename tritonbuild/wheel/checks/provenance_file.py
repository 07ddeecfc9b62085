"""The provenance-file check (verify only): ``<wheel>.provenance.json`` beside the wheel, when there, is read as
hostile input (a regular file of at most ``attestation.MAX_BYTES``, strict UTF-8 JSON, an in-toto Statement v1 with
tritonbuild's SLSA Provenance v1 predicate and one subject: ``tritonbuild.wheel.attestation``'s own reading) and its
subject is this wheel: the same file name and sha256. Without one the finding is a note.

``SHA256SUMS`` beside the wheel, when there, must give the wheel's sha256 (and the provenance file's) on every line
that names them as ``sha256sum -c`` run in that dir reads it (``tritonbuild.wheel.sums``); a dir without one is
fine, and a SHA256SUMS that does not name the wheel is a note."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from tritonbuild.printable import printable
from tritonbuild.system.fileutil import sha256_of
from tritonbuild.wheel import attestation, sums
from tritonbuild.wheel.checks.base import Context, Finding

SUMS = "SHA256SUMS"


def _read(path: Path, cap: int) -> bytes | str:
    """The bytes of the regular file ``path`` (links followed, never a fifo or device: opened without blocking),
    or what is wrong with it: not a regular file, unreadable, over ``cap`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return f"{printable(str(path))} cannot be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return f"{printable(str(path))} is not a regular file"
        try:
            data = f.read(cap + 1)
        except OSError as exc:
            return f"{printable(str(path))} cannot be read ({exc.strerror})"
    return data if len(data) <= cap else f"{printable(str(path))} is over {cap >> 20} MiB"


def _subject(data: bytes) -> tuple[str, str] | str:
    """The subject's (name, sha256) of a provenance file's bytes, or what is wrong with the file."""
    try:
        stmt = attestation.read_statement(data)
        subject = stmt["subject"][0]
        name, sha = subject.get("name"), subject.get("digest", {}).get("sha256")
    except RecursionError:
        return "it is JSON nested too deep to read"
    except attestation.READ_ERRORS as exc:
        return f"it is not a provenance file tritonbuild writes: {printable(attestation.problem_of(exc))[:300]}"
    if not isinstance(name, str) or not isinstance(sha, str):
        return "its subject has no file name or no sha256"
    return name, sha


def _provenance(ctx: Context, path: Path, data: bytes | str, sha: str) -> Finding:
    """The finding on the provenance file ``path`` (``data``: its bytes, or what is wrong with reading it)."""
    if isinstance(data, str):
        return Finding("provenance-file", "fail", data)
    found = _subject(data)
    if isinstance(found, str):
        return Finding("provenance-file", "fail", f"{printable(path.name)}: {found}")
    name, claimed = found
    if name != ctx.wheel.name:
        return Finding("provenance-file", "fail", f"{printable(path.name)} is the provenance of "
                       f"{printable(name)[:200]}, not of this wheel {printable(ctx.wheel.name)}")
    if claimed.lower() != sha:
        return Finding("provenance-file", "fail", f"{printable(path.name)} gives the wheel's sha256 as "
                       f"{printable(claimed)[:80]}, but the wheel's is {sha}")
    return Finding("provenance-file", "ok", f"{printable(path.name)}: its subject is this wheel (name and sha256)")


def matching(directory: Path, lines: list[sums.Line], want: dict[str, str]) -> list[tuple[sums.Line, str]]:
    """Each line of ``lines`` that names a file of ``want`` (name -> sha256, files in ``directory``) as
    ``sha256sum -c`` run there opens it (its own name, or another name of its inode), with that file's name."""
    names = {os.fsencode(name): name for name in want}
    inodes = {key: name for name in want if (key := sums.inode(directory / name)) is not None}
    found = []
    for line in lines:
        path = sums.resolve(directory, line.name)
        if path is None:
            continue
        if len(path) == 1 and path[0] in names:
            found.append((line, names[path[0]]))
        elif (key := sums.inode(os.path.join(os.fsencode(directory), *path))) in inodes:
            found.append((line, inodes[key]))
    return found


def _wrong(line: sums.Line, name: str, sha: str) -> str:
    written = os.fsdecode(line.name)
    shown = printable(name) if written == name else f"{printable(written)[:200]} (that is {printable(name)})"
    return f"{SUMS} gives {shown} the sha256 {line.digest}, but it is {sha} (line {line.number})"


def _sums(ctx: Context, sums_path: Path, want: dict[str, str]) -> Finding:
    """SHA256SUMS's lines for the wheel and its provenance file against their sha256 (``want``: name -> sha), read
    as ``sha256sum -c`` run in the wheel's dir reads them: every line naming one of them counts."""
    data = _read(sums_path, sums.MAX_BYTES)
    if isinstance(data, str):
        return Finding(SUMS, "fail", data)
    lines = sums.read(data)
    if isinstance(lines, str):
        return Finding(SUMS, "fail", f"{printable(str(sums_path))}: {lines}")
    found = matching(sums_path.parent, lines, want)
    bad = [_wrong(line, name, want[name]) for line, name in found if line.digest != want[name]]
    if bad:
        more = f"; and {len(bad) - 5} more lines" if len(bad) > 5 else ""
        return Finding(SUMS, "fail", "; ".join(bad[:5]) + more)
    named = [n for n in want if any(name == n for _, name in found)]
    if ctx.wheel.name not in named:
        return Finding(SUMS, "note", f"{SUMS} beside the wheel does not list {printable(ctx.wheel.name)}")
    return Finding(SUMS, "ok", f"{SUMS} gives the sha256 of {' and '.join(printable(n) for n in named)}")


class ProvenanceFile:
    name = "provenance-file"

    def applies(self, ctx: Context) -> bool:
        return True

    def run(self, ctx: Context) -> list[Finding]:
        path = ctx.wheel.with_name(attestation.file_name(ctx.wheel.name))
        sums_path = ctx.wheel.with_name(SUMS)
        sha = sha256_of(ctx.wheel)
        data: bytes | str | None = _read(path, attestation.MAX_BYTES) if os.path.lexists(path) else None
        if data is not None:
            out = [_provenance(ctx, path, data, sha)]
        else:
            out = [Finding(self.name, "note", "no provenance file beside the wheel "
                           f"({printable(path.name)})")]
        if os.path.lexists(sums_path):
            want = {ctx.wheel.name: sha}
            if isinstance(data, bytes):
                want[path.name] = hashlib.sha256(data).hexdigest()
            out.append(_sums(ctx, sums_path, want))
        return out
