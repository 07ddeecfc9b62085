"""The backend list, read with LLVM_TARGETS_TO_BUILD semantics (pure).

``"nvidia;amd"`` or ``"nvidia,amd"``; ``all`` expands to every in-tree backend; names are exact
(case-sensitive); duplicates are dropped with a note; an unknown name is an error that lists the valid
names and suggests the closest one. Backends the source cannot drop are added back with a note, or
refused under ``strict``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tritonbuild.errors import UserError
from tritonbuild.settings.model import show

# LLVM targets each known backend needs (on top of libtriton's core: NVPTX, AMDGPU and the host).
# "host" stands for the machine's own target (X86, AArch64, PowerPC).
BACKEND_LLVM_TARGETS: dict[str, tuple[str, ...]] = {
    "nvidia": ("NVPTX",),
    "amd": ("AMDGPU",),
    "cpu": ("host",),
    "spirv": ("SPIRV",),
    "intel": ("SPIRV",),
}
CORE_LLVM_TARGETS: tuple[str, ...] = ("NVPTX", "AMDGPU", "host")


def in_tree_targets(name: str) -> tuple[tuple[str, ...], str | None]:
    """The LLVM targets in-tree backend ``name`` needs, from the one table above; for a backend the table lacks (a
    fork's new kind), none beyond the core, and a warning that says so and where to add it: an LLVM built or
    chosen without the backend's target would fail only when the backend compiles a kernel."""
    if name in BACKEND_LLVM_TARGETS:
        return BACKEND_LLVM_TARGETS[name], None
    return (), (f"tritonbuild does not know which LLVM targets the in-tree backend '{name}' needs, so the LLVM is "
                f"chosen for the core's ({', '.join(CORE_LLVM_TARGETS)}) only; if '{name}' generates code for another "
                "target, add it to BACKEND_LLVM_TARGETS in tritonbuild/resolve/backends.py (or build it as a plugin "
                "with a backend/llvm-targets.txt)")

_HOST_TARGET = {"x86_64": "X86", "amd64": "X86", "aarch64": "AArch64", "arm64": "AArch64", "ppc64le": "PowerPC"}


def host_llvm_target(machine: str) -> str:
    """The LLVM target name of a ``platform.machine()`` value."""
    try:
        return _HOST_TARGET[machine.lower()]
    except KeyError:
        raise UserError(
            f"tritonbuild does not know the LLVM target of this machine architecture ({machine!r}); "
            "Triton's CMake only links X86, AArch64 and PowerPC host code generators."
        ) from None


def expand_targets(targets: Sequence[str], machine: str) -> tuple[str, ...]:
    """Replace ``host``/``Native`` with the machine's target, drop duplicates, keep order."""
    out: list[str] = []
    for t in targets:
        name = host_llvm_target(machine) if t in ("host", "Native") else t
        if name not in out:
            out.append(name)
    return tuple(out)


@dataclass(frozen=True)
class Selection:
    names: tuple[str, ...]
    notes: tuple[str, ...] = ()


def split_list(text: str) -> list[str]:
    """Split a ``;`` or ``,`` separated list, dropping blanks."""
    return [part.strip() for part in re.split(r"[;,]", text) if part.strip()]


def closest(name: str, valid: Sequence[str]) -> str | None:
    lowered = {v.lower(): v for v in valid}
    if name.lower() in lowered:
        return lowered[name.lower()]
    matches = difflib.get_close_matches(name, list(valid), n=1, cutoff=0.5)
    return matches[0] if matches else None


def _suggestion(name: str, available: Sequence[str]) -> str:
    """What the user probably meant: the list's separators when the name holds a space, else the closest name."""
    if any(c.isspace() for c in name):
        words = [w for w in name.split() if w]
        return f" The list is separated by ';' or ',' (a space is not a separator): write {show(';'.join(words))}."
    hint = closest(name, available)
    return f" Did you mean {hint!r}?" if hint else ""


def select_backends(
    text: str,
    available: Sequence[str],
    required: Sequence[str] = (),
    *,
    strict: bool = False,
    where: str = "--backends",
) -> Selection:
    """Resolve a backend list against the in-tree backends ``available`` in a source."""
    items = split_list(text)
    if not items:
        raise UserError(
            f"The backend list from {where} is empty. Name at least one backend "
            f"({';'.join(available) or 'none found'}) or 'all'."
        )
    names: list[str] = []
    notes: list[str] = []
    for item in items:
        expanded = list(available) if item == "all" else [item]
        for name in expanded:
            if name not in available:
                valid = ", ".join(available) if available else "(this source has no in-tree backends)"
                raise UserError(
                    f"Unknown backend {show(name)} in {where}.{_suggestion(name, available)} This source's in-tree "
                    f"backends are: {valid}, or 'all'. Names are case-sensitive; external plugins are added with "
                    "--plugin-dir or TRITON_PLUGIN_DIRS, not here."
                )
            if name in names:
                if item != "all":
                    notes.append(f"backend {name!r} was listed more than once in {where}; kept once")
                continue
            names.append(name)
    missing = [r for r in required if r not in names]
    if missing:
        if strict:
            raise UserError(
                f"This source cannot build without the backend(s) {', '.join(missing)} (its core sources "
                f"include their headers), but {where} leaves them out and --strict is set. Add "
                f"{';'.join(missing)} to the list, or drop --strict to have them added back."
            )
        names.extend(missing)
        notes.append(
            f"added back {', '.join(missing)}: this source's core includes their headers, so it cannot be "
            "built without them (use --strict to make this an error)"
        )
    return Selection(tuple(names), tuple(notes))
