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

from collections.abc import Callable, Sequence
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.gather import commits
from tritonbuild.resolve.source import parse_gitmodules
from tritonbuild.settings.model import split_submodule
from tritonbuild.system import safegit
from tritonbuild.system.fileutil import read_checked

_HEX = frozenset("0123456789abcdef")


def checked_out(root: Path, sub: str) -> bool:
    path = root / sub
    return path.is_dir() and not path.is_symlink() and any(path.iterdir())


def recorded(checkout: Path, sub: str) -> str:
    """The commit the checkout's index records for the submodule at ``sub`` (what ``git submodule update`` checks
    out); a UserError when the checkout is no git checkout or ``sub`` is no gitlink there."""
    if not (checkout / ".git").exists():
        raise UserError(f"--submodule {sub}=...: the source {checkout} is not a git checkout, so the commit of its "
                        f"submodule {sub} cannot be read. Check out the submodule there instead.")
    res = safegit.run_git(checkout, "ls-files", "-s", "-z", "--", sub, timeout=30)
    entries = [e for e in res.stdout.split("\0") if e] if res.ok else []
    meta = entries[0].partition("\t")[0].split() if len(entries) == 1 else []
    if len(meta) != 3 or meta[0] != "160000" or len(meta[1]) != 40 or not set(meta[1]) <= _HEX:
        raise UserError(f"--submodule {sub}=...: the checkout {checkout} records no submodule commit at {sub} "
                        f"(git ls-files -s: {res.output.strip()[:200] or 'nothing'}). Name the path of a submodule "
                        "as the source's .gitmodules does.")
    return meta[1]


def _repo_has(repo: Path, commit: str, sub: str, origin: str) -> None:
    if not repo.is_dir():
        raise UserError(f"--submodule {sub}={repo} (from {origin}): {repo} is not a directory. Name a clone or a "
                        "mirror of the submodule's repository.")
    res = safegit.run_git(repo, "cat-file", "-t", "--end-of-options", f"{commit}^{{commit}}", timeout=30)
    if not res.ok or res.stdout.strip() != "commit":
        raise UserError(f"--submodule {sub}={repo} (from {origin}): {repo} has no commit {commit[:12]}, the one the "
                        f"source records for {sub} ({res.output.strip()[:200] or 'no output'}). Fetch it there "
                        f"(`git -C {repo} fetch origin {commit}`) or name another clone; nothing was built.")


def supply(checkout: Path, given: Sequence[str], origin: str, cwd: Path, cache: Path,
           warn: Callable[[str], None]) -> dict[str, tuple[str, Path]]:
    """By submodule path: (its commit, the export of that commit) for each ``PATH=REPO`` whose PATH the checkout
    lacks; every entry checked before anything is exported."""
    declared = parse_gitmodules(read_checked(checkout / ".gitmodules", checkout, "the source's submodule list") or "")
    wanted: dict[str, tuple[str, Path]] = {}
    for entry in given:
        sub, raw = split_submodule(entry)
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
        repo = Path(raw) if Path(raw).is_absolute() else cwd / raw
        commit = recorded(checkout, sub)
        _repo_has(repo, commit, sub, origin)
        wanted[sub] = (commit, repo)
    return {sub: (commit, export(repo, commit, cache)) for sub, (commit, repo) in wanted.items()}


def export(repo: Path, commit: str, cache: Path) -> Path:
    """``commit`` of ``repo`` exported afresh into ``<cache>/submodules/<commit>``."""
    return commits.export_tree(repo, commit, commit, cache / "submodules")
