"""The commits ``tritonbuild llvm compat`` tests (edge: runs git, always through ``safegit``, and writes trees):
the first-parent history of a range of a checkout, each commit's tree exported into a directory tritonbuild owns
(the checkout is never touched: no checkout, worktree, index or stash), and the LLVM prefix the answer is for.

An export is the tree exactly as a checkout of the commit has it, whatever its ``.gitattributes`` say: not ``git
archive`` (which applies ``export-ignore`` and ``export-subst``), but ``git ls-tree -r -z`` and each blob's raw
bytes from ``git cat-file --batch`` (no filter, no eol conversion), streamed to disk. The listing is hostile input:
every entry is checked before any file is written (no absolute path, ``..``, ``.git``, name that is not printable
UTF-8, link leaving the tree, below a link or through one);
submodules are left out, as git archive left them. An export is written into a staging dir beside its place, whose
own marker (``STAGING_MARK``, with the pid) is its first file; the export's marker is written last, then it is
renamed into place, replacing what was there: an export is made afresh at each run, never reused unchecked.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from tritonbuild.errors import InputMissing, UserError
from tritonbuild.llvm.probe import probe, system_prefixes
from tritonbuild.resolve.facts import LLVMInstall
from tritonbuild.settings.model import MAX_TEXT, show, text_problem
from tritonbuild.system import safegit
from tritonbuild.system.proc import Result, end

DEFAULT_DEPTH = 50  # the default range: HEAD~50..HEAD
MARKER = ".tritonbuild-export.json"  # written last into an export
STAGING_MARK = ".tritonbuild-export-staging.json"  # written first into an export's staging dir (with the pid)


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
        why = f" ({res.stderr.strip()})" if not res.ok and res.stderr.strip() else ""
        raise UserError(f"The source {checkout} is not a git checkout{why}: `llvm "
                        "compat` searches a checkout's history, commit by commit. Pass --source with a clone of the "
                        "Triton repository (a tree without .git, or a bare repository, has no history to search).")
    return git


def parse_range(text: str | None) -> tuple[str, str] | None:
    """``A..B`` as two refs that ``safegit.check_ref`` accepts (None: the default range); a UserError otherwise."""
    if text is None:
        return None
    shown = show(text)  # cut short, as every option's value is quoted: a 100 kB --range made a 100 kB message
    if len(text) > MAX_TEXT:  # a control character is refused below, with the words for a commit name
        raise UserError(f"--range {shown} {text_problem(text)}.")
    parts = text.split("..")
    if len(parts) != 2 or not all(parts):
        raise UserError(f"--range {shown} is not a range of two commits: give A..B (e.g. v3.4.0..main or two "
                        "commit hashes), the oldest commit to test first; A must be on B's first-parent history.")
    for part in parts:
        base = _ANCESTRY.sub("", part)  # main~20, HEAD^: the ref must pass check_ref, the suffix is only ~ ^ digits
        try:
            safegit.check_ref(base, "")
        except UserError:
            raise UserError(f"--range {shown}: {show(part)} is not a commit name tritonbuild gives git: a branch, a "
                            "tag or a commit hash (letters, digits and . _ / + -, not starting with '-', no '..'), "
                            "optionally followed by ~N or ^ (e.g. main~20..main).") from None
    return parts[0], parts[1]


_ANCESTRY = re.compile(r"(?:[~^][0-9]*)+\Z")  # \Z: $ would also match before a final newline


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


def export(history: History, commit: str, trees: Path, submodules: Mapping[str, Path] | None = None) -> Path:
    """The tree of ``commit`` in ``trees/<commit>`` (``export_tree``); each of its gitlinks named in ``submodules``
    (path -> a repository holding it, ``--submodule``) exported into it from that repository."""
    treeish = f"{commit}:{history.subdir}" if history.subdir else commit
    return export_tree(history.checkout, treeish, commit, trees, submodules or {})


def export_tree(repo: Path, treeish: str, commit: str, trees: Path,
                submodules: Mapping[str, Path] | None = None) -> Path:
    """The tree of ``treeish`` of ``repo`` in ``trees/<commit>``, exported afresh at each call (what is there is
    replaced, never trusted) exactly as a checkout of it has it: its blobs' bytes, no attribute applied (a UserError
    when git cannot list or read it, or an entry is refused). A staging dir of the same commit that a killed run
    left (its marker names a process no longer alive) is removed first."""
    dest = trees / commit
    trees.mkdir(parents=True, exist_ok=True)
    _drop_abandoned(trees, commit)
    staging = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=trees))
    try:
        (staging / STAGING_MARK).write_text(json.dumps({"commit": commit, "pid": os.getpid()}) + "\n")
        links = _write_tree(repo, treeish, staging, commit)
        for path, sub in sorted(links.items()):
            if path in (submodules or {}):
                _has_commit((submodules or {})[path], sub, path, commit)
                _write_tree((submodules or {})[path], sub, staging, sub, under=path)
        (staging / "tree" / MARKER).write_text(json.dumps({"commit": commit, "tree": treeish}) + "\n")
        if dest.exists() or dest.is_symlink():
            dest.rename(staging / "old")  # the old tree (or whatever is there) goes with staging
        with contextlib.suppress(OSError):  # another run put it in place first: theirs is as good
            (staging / "tree").rename(dest)
        if dest.is_symlink() or not (dest / MARKER).is_file():
            raise UserError(f"The export of commit {commit[:12]} could not be put in place at {dest}.")
        return dest
    except OSError as exc:
        raise UserError(f"The export of commit {commit[:12]} could not be written under {trees} "
                        f"({exc.filename or ''}: {exc.strerror or exc}).") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def has_commit(repo: Path, sha: str) -> bool:
    """Whether ``repo`` holds ``sha`` as a commit (an annotated tag's id peels to one)."""
    res = safegit.run_git(repo, "cat-file", "-t", "--end-of-options", f"{sha}^{{commit}}", timeout=30)
    return res.ok and res.stdout.strip() == "commit"


def _has_commit(repo: Path, sub: str, path: str, commit: str) -> None:
    if not has_commit(repo, sub):
        raise InputMissing(f"--submodule {path}={repo}: {repo} has no commit {sub[:12]}, the one commit "
                           f"{commit[:12]} records for {path}. Fetch it there (`git -C {repo} fetch origin {sub}`) "
                           "or name a clone that has it; no commit's result was recorded.")


def export_of(d: Path) -> str | None:
    """The commit the export ``d``'s marker names (None: no export, a link, a marker that is no small JSON)."""
    mark = d / MARKER
    try:
        if d.is_symlink() or mark.is_symlink() or not mark.is_file() or mark.stat().st_size > 4096:
            return None
        data = json.loads(mark.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    commit = data.get("commit") if isinstance(data, dict) else None
    return commit if isinstance(commit, str) and commit == d.name else None


def staging_pid(d: Path) -> int | None:
    """The process that made the export staging dir ``d`` (its ``STAGING_MARK``), or None when ``d`` has none."""
    try:
        if d.is_symlink() or (d / STAGING_MARK).is_symlink():
            return None
        data = json.loads((d / STAGING_MARK).read_text(encoding="utf-8"))
        pid = data.get("pid") if isinstance(data, dict) else None
        return pid if isinstance(pid, int) and not isinstance(pid, bool) else 0
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, someone else's
    return True


def _drop_abandoned(trees: Path, commit: str) -> None:
    for d in trees.glob(f".{commit[:12]}-*"):
        pid = staging_pid(d)
        if pid is not None and not _alive(pid) and d.is_dir():
            shutil.rmtree(d, ignore_errors=True)


def _write_tree(checkout: Path, treeish: str, staging: Path, commit: str, under: str = "") -> dict[str, str]:
    """``treeish``'s files under ``staging/tree`` (``/under``: a submodule's place): listed with ``git ls-tree``,
    every entry checked before any is written, blobs streamed raw from ``git cat-file --batch``, links made last.
    Returns its gitlinks (path -> commit), which it leaves out."""
    what = f"the export of commit {commit[:12]}"
    res = safegit.run_git(checkout, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", treeish, timeout=600)
    if not res.ok:
        raise UserError(f"git cannot export commit {commit[:12]} ({res.output or 'no output'}).")
    entries, gitlinks = _entries(res.stdout, what)
    links = [e for e in entries if e[0] == "120000"]
    files = [e for e in entries if e[0] != "120000"]
    listing = staging / f"objects{'-' + commit if under else ''}.txt"
    listing.write_text("".join(f"{e[1]}\n" for e in [*links, *files]))
    dest = staging / "tree" / under if under else staging / "tree"
    dest.mkdir(parents=True, exist_ok=bool(under))
    written = [0]
    targets: dict[str, str] = {}
    with listing.open("rb") as names:
        child = safegit.stream(checkout, "cat-file", "--batch", stdin=names)
        try:
            assert child.stdout is not None
            for _, sha, name in links:
                targets[name] = _read_link(child.stdout, sha, name, what)
            _check_links(targets, {e[2] for e in entries} | set(gitlinks), what)
            for mode, sha, name in files:
                _write_blob(child.stdout, sha, dest, name, mode, what, written)
        finally:
            end(child)
            if child.stdout is not None:
                child.stdout.close()
    for name, target in targets.items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).symlink_to(target)
    return gitlinks


def _refused(what: str, name: str, problem: str) -> UserError:
    return UserError(f"Refusing to extract {what}: its entry {name!r} {problem}. The archive is not trustworthy; "
                     "nothing of it was used.")


MAX_ENTRIES = 500_000  # files and links of one export (Triton's tree has about 5,000)
MAX_BYTES = 8 << 30  # the bytes of one export's blobs


def _entries(listing: str, what: str) -> tuple[list[tuple[str, str, str]], dict[str, str]]:
    """``git ls-tree -r -z`` output as (mode, blob, path), and the gitlinks (submodules: path -> commit) apart (git
    archive left them out); a path or mode a checkout could not hold safely is refused, as is a listing of more
    than ``MAX_ENTRIES``."""
    out: list[tuple[str, str, str]] = []
    gitlinks: dict[str, str] = {}
    seen: set[str] = set()
    for record in listing.split("\0"):
        if not record:
            continue
        meta, _, name = record.partition("\t")
        mode, kind, sha = [*meta.split(" "), "", ""][:3]
        parts = name.split("/")
        problem = None
        if len(seen) >= MAX_ENTRIES:
            problem = f"is one more than the {MAX_ENTRIES} entries an export may have"
        elif "\ufffd" in name or any(not ch.isprintable() for ch in name):
            problem = "is not a UTF-8 name of printable characters"
        elif name.startswith("/") or not name:
            problem = "is an absolute path"
        elif ".." in parts or "." in parts or "" in parts:
            problem = "contains '..'"
        elif any(p.lower() == ".git" for p in parts):
            problem = "is inside a .git directory"
        elif mode == "160000" and kind == "commit" and len(sha) == 40 and name not in gitlinks:
            gitlinks[name] = sha
            continue
        elif kind != "blob" or not (mode == "120000" or (mode.startswith("100") and len(mode) == 6)):
            problem = f"is a {kind or 'thing'} of mode {mode!r}, not a file or a link"
        elif name in seen:
            problem = "appears twice"
        if problem:
            raise _refused(what, name, problem)
        seen.add(name)
        out.append((mode, sha, name))
    inside = [n for n in seen if any(n.startswith(g + "/") for g in gitlinks)] if gitlinks else []
    if inside:
        raise _refused(what, inside[0], "lies inside a submodule's place")
    return out, gitlinks


def _header(out: IO[bytes], sha: str, name: str, what: str) -> int:
    line = out.readline().decode("ascii", "replace").split()
    if len(line) != 3 or line[0] != sha or line[1] != "blob" or not (line[2].isascii() and line[2].isdigit()):
        got = " ".join(line[1:]) or "missing"
        raise UserError(f"git cannot read {what}: the blob of {name!r} ({sha[:12]}) is {got}.")
    return int(line[2])


def _read_link(out: IO[bytes], sha: str, name: str, what: str) -> str:
    size = _header(out, sha, name, what)
    raw = out.read(size)
    out.read(1)
    try:
        target = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _refused(what, name, "is a symlink whose target is not UTF-8") from None
    if size > 4096 or "\0" in target or not target:
        raise _refused(what, name, "is a symlink with an unusable target")
    return target


def _check_links(targets: dict[str, str], names: set[str], what: str) -> None:
    """The rules the tar check applied: no entry below a link, no link through another, none leaving the tree."""
    links = set(targets)
    for name in sorted(names):
        if any(str(parent) in links for parent in PurePosixPath(name).parents):
            raise _refused(what, name, "lies below a link of the archive")
    for name, target in targets.items():
        cur = PurePosixPath(name).parent
        through = False
        for part in PurePosixPath(target).parts:
            cur = cur.parent if part == ".." else cur / part
            through = through or str(cur) in links
        if through:
            raise _refused(what, name, f"is a symlink through another link of the archive ({target})")
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
        if target.startswith("/") or resolved == ".." or resolved.startswith("../"):
            raise _refused(what, name, f"is a symlink escaping the archive ({target})")


def _write_blob(out: IO[bytes], sha: str, dest: Path, name: str, mode: str, what: str, written: list[int]) -> None:
    """One blob's bytes, raw, into a new file (never through a link); the exec bit as its mode says; ``written``:
    the export's bytes so far, capped at ``MAX_BYTES``."""
    left = _header(out, sha, name, what)
    written[0] += left
    if written[0] > MAX_BYTES:
        raise _refused(what, name, f"takes the export past {MAX_BYTES >> 30} GiB")
    path = dest / name
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if int(mode, 8) & 0o111 else 0o644)
    with os.fdopen(fd, "wb") as f:
        while left:
            chunk = out.read(min(left, 1 << 20))
            if not chunk:
                raise UserError(f"git stopped in the middle of {what} (at {name!r}).")
            f.write(chunk)
            left -= len(chunk)
    out.read(1)


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
        return _system_llvm()
    prefix = Path(given) if Path(given).is_absolute() else cwd / given
    found = probe(prefix, found_by="--llvm")
    if not found.runs or not found.version:
        raise UserError(f"--llvm {prefix} is not a usable LLVM prefix ({found.error or 'no version'}): `llvm "
                        "compat` answers for one LLVM. Give the prefix that holds bin/llvm-config, e.g. "
                        "/usr/lib/llvm-22.")
    return found


def _system_llvm() -> LLVMInstall:
    """``--llvm system`` as `plan` reads it: the newest installed LLVM with MLIR (Debian's default llvm-config on
    PATH is often an older LLVM without it, which every commit would "fail" for)."""
    found = [probe(Path(p), found_by=how) for p, how in system_prefixes()]
    usable = [f for f in found if f.runs and f.version and f.has_mlir]
    if not usable:
        seen = ", ".join(f"{f.prefix} ({f.version or 'no version'}, {'MLIR' if f.has_mlir else 'no MLIR'})"
                         for f in found) or "none"
        raise UserError(f"--llvm system: no LLVM installed system-wide has MLIR (found: {seen}). Install one "
                        "(Debian: llvm-22-dev libmlir-22-dev mlir-22-tools), or give a prefix with --llvm PREFIX.")
    return max(usable, key=lambda f: tuple(int(x) for x in re.findall(r"\d+", f.version or "")[:3]))
