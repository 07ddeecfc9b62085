"""The provenance-file check (verify only): ``<wheel>.provenance.json`` beside the wheel, when there, is read as
hostile input (a regular file of at most ``attestation.MAX_BYTES``, strict UTF-8 JSON, an in-toto Statement v1 with
tritonbuild's SLSA Provenance v1 predicate and one subject: ``tritonbuild.wheel.attestation``'s own reading) and its
subject is this wheel: the same file name and sha256. Without one the finding is a note.

``SHA256SUMS`` beside the wheel, when there, must give the wheel's sha256 (and the provenance file's) on the lines
that name them; a dir without one is fine, and a SHA256SUMS that does not name the wheel is a note."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from tritonbuild.fileutil import sha256_of
from tritonbuild.printable import printable
from tritonbuild.wheel import attestation
from tritonbuild.wheel.checks.base import Context, Finding

SUMS = "SHA256SUMS"
SUMS_MAX = 4 << 20  # one line per wheel and provenance file of an output dir


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


def _sums(ctx: Context, sums: Path, want: dict[str, str]) -> Finding:
    """SHA256SUMS's lines for the wheel and its provenance file against their sha256 (``want``: name -> sha)."""
    data = _read(sums, SUMS_MAX)
    if isinstance(data, str):
        return Finding(SUMS, "fail", data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Finding(SUMS, "fail", f"{printable(str(sums))} is not UTF-8 text")
    listed: dict[str, set[str]] = {}
    for line in text.splitlines():
        digest, sep, name = line.partition(" ")
        if sep and name[:1] in (" ", "*"):
            listed.setdefault(name[1:], set()).add(digest.lower())
    bad = [f"{SUMS} gives {printable(n)} the sha256 {printable(', '.join(sorted(listed[n])))[:140]}, but it is {sha}"
           for n, sha in want.items() if n in listed and listed[n] != {sha}]
    if bad:
        return Finding(SUMS, "fail", "; ".join(bad))
    named = [n for n in want if n in listed]
    if ctx.wheel.name not in named:
        return Finding(SUMS, "note", f"{SUMS} beside the wheel does not list {printable(ctx.wheel.name)}")
    return Finding(SUMS, "ok", f"{SUMS} gives the sha256 of {' and '.join(printable(n) for n in named)}")


class ProvenanceFile:
    name = "provenance-file"

    def applies(self, ctx: Context) -> bool:
        return True

    def run(self, ctx: Context) -> list[Finding]:
        path = ctx.wheel.with_name(attestation.file_name(ctx.wheel.name))
        sums = ctx.wheel.with_name(SUMS)
        sha = sha256_of(ctx.wheel)
        data: bytes | str | None = _read(path, attestation.MAX_BYTES) if os.path.lexists(path) else None
        if data is not None:
            out = [_provenance(ctx, path, data, sha)]
        else:
            out = [Finding(self.name, "note", "no provenance file beside the wheel "
                           f"({printable(path.name)})")]
        if os.path.lexists(sums):
            want = {ctx.wheel.name: sha}
            if isinstance(data, bytes):
                want[path.name] = hashlib.sha256(data).hexdigest()
            out.append(_sums(ctx, sums, want))
        return out
