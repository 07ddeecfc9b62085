"""What this host knows about the things a wheel is made of, for its SBOM (edge: runs dpkg-query, git and the
tools' ``--version``, reads a binding library's CMake version file).

Every answer may be missing (not a Debian host, a tool that does not run): the SBOM then says less, never wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.redact import redact_text
from tritonbuild.system import probememo, proc, safegit
from tritonbuild.system.fileutil import read_text


@dataclass(frozen=True)
class DebPackage:
    """An installed distribution package: name, version and architecture as dpkg knows them."""

    name: str
    version: str
    arch: str
    distro: str = "debian"  # the purl namespace (/etc/os-release's ID)


def distro() -> str:
    """The distribution's ID (``debian``, ``ubuntu``) from /etc/os-release; ``debian`` when unreadable."""
    text = read_text(Path("/etc/os-release"))
    found = re.search(r'^ID="?([a-z0-9._-]+)"?\s*$', text, re.M)
    return found.group(1) if found else "debian"


def owners(paths: Sequence[str]) -> dict[str, str]:
    """The package that installed each of ``paths`` (``dpkg-query -S``), for those a package owns; the others are
    left out (not a Debian host: none)."""
    if not paths:
        return {}
    res = proc.run(["dpkg-query", "-S", "--", *paths], timeout=60)
    found: dict[str, str] = {}
    for line in res.stdout.splitlines():
        if line.startswith(("diversion by", "local diversion")) or ": " not in line:
            continue
        pkgs, _, path = line.partition(": ")
        first = pkgs.split(",")[0].strip()
        if path in paths and first:
            found.setdefault(path, first)
    return found


def installed(names: Iterable[str], namespace: str = "debian") -> dict[str, DebPackage]:
    """Each of ``names`` (``llvm-22-dev``, ``libzstd1:amd64``) that dpkg has installed, with its version."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    res = proc.run(["dpkg-query", "-W", "-f", "${binary:Package}\t${Package}\t${Version}\t${Architecture}\n", "--",
                    *wanted], timeout=60)
    found: dict[str, DebPackage] = {}
    for line in res.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 4 and parts[2]:
            pkg = DebPackage(parts[1], parts[2], parts[3], namespace)
            for key in (parts[0], parts[1]):
                if key in wanted:
                    found[key] = pkg
    return found


# What decides dpkg's answers: its database (rewritten by every install and removal), its diversions, the distro
DPKG_FILES = ("/var/lib/dpkg/status", "/var/lib/dpkg/diversions", "/etc/os-release")


def packages_of(paths: Sequence[str]) -> dict[str, DebPackage]:
    """The installed package that owns each of ``paths``, with its version (paths no package owns: left out).
    Remembered (``probememo``, kind ``dpkg``) under the stat of dpkg's database and of the paths: a rebuild's
    SBOM runs no dpkg-query while nothing was installed, removed or replaced."""
    wanted = list(dict.fromkeys(paths))
    if not wanted:
        return {}
    key = {"paths": wanted, "files": probememo.files_key([*DPKG_FILES, *wanted])}
    memo = probememo.recall("dpkg", key, lambda v: _dpkg_memo(v, wanted))
    if memo is not None:
        return {path: DebPackage(*row) for path, row in memo.items()}
    own = owners(wanted)
    pkgs = installed(own.values(), distro()) if own else {}
    found = {path: pkgs[name] for path, name in own.items() if name in pkgs}
    probememo.remember("dpkg", key, {path: [p.name, p.version, p.arch, p.distro] for path, p in found.items()})
    return found


def _dpkg_memo(value: object, wanted: Sequence[str]) -> bool:
    """A remembered answer's shape: each of ``wanted`` at most once, with four short strings."""
    return isinstance(value, dict) and set(value) <= set(wanted) and all(
        isinstance(row, list) and len(row) == 4 and all(isinstance(x, str) and 0 < len(x) <= 200 for x in row)
        for row in value.values())


_VERSION = re.compile(r'set\s*\(\s*PACKAGE_VERSION\s+"?([0-9][0-9A-Za-z.+-]*)"?\s*\)')


def binding_version(cmake_dir: str | None) -> str | None:
    """The version of pybind11 or nanobind whose CMake dir the build used (``PACKAGE_VERSION`` of its
    ``*ConfigVersion.cmake`` / ``*-config-version.cmake``), or None."""
    if not cmake_dir or not Path(cmake_dir).is_dir():
        return None
    for path in sorted(Path(cmake_dir).iterdir()):
        if path.name.lower().replace("-", "").endswith("configversion.cmake"):
            found = _VERSION.search(read_text(path))
            if found:
                return found.group(1)
    return None


def version_line(path: str | None) -> str | None:
    """The first line of ``PATH --version``, or None when it does not run."""
    if not path:
        return None
    out = proc.run([path, "--version"], timeout=30)
    if not out.ok:
        return None
    lines = [line.strip() for line in (out.stdout or out.stderr).splitlines() if line.strip()]
    return lines[0][:200] if lines else None


def repository_url(checkout: str) -> str | None:
    """The ``origin`` remote of the checkout when it is a network URL (secrets redacted); a local path names this
    machine, not where the source came from."""
    res = safegit.run_git(Path(checkout), "remote", "get-url", "origin", timeout=30)
    url = res.stdout.strip() if res.ok else ""
    if not re.match(r"^(https?|ssh|git)://|^[\w.-]+@[\w.-]+:", url) or any(c.isspace() for c in url):
        return None
    return redact_text(url)


# What a licence text says, as the SPDX identifier an SBOM carries: each known text's own phrases, all of them
_LICENCES = (
    ("Apache-2.0 WITH LLVM-exception", ("apache license", "version 2.0", "llvm exceptions to the apache 2.0 license")),
    ("Apache-2.0", ("apache license", "version 2.0", "terms and conditions for use, reproduction")),
    ("MIT", ("permission is hereby granted, free of charge", "the above copyright notice and this permission notice")),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "neither the name")),
)


def source_licence(root: str) -> str | None:
    """The SPDX identifier of the source's ``LICENSE`` file (Triton and its forks: MIT), or None when there is none
    or its text is not one of the licences known here (the SBOM then says nothing rather than guess)."""
    text = " ".join(read_text(Path(root) / "LICENSE", 1 << 16).lower().split())
    return next((spdx for spdx, phrases in _LICENCES if all(p in text for p in phrases)), None)
