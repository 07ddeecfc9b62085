"""Git facts of a directory, and a source or plugin given as a URL checked out in the cache (edge: runs ``git``,
always through ``safegit``)."""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from tritonbuild.errors import UserError
from tritonbuild.resolve.source import GitState
from tritonbuild.settings.model import parse_epoch
from tritonbuild.system import probememo, safegit
from tritonbuild.system.proc import Result


def git_state(path: Path) -> GitState | None:
    """Commit, dirty flag, branch and commit time of the checkout at ``path`` (None when not a checkout). Only
    a directory with its own ``.git`` is one (a directory inside another checkout is not): a plain directory runs
    no git, so a source without ``.git`` builds where git is not installed (a minimal ``--container`` image)."""
    if not path.is_dir() or not (path / ".git").exists():
        return None
    git = safegit.session(path)

    def out(*args: str) -> str | None:
        res = git(*args, timeout=30)
        return res.stdout.strip() if res.ok else None

    # one rev-parse for the top level, the commit and the branch (a run each was three processes on every plan)
    parsed = (out("rev-parse", "--show-toplevel", "HEAD", "--abbrev-ref", "HEAD") or "").splitlines()
    if len(parsed) != 3 or Path(parsed[0]).resolve() != path.resolve() or not parsed[1]:
        return None
    _, commit, branch = parsed
    # no optional lock (the index is not rewritten), filters neutralised (a clean filter runs on stat-dirty files);
    # a submodule's own work tree is not entered (only its commit is compared)
    status = out("status", "--porcelain", "--untracked-files=no", "--ignore-submodules=dirty")
    when, gitlinks = _commit_facts(path, commit, out)
    return GitState(
        commit=commit,
        dirty=bool(status),
        branch=branch if branch and branch != "HEAD" else None,
        commit_time=parse_epoch(when or ""),
        submodules=submodules(gitlinks),
    )


def _commit_facts(path: Path, commit: str, out: Callable[..., str | None]) -> tuple[str | None, str]:
    """The commit time and ``ls-tree`` of ``commit``: what its object says, the same in every clone, so they are
    remembered by its hash, unless the repository may replace objects (``refs/replace``, grafts: the same hash
    then reads as another commit, so git runs)."""
    key = {"commit": commit} if _COMMIT.fullmatch(commit) and not _replaces(path / ".git") else None
    memo = probememo.recall("git-commit", key, _commit_memo) if key else None
    if memo is not None:
        return memo[0], memo[1]
    when, listing = out("show", "-s", "--format=%ct", "HEAD"), out("ls-tree", "HEAD")
    if key and when is not None and listing is not None:
        probememo.remember("git-commit", key, [when, listing])
    return when, listing or ""


_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _commit_memo(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and isinstance(value[0], str) and value[0].isdigit() and \
        isinstance(value[1], str)


def _replaces(git_dir: Path) -> bool:
    """Whether the repository at ``git_dir`` may read a commit's hash as another object: it has replace refs or
    grafts, or is no plain directory (a worktree's or submodule's ``.git`` file points elsewhere), or its packed
    refs cannot be read or are too large to look through."""
    if not git_dir.is_dir() or git_dir.is_symlink():
        return True
    if (git_dir / "refs" / "replace").exists() or (git_dir / "info" / "grafts").exists():
        return True
    packed = git_dir / "packed-refs"
    try:
        if packed.exists() and (packed.stat().st_size > 4 << 20 or b" refs/replace/" in packed.read_bytes()):
            return True
    except OSError:
        return True
    return False


def submodules(ls_tree: str) -> tuple[tuple[str, str], ...]:
    """The gitlinks (mode 160000) of ``git ls-tree`` output: ``(path, commit)``."""
    found = []
    for line in ls_tree.splitlines():
        meta, _, name = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == "160000" and parts[1] == "commit":
            found.append((name, parts[2]))
    return tuple(found)


_URL = re.compile(r"^(https?://|git@|ssh://|git://|file://)|\.git\Z|^[A-Za-z0-9+.-]*::")


def is_git_url(text: str) -> bool:
    """Whether ``text`` is meant as a URL (a remote helper's ``transport::address`` too: ``checkout_url``
    refuses those, so they never pass for a path)."""
    return bool(_URL.search(text))


class OfflineMissing(UserError):
    """Offline, and the URL at that ref is not in the source cache."""


def cache_dir(url: str, cache_root: Path) -> Path:
    """Where the clone of ``url`` lives in the source cache."""
    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))
    return cache_root / "sources" / f"{name}-{key}"


def checkout_url(url: str, ref: str | None, cache_root: Path, *, offline: bool = False,
                 given_as: str = "--source") -> Path:
    """Clone ``url`` into the source cache (once), fetch only when ``ref`` is missing, check ``ref`` out.
    Offline nothing is cloned or fetched: a cached clone that has ``ref`` is used, else ``OfflineMissing``."""
    safegit.check_url(url, given_as)
    if ref:
        safegit.check_ref(ref, f"The ref of {url}:")
    dest = cache_dir(url, cache_root)
    if not (dest / ".git").is_dir():
        if offline:
            raise OfflineMissing(_offline_text(url, ref, dest, given_as, cloned=False))
        _clone(url, ref, dest)
    commit = _commit_of(safegit.session(dest), ref)
    if commit is None and offline:
        raise OfflineMissing(_offline_text(url, ref, dest, given_as, cloned=True))
    if commit is None:
        commit = _fetch(dest, url, ref)
    res = safegit.run_git(dest, "checkout", "--quiet", "--detach", "--force", commit, timeout=600)
    if not res.ok:
        _fail(url, ref, res.output)
    return dest


def _clone(url: str, ref: str | None, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    res = safegit.run_clone(url, tmp)
    if not res.ok:
        shutil.rmtree(tmp, ignore_errors=True)
        _fail(url, ref, res.output)
    tmp.rename(dest)


def _commit_of(git: Callable[..., Result], ref: str | None) -> str | None:
    """The commit ``ref`` names in the clone (a branch, tag or commit; a remote branch; one fetched before),
    or the remote's default branch for no ref."""
    names = [ref, f"refs/remotes/origin/{ref}", f"refs/tritonbuild/{ref}"] if ref else ["refs/remotes/origin/HEAD",
                                                                                      "HEAD"]
    for name in names:
        res = git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}", timeout=30)
        if res.ok and res.stdout.strip():
            return res.stdout.strip()
    return None


def _fetch(dest: Path, url: str, ref: str | None) -> str:
    """Fetch ``ref`` from ``url`` (not from the clone's config) and keep it as refs/tritonbuild/REF."""
    res = safegit.run_git(dest, "fetch", "--quiet", "--no-tags", "--end-of-options", url, ref or "HEAD",
                          timeout=3600, fetch=True)
    git = safegit.session(dest)
    commit = _commit_of(git, "FETCH_HEAD") if res.ok else None
    if commit is None:
        _fail(url, ref, res.output)
    if ref:
        git("update-ref", f"refs/tritonbuild/{ref}", commit, timeout=30)
    return commit


def _fail(url: str, ref: str | None, output: str) -> NoReturn:
    raise UserError(
        f"Could not get {url} at ref {ref or '(default branch)'}: {output.strip() or 'git failed'}. Check the URL "
        "and --ref, and that this machine can reach it."
    )


def _offline_text(url: str, ref: str | None, dest: Path, given_as: str, *, cloned: bool) -> str:
    what = f"{url} at {ref}" if ref else url
    why = f"its clone {dest} does not have {ref}" if cloned else f"it is not in tritonbuild's source cache ({dest})"
    clone = f"git clone {url} DIR" + (f" && git -C DIR checkout {ref}" if ref else "")
    return (f"Offline (--offline/TRITON_OFFLINE_BUILD), and {what} would need a clone or a fetch: {why}, and "
            f"tritonbuild neither clones nor fetches offline. Clone it yourself ({clone}) and pass the directory "
            f"({given_as} DIR), or drop --offline.")
