"""Git submodules the source declares and its checkout lacks, supplied from a repository on this machine (edge: runs
git through ``safegit``, writes exports under ``<cache>/submodules``).

``--submodule PATH=REPO`` (triton-cpu's ``third_party/sleef``): PATH must be a submodule of the source's
``.gitmodules`` and a gitlink of the checkout's index; REPO (a clone or a mirror, bare or not: input the user did
not write) must hold the commit that gitlink records, as a commit. Nothing is fetched. That commit's tree is
exported from REPO as ``llvm compat`` exports a commit (``commits.export``: every entry checked, blobs raw, caps
on entries and bytes) into ``<cache>/submodules/<commit>``, and the patched copy of the source
(``gather.patches``) carries it at PATH: the checkout is never written. A submodule the checkout has checked out is
its own; a PATH given for it is left unused (the caller says so).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.gather import commits
from tritonbuild.plan import PatchInfo
from tritonbuild.resolve.source import parse_gitmodules
from tritonbuild.settings.model import split_submodule
from tritonbuild.system import safegit
from tritonbuild.system.fileutil import read_checked

_HEX = frozenset("0123456789abcdef")


def checked_out(root: Path, sub: str) -> bool:
    """Whether the checkout has the submodule's files at ``sub``: a directory with something in it. A file or a
    link there is refused (``place_problem``)."""
    path = root / sub
    return path.is_dir() and not path.is_symlink() and any(path.iterdir())


def place_problem(root: Path, sub: str) -> str | None:
    """What stands at ``sub`` in the checkout that no export may replace: a link (a manual workaround: the link
    is the checkout's own submodule) or a file."""
    path = root / sub
    if path.is_symlink():
        return f"is a link (to {os.readlink(path)})"
    if path.exists() and not path.is_dir():
        return "is a file"
    return None


def recorded(checkout: Path, sub: str) -> str:
    """The commit the checkout's index records for the submodule at ``sub`` (what ``git submodule update`` checks
    out); a UserError when the checkout is no git checkout or ``sub`` is no gitlink there."""
    if not (checkout / ".git").exists():
        raise UserError(f"--submodule {sub}=...: the source {checkout} is not a git checkout, so the commit of its "
                        f"submodule {sub} cannot be read. Check out the submodule there instead.")
    res = safegit.run_git(checkout, "ls-files", "-s", "-z", "--", f":(literal){sub}", timeout=30)
    entries = [e for e in res.stdout.split("\0") if e] if res.ok else []
    head, _, name = entries[0].partition("\t") if len(entries) == 1 else ("", "", "")
    meta = head.split()
    if name != sub or len(meta) != 3 or meta[0] != "160000" or len(meta[1]) != 40 or not set(meta[1]) <= _HEX:
        raise UserError(f"--submodule {sub}=...: the checkout {checkout} records no submodule commit at {sub} "
                        "(its index has no gitlink there). Name the path of a submodule the checkout records, or "
                        "drop --submodule.")
    return meta[1]


def check_repo(repo: Path, sub: str, origin: str) -> None:
    """REPO is a git repository that is no partial clone (a read there would fetch missing objects on demand)."""
    if not repo.is_dir():
        raise UserError(f"--submodule {sub}={repo} (from {origin}): {repo} is not a directory. Name a clone or a "
                        "mirror of the submodule's repository.")
    git = safegit.session(repo)
    res = git("rev-parse", "--git-dir", timeout=30)
    if not res.ok:
        raise UserError(f"--submodule {sub}={repo} (from {origin}): {repo} is not a git repository. Name a clone "
                        "or a mirror of the submodule's repository (a bare one will do).")
    remotes = safegit.promisors(safegit.read_config(repo))
    if remotes:
        raise UserError(f"--submodule {sub}={repo} (from {origin}): {repo} is a partial clone (its objects come on "
                        f"demand from {', '.join(remotes)}), and reading it would fetch. Give a full clone or "
                        f"mirror (`git clone --mirror`), or fetch every object into it first.")


def _repo_has(repo: Path, commit: str, sub: str, origin: str) -> None:
    check_repo(repo, sub, origin)
    if not commits.has_commit(repo, commit):
        raise UserError(f"--submodule {sub}={repo} (from {origin}): {repo} has no commit {commit[:12]}, the one the "
                        f"source records for {sub}. Fetch it there (`git -C {repo} fetch origin {commit}`) or name "
                        "another clone; nothing was built.")


def supply(checkout: Path, given: Sequence[str], origin: str, cwd: Path, cache: Path,
           warn: Callable[[str], None]) -> dict[str, tuple[str, Path]]:
    """By submodule path: (its commit, the export of that commit) for each ``PATH=REPO`` whose PATH the checkout
    lacks; every entry checked before anything is exported."""
    declared = parse_gitmodules(read_checked(checkout / ".gitmodules", checkout, "the source's submodule list") or "")
    wanted: dict[str, tuple[str, Path]] = {}
    for entry in given:
        sub, raw = split_submodule(entry)
        if (problem := place_problem(checkout, sub)) is not None:
            raise UserError(f"--submodule {entry} (from {origin}): {sub} in the checkout {checkout} {problem}, where "
                            "the submodule's files would go. Leave an empty directory there (as a clone without "
                            "`git submodule update` has it) to use --submodule, or drop --submodule to build what "
                            "is there.")
        if sub not in declared:
            have = ", ".join(declared) or "none"
            raise UserError(f"--submodule {entry} (from {origin}): {sub} is not a submodule of the source "
                            f"{checkout} (its .gitmodules names: {have}).")
        if checked_out(checkout, sub):
            if (checkout / commits.MARKER).is_file():  # an llvm compat export: it filled the place from REPO
                continue
            warn(f"the submodule {sub} is checked out in {checkout}: that is what builds; --submodule {entry} "
                 "is not used")
            continue
        repo = cwd / Path(raw).expanduser()
        commit = recorded(checkout, sub)
        _repo_has(repo, commit, sub, origin)
        wanted[sub] = (commit, repo)
    return {sub: (commit, export(repo, commit, cache)) for sub, (commit, repo) in wanted.items()}


def export(repo: Path, commit: str, cache: Path) -> Path:
    """``commit`` of ``repo`` in ``<cache>/submodules/<commit>``: an export made earlier is used when its marker
    names that commit (an export is the commit's tree, which its id fixes), else it is made afresh."""
    dest = cache / "submodules" / commit
    if dest.is_dir() and not dest.is_symlink() and commits.export_of(dest) == commit:
        return dest
    return commits.export_tree(repo, commit, commit, cache / "submodules")


def patch_check(subs: Iterable[str]) -> Callable[[Sequence[PatchInfo]], None]:
    """A refusal of a source patch that touches a supplied submodule's files: the patches are applied to the
    checkout's files before the export joins them, so such a patch could only fail or be overwritten."""
    places = tuple(subs)

    def check(infos: Sequence[PatchInfo]) -> None:
        for info in infos:
            inside = [f for f in info.files if any(f == p or f.startswith(p + "/") for p in places)]
            if inside:
                raise UserError(f"The patch {info.path} changes {inside[0]!r}, a file of the submodule that "
                                "--submodule supplies: patches apply to the checkout's own files, and the "
                                "submodule's come from its clone. Commit the change in the clone (and record that "
                                "commit in the checkout), or check the submodule out and patch it there.")
    return check
