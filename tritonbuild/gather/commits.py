"""The commits ``tritonbuild llvm compat`` tests (edge: runs git, always through ``safegit``, and writes trees):
the first-parent history of a range of a checkout, each commit's tree exported with ``git archive`` into a
directory tritonbuild owns (the checkout is never touched: no checkout, worktree, index or stash), and the LLVM
prefix the answer is for.

The archive is read as hostile input: every member is checked before anything is written (no absolute path,
``..``, link leaving the tree, device or fifo: ``llvm.download.check_members``), and tarfile's ``data`` filter
checks each again as it is written. An export is unpacked into a temporary dir beside its place, a marker written
last, then renamed into place: a present export with its marker is complete and is reused.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tritonbuild import safegit
from tritonbuild.errors import UserError
from tritonbuild.llvm.download import check_members
from tritonbuild.llvm.probe import probe, system_prefixes
from tritonbuild.proc import Result
from tritonbuild.resolve.facts import LLVMInstall

DEFAULT_DEPTH = 50  # the default range: HEAD~50..HEAD
MARKER = ".tritonbuild-export.json"  # written last into an export
_FILTER_ERRORS: tuple[type[Exception], ...] = (tarfile.FilterError,) if hasattr(tarfile, "FilterError") else ()


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str


@dataclass(frozen=True)
class History:
    checkout: Path  # the top of the work tree
    subdir: str  # the source's path inside the repository ("" at its top), exported as <commit>:<subdir>
    start: str  # the range as given (or the default)
    end: str
    commits: tuple[Commit, ...]  # oldest first; the first is the range's start itself


def _git(checkout: Path) -> Callable[..., Result]:
    if not checkout.is_dir():
        raise UserError(f"The source {checkout} is not a directory: `llvm compat` needs a git checkout of Triton "
                        "(its history is what it searches). Pass --source with the top of a clone.")
    git = safegit.session(checkout)
    res = git("rev-parse", "--is-inside-work-tree", timeout=30)
    if not res.ok or res.stdout.strip() != "true":
        raise UserError(f"The source {checkout} is not a git checkout ({res.output or 'git says no'}): `llvm "
                        "compat` searches a checkout's history, commit by commit. Pass --source with a clone of the "
                        "Triton repository (a tree without .git, or a bare repository, has no history to search).")
    return git


def parse_range(text: str | None) -> tuple[str, str] | None:
    """``A..B`` as two refs that ``safegit.check_ref`` accepts (None: the default range); a UserError otherwise."""
    if text is None:
        return None
    parts = text.split("..")
    if len(parts) != 2 or not all(parts):
        raise UserError(f"--range {text!r} is not a range of two commits: give A..B (e.g. v3.4.0..main or two "
                        "commit hashes), the oldest commit to test first; A must be on B's first-parent history.")
    for part in parts:
        base = _ANCESTRY.sub("", part)  # main~20, HEAD^: the ref must pass check_ref, the suffix is only ~ ^ digits
        try:
            safegit.check_ref(base, "")
        except UserError:
            raise UserError(f"--range {text!r}: {part!r} is not a commit name tritonbuild gives git: a branch, a tag "
                            "or a commit hash (letters, digits and . _ / + -, not starting with '-', no '..'), "
                            "optionally followed by ~N or ^ (e.g. main~20..main).") from None
    return parts[0], parts[1]


_ANCESTRY = re.compile(r"(?:[~^][0-9]*)+$")


def history(checkout: Path, given: str | None) -> History:
    """The first-parent commits from A to B, both included, oldest first (default: HEAD~50..HEAD, or from the
    root when the history is shorter). A range whose start is not on its end's first-parent history is refused."""
    ends = parse_range(given)
    git = _git(checkout)
    top = git("rev-parse", "--show-toplevel", timeout=30).stdout.strip()
    subdir = git("rev-parse", "--show-prefix", timeout=30).stdout.strip().rstrip("/")
    if ends is None:
        start, end = f"HEAD~{DEFAULT_DEPTH}", "HEAD"
        listed = _listed(git, _commit(git, "HEAD", "HEAD"), f"--max-count={DEFAULT_DEPTH + 1}")
        return History(Path(top or checkout), subdir, start, end, tuple(c for c, _ in reversed(listed)))
    start, end = ends
    a, b = _commit(git, start, given or ""), _commit(git, end, given or "")
    listed = _listed(git, b, f"^{a}") if a != b else []
    if a != b and (not listed or listed[-1][1] != a):
        raise UserError(f"--range {given}: {start} ({a[:12]}) is not on the first-parent history of {end} "
                        f"({b[:12]}), so there is no line of commits from one to the other to search. Give as A a "
                        f"commit that `git log --first-parent {end}` lists (older than {end}).")
    commits = [Commit(a, _subject(git, a)), *(c for c, _ in reversed(listed))]
    return History(Path(top or checkout), subdir, start, end, tuple(commits))


def _commit(git: Callable[..., Result], ref: str, given: str) -> str:
    res = git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", timeout=30)
    sha = res.stdout.strip()
    if not res.ok or len(sha) not in (40, 64):
        raise UserError(f"--range {given}: {ref!r} names no commit of this checkout. Give a branch, a tag or a "
                        "commit it has (`git log --first-parent --oneline` lists them); fetch it first if it is "
                        "only on a remote.")
    return sha


def _listed(git: Callable[..., Result], *args: str) -> list[tuple[Commit, str]]:
    """``git rev-list --first-parent`` of ``args``: each commit (newest first) with its first parent."""
    res = git("rev-list", "--first-parent", "--format=%x00%H%x00%P%x00%s", *args, "--", timeout=300)
    if not res.ok:
        raise UserError(f"git cannot list the history ({res.output or 'no output'}). Check the checkout.")
    out = []
    for line in res.stdout.splitlines():
        if line.startswith("\0"):
            _, sha, parents, subject = [*line.split("\0"), "", ""][:4]
            out.append((Commit(sha, _printable(subject)), parents.split(" ")[0] if parents else ""))
    return out


def _subject(git: Callable[..., Result], sha: str) -> str:
    listed = _listed(git, "--max-count=1", sha)
    return listed[0][0].subject if listed else ""


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)[:200]


def export(history: History, commit: str, trees: Path) -> Path:
    """The tree of ``commit`` in ``trees/<commit>``: reused when complete (its marker present), else exported
    with ``git archive`` and unpacked safely (a UserError when git cannot export it or the archive is refused)."""
    dest = trees / commit
    if (dest / MARKER).is_file() and not dest.is_symlink():
        return dest
    trees.mkdir(parents=True, exist_ok=True)
    remove(dest)
    staging = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=trees))
    try:
        archive = staging / "export.tar"
        treeish = f"{commit}:{history.subdir}" if history.subdir else commit
        res = safegit.run_git(history.checkout, "archive", "--format=tar", f"--output={archive}", treeish,
                              timeout=1800)
        if not res.ok:
            raise UserError(f"git cannot export commit {commit[:12]} ({res.output or 'no output'}).")
        _unpack(archive, staging / "tree", commit)
        archive.unlink()
        (staging / "tree" / MARKER).write_text(json.dumps({"commit": commit, "tree": treeish}) + "\n")
        with contextlib.suppress(OSError):  # another run put it in place first: theirs is as good
            (staging / "tree").rename(dest)
        if not (dest / MARKER).is_file():
            raise UserError(f"The export of commit {commit[:12]} could not be put in place at {dest}.")
        return dest
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _unpack(archive: Path, dest: Path, commit: str) -> None:
    what, outcome = f"the export of commit {commit[:12]} (git archive)", "nothing of it was used"
    dest.mkdir()
    try:
        with tarfile.open(archive, "r:") as tar:
            members = [m for m in check_members(tar, dest, what, outcome) if m.type != tarfile.XGLTYPE]
            if hasattr(tarfile, "data_filter"):
                tar.extractall(dest, members=members, filter="data")
            else:  # pragma: no cover - Python without PEP 706 filters: check_members' lexical checks stand alone
                tar.extractall(dest, members=members)
    except _FILTER_ERRORS as exc:
        raise UserError(f"Refusing to extract {what}: {exc}. The archive is not trustworthy; {outcome}.") from None
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise UserError(f"The export of commit {commit[:12]} is not a readable archive ({exc}).") from None


def remove(path: Path) -> None:
    """An export (or anything tritonbuild made under its cache) removed; a link is removed, not followed."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def llvm(given: str | None, cwd: Path) -> LLVMInstall:
    """The one LLVM the answer is for: a prefix, or ``system`` (the newest installed one); refused (UserError)
    when it is a strategy that depends on the commit (auto, download, source) or its llvm-config does not run."""
    if given in (None, "auto", "download", "source"):
        raise UserError(f"`llvm compat` answers for one LLVM, but --llvm is {given or 'auto'} (which LLVM that is "
                        "depends on each commit's pin). Give its prefix, e.g. --llvm /usr/lib/llvm-22, or --llvm "
                        "system.")
    if given == "system":
        found_system = system_prefixes()
        if not found_system:
            raise UserError("--llvm system: no LLVM is installed system-wide (no llvm-config on PATH or in "
                            "/usr/lib/llvm-*). Give a prefix with --llvm PREFIX.")
        given = found_system[0][0]
    prefix = Path(given) if Path(given).is_absolute() else cwd / given
    found = probe(prefix, found_by="--llvm")
    if not found.runs or not found.version:
        raise UserError(f"--llvm {prefix} is not a usable LLVM prefix ({found.error or 'no version'}): `llvm "
                        "compat` answers for one LLVM. Give the prefix that holds bin/llvm-config, e.g. "
                        "/usr/lib/llvm-22.")
    return found
