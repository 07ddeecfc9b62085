"""Git facts of a directory (edge: runs ``git``), and cloning a source given as a URL (gitpython)."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.proc import run
from tritonbuild.resolve.source import GitState


def _git(path: Path, *args: str) -> str | None:
    proc = run(["git", "-C", str(path), *args], timeout=30)
    return proc.stdout.strip() if proc.ok else None


def git_state(path: Path) -> GitState | None:
    """Commit, dirty flag, branch and commit time of the checkout at ``path`` (None when not a checkout)."""
    top = _git(path, "rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != path.resolve():
        return None
    commit = _git(path, "rev-parse", "HEAD")
    if not commit:
        return None
    status = _git(path, "status", "--porcelain", "--untracked-files=no")
    branch = _git(path, "rev-parse", "--abbrev-ref", "HEAD")
    when = _git(path, "show", "-s", "--format=%ct", "HEAD")
    return GitState(
        commit=commit,
        dirty=bool(status),
        branch=branch if branch and branch != "HEAD" else None,
        commit_time=int(when) if when and when.isdigit() else None,
        submodules=submodules(_git(path, "ls-tree", "HEAD") or ""),
    )


def submodules(ls_tree: str) -> tuple[tuple[str, str], ...]:
    """The gitlinks (mode 160000) of ``git ls-tree`` output: ``(path, commit)``."""
    found = []
    for line in ls_tree.splitlines():
        meta, _, name = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == "160000" and parts[1] == "commit":
            found.append((name, parts[2]))
    return tuple(found)


_URL = re.compile(r"^(https?://|git@|ssh://|git://|file://)|\.git$")


def is_git_url(text: str) -> bool:
    return bool(_URL.search(text))


def checkout_url(url: str, ref: str | None, cache_root: Path) -> Path:
    """Clone ``url`` into the source cache (once), fetch only when ``ref`` is missing, check ``ref`` out."""
    import git  # gitpython: imported lazily, it is slow to import

    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))
    dest = cache_root / "sources" / f"{name}-{key}"
    try:
        if (dest / ".git").is_dir():
            repo = git.Repo(dest)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".partial")
            shutil.rmtree(tmp, ignore_errors=True)
            git.Repo.clone_from(url, tmp)
            tmp.rename(dest)
            repo = git.Repo(dest)
        if ref:
            try:
                repo.commit(ref)
            except (git.BadName, ValueError):
                repo.remotes.origin.fetch(ref)
                try:
                    repo.commit(ref)
                except (git.BadName, ValueError):
                    repo.commit("FETCH_HEAD")
                    ref = "FETCH_HEAD"
            repo.git.checkout("--detach", "--force", ref)
    except git.GitCommandError as exc:
        raise UserError(
            f"Could not get {url} at ref {ref or '(default branch)'}: {exc.stderr.strip() or exc}. Check the URL "
            "and --ref, and that this machine can reach it."
        ) from None
    return dest
