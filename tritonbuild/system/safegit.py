"""The one way tritonbuild runs git (edge): repository-local config that would run a program is neutralised.

A plugin or source directory is input the user did not write: its ``.git/config`` (and anything it includes)
could name a program for git to run (``core.fsmonitor``, a filter driver's ``clean`` that ``git status`` runs on a
stat-dirty file, a hook, a diff driver, an askpass or ssh command). Every git run goes through ``run_git``: it
reads the repository's effective config first (``git config --list`` runs nothing), and overrides, through
``GIT_CONFIG_COUNT``, every program-running key that comes from the repository's own files (scope ``local`` or
``worktree``: included files inherit their includer's scope). The system and the user's global config stay
trusted (their proxy, credentials, git-lfs). A run that is no fetch never fetches: a partial clone's promisor
remotes are pointed nowhere (``no_lazy_fetch``), so a missing object is an error, not a download that runs the
repository's upload-pack. Hooks are off, there is no pager, no prompt, no optional lock (a
``plan`` writes no index), and only the https, http, ssh, git and file protocols are allowed (``ext::`` never).
For a fetch, repository config that points the network elsewhere (credential helpers, ``url.*``, ``http.*``,
upload-pack, proxies) is refused: tritonbuild's own clones never have it.

URLs and refs given to clone and fetch are checked first (``check_url``, ``check_ref``): transports such as
``ext::`` and ``fd::``, and anything git could read as an option, are refused before git runs. Every pattern
matches the whole name (``fullmatch``: ``$`` would also match before a final newline). No argument git is given
(a ref, a range, a URL, a path) may hold a control character (``check_args``); only the ``-C`` directory may,
being the checkout the user named, which git takes as one argument and never reads as a name.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from tritonbuild.errors import UserError
from tritonbuild.system.proc import Result, run, start_bytes
from tritonbuild.urls import PROTOCOLS, url_problem

TRUSTED_SCOPES = frozenset({"system", "global", "command"})

# Always set: no hook, no fsmonitor, no pager, no signature check (gpg.program), no submodule followed, no
# automatic gc or maintenance after a fetch, only the protocols above.
BASE = (("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false"), ("core.pager", "cat"),
        ("log.showSignature", "false"), ("submodule.recurse", "false"), ("fetch.recurseSubmodules", "false"),
        ("gc.auto", "0"), ("maintenance.auto", "false"), ("protocol.allow", "never"),
        *((f"protocol.{p}.allow", "always") for p in PROTOCOLS))

# Program-running keys, by pattern (lowercase, as `git config --list` prints section and name), and the value that
# turns them off when the repository sets them ("" is none for these; empty textconv makes git fail, not run).
_NEUTRAL = ((re.compile(r"filter\..+\.(clean|smudge|process)"), ""), (re.compile(r"filter\..+\.required"), "false"),
            (re.compile(r"diff\..+\.(command|textconv)"), ""), (re.compile(r"diff\.external"), ""))
# Keys whose trusted value (system/global) is restored, or this default when there is none.
_RESTORE = {"core.askpass": "", "core.sshcommand": "ssh"}
# Repository keys that send a fetch elsewhere or run a program for it: refused for fetches.
_NETWORK = re.compile(r"(credential\..*|url\..*|http\..*|core\.gitproxy|core\.alternaterefscommand"
                      r"|remote\..+\.(uploadpack|receivepack|vcs|proxy))")

# Variables that would point git at another repository, index or work tree than the one asked about.
_DROP_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
             "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_EXTERNAL_DIFF", "GIT_CONFIG")

Entry = tuple[str, str, str]  # (scope, key, value)


def base_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every git run: no prompt, no pager, no optional lock, protocols only as allowed."""
    out = {k: v for k, v in (os.environ if env is None else env).items() if k not in _DROP_ENV}
    out.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", PAGER="cat", GIT_OPTIONAL_LOCKS="0",
               GIT_PROTOCOL_FROM_USER="0")
    return out


def with_config(env: Mapping[str, str], pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``env`` with ``pairs`` added as command-line config (``GIT_CONFIG_COUNT``, after any the caller set):
    keys pass whole, a subsection may hold ``=``, which ``-c`` would split at."""
    out = dict(env)
    count = out.get("GIT_CONFIG_COUNT", "")
    first = int(count) if count.isascii() and count.isdigit() else 0
    for i, (key, value) in enumerate(pairs, start=first):
        out[f"GIT_CONFIG_KEY_{i}"] = key
        out[f"GIT_CONFIG_VALUE_{i}"] = value
    out["GIT_CONFIG_COUNT"] = str(first + len(pairs))
    return out


def parse_config(listing: str) -> list[Entry]:
    """``git config --list --show-scope -z`` output: ``scope NUL key LF value NUL`` per entry."""
    parts = listing.split("\0")
    out = []
    for scope, item in zip(parts[0::2], parts[1::2], strict=False):
        key, _, value = item.partition("\n")
        out.append((scope, key, value))
    return out


def overrides(entries: Sequence[Entry]) -> list[tuple[str, str]]:
    """The config that turns off every program the repository's own config names (BASE first)."""
    trusted = {key.lower(): value for scope, key, value in entries if scope in TRUSTED_SCOPES}
    out: list[tuple[str, str]] = list(BASE)
    for scope, key, _ in entries:
        if scope in TRUSTED_SCOPES:
            continue
        low = key.lower()
        if low in _RESTORE:
            out.append((key, trusted.get(low, _RESTORE[low])))
            continue
        for pattern, value in _NEUTRAL:
            if pattern.fullmatch(low):
                out.append((key, value))
    return list(dict.fromkeys(out))


NO_REMOTE = "/nonexistent/tritonbuild-reads-never-fetch"  # where a read's lazy fetch is sent: it fails at once


def promisors(entries: Sequence[Entry]) -> list[str]:
    """The remotes a partial clone fetches missing objects from on demand (``extensions.partialClone``,
    ``remote.<name>.promisor``): a read (``cat-file``, ``ls-tree``) there would fetch, running the repository's own
    ``remote.<name>.uploadpack`` and reaching the network under --offline."""
    names = [v for _, k, v in entries if k.lower() == "extensions.partialclone" and v]
    names += [k[len("remote."):-len(".promisor")] for _, k, v in entries if k.lower().startswith("remote.")
              and k.lower().endswith(".promisor") and v.lower() in ("true", "yes", "on", "1")]
    return sorted(set(names))


def no_lazy_fetch(entries: Sequence[Entry]) -> list[tuple[str, str]]:
    """Config that turns a partial clone's on-demand fetch into a failure (git 2.44's GIT_NO_LAZY_FETCH is set too,
    but older git, Debian 12's 2.39, has no switch): each promisor remote's URL points nowhere, and its upload-pack
    is git's own."""
    return [pair for n in promisors(entries) for pair in ((f"remote.{n}.url", NO_REMOTE),
                                                          (f"remote.{n}.uploadpack", "git-upload-pack"))]


def network_keys(entries: Sequence[Entry]) -> list[str]:
    """The repository's own keys a fetch must not follow."""
    return [key for scope, key, _ in entries if scope not in TRUSTED_SCOPES and _NETWORK.fullmatch(key.lower())]


def read_config(path: Path, env: Mapping[str, str] | None = None) -> list[Entry]:
    """The effective config at ``path`` with each entry's scope (runs no program the config names)."""
    res = run(["git", "--no-pager", "-C", str(path), "config", "--list", "--show-scope", "-z"],
              env=base_env(env), timeout=30)
    if not res.ok:
        raise UserError(
            f"git cannot read the configuration of the repository at {path}: {res.output or 'no output'}. "
            "tritonbuild reads it before running git there (to turn off the programs it could name); fix or "
            "remove the repository's .git/config (and the files it includes), or pass a copy without .git."
        )
    return parse_config(res.stdout)


def session(path: Path, *, fetch: bool = False, env: Mapping[str, str] | None = None) -> Callable[..., Result]:
    """A runner of ``git -C path ARGS`` with the repository's program-running config neutralised (see the module
    text); the config is read once, here. ``fetch``: also refuse repository config that would redirect or
    authenticate a fetch."""
    entries = read_config(path, env)
    if fetch and (bad := network_keys(entries)):
        raise UserError(
            f"The repository at {path} has its own git config for fetching ({', '.join(sorted(set(bad)))}) that "
            "tritonbuild did not write: it does not fetch with it. If this is tritonbuild's cached clone, delete "
            f"it (rm -rf {path}) and run again; otherwise clone the repository yourself and pass its path."
        )
    reads = [] if fetch else no_lazy_fetch(entries)
    child_env = with_config(base_env(env) | ({} if fetch else {"GIT_NO_LAZY_FETCH": "1"}),
                            [*overrides(entries), *reads])

    def git(*args: str, timeout: float | None = 60) -> Result:
        return run(["git", "--no-pager", "-C", str(path), *check_args(args)], env=child_env, timeout=timeout)

    return git


def stream(path: Path, *args: str, stdin: IO[bytes]) -> subprocess.Popen[bytes]:
    """``git -C path ARGS`` hardened as ``session``'s, started with its stdout a binary pipe (``proc.start_bytes``:
    raw blobs, never decoded); the caller calls ``proc.end`` on every way out."""
    entries = read_config(path)
    env = with_config(base_env() | {"GIT_NO_LAZY_FETCH": "1"}, [*overrides(entries), *no_lazy_fetch(entries)])
    return start_bytes(["git", "--no-pager", "-C", str(path), *check_args(args)], stdin=stdin, env=env)


def run_git(path: Path, *args: str, timeout: float | None = 60, fetch: bool = False,
            env: Mapping[str, str] | None = None) -> Result:
    """One hardened ``git -C path ARGS`` (``session`` for several in the same repository)."""
    return session(path, fetch=fetch, env=env)(*args, timeout=timeout)


def run_clone(url: str, dest: Path, *, timeout: float = 3600, env: Mapping[str, str] | None = None) -> Result:
    """``git clone --no-checkout`` of a checked URL into ``dest`` (a new directory: no repository config yet)."""
    check_url(url, "the URL")
    return run(["git", "--no-pager", "clone", "--quiet", "--no-checkout", "--", *check_args((url, str(dest)))],
               cwd=dest.parent, env=with_config(base_env(env), BASE), timeout=timeout)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_args(args: Sequence[str]) -> Sequence[str]:
    """``args`` when none holds a control character (a newline, an escape, NUL ...), else a UserError naming it:
    no ref, range, URL or path tritonbuild gives git needs one, and a newline in a name can forge a line of
    git's output that tritonbuild reads."""
    for arg in args:
        if _CONTROL.search(arg):
            raise UserError(f"tritonbuild does not give git the argument {arg!r}: it holds a control character (a "
                            "newline, a tab, an escape). Give the name or path without it (rename a path that has "
                            "one).")
    return args


def check_url(url: str, given_as: str) -> None:
    """Refuse a URL git should not be given (UserError, exit 2) before any git runs."""
    if why := url_problem(url):
        raise UserError(
            f"{given_as} {url!r} is not a git URL tritonbuild clones: {why}. Give an https://, http://, ssh://, "
            "git:// or file:// URL (or user@host:path), or clone the repository yourself and pass its path."
        )


_REF = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/+-]*")  # fullmatch: no newline before the end


def check_ref(ref: str, given_as: str) -> None:
    """Refuse a ref that is not a plain branch, tag or commit name (an option, a refspec, a revision range)."""
    if not _REF.fullmatch(ref) or ".." in ref or "//" in ref or ref.endswith((".lock", "/", ".")):
        raise UserError(
            f"{given_as} {ref!r} is not a ref tritonbuild fetches: give a branch, a tag or a commit (letters, "
            "digits and . _ / + -, not starting with '-', no '..'), e.g. main, v3.4.0 or a commit hash."
        )
