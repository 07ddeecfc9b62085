"""What a file the wheel would carry really is (edge: reads the file's first bytes, runs ``--version``).

``describe`` says what a path leads to (kind, ELF type and machine, exec bit) without running it; ``says`` asks a
cuobjdump/nvidia binary for its ``--version`` (argument list, clean environment, 10 s) so that a shell or any other
ELF program named ``TRITON_CUOBJDUMP_PATH`` is told from NVIDIA's tool; ``tool_file_problem`` judges a tool
unpacked from NVIDIA's wheel before its cache entry is marked complete.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import replace
from pathlib import Path
from typing import Literal

from tritonbuild.resolve.nvidia import input_problem
from tritonbuild.resolve.nvidia_parts import InputFile

VERSION_TIMEOUT = 10.0  # seconds a tool's --version may take
_CLEAN_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


def describe(path: Path | str, role: str, given_by: str, escapes: str | None = None, tool: str = "",
             says: str | None = None) -> InputFile:
    """What ``path`` is, links followed: its kind, whether it looks like text, its ELF type and machine, its exec
    bit. Never opens anything but a regular file (a FIFO would block)."""
    try:
        st = Path(path).stat()
    except (OSError, ValueError):
        return InputFile(role, given_by, str(path), "missing", escapes=escapes, tool=tool)
    if stat.S_ISDIR(st.st_mode):
        return InputFile(role, given_by, str(path), "dir", escapes=escapes, tool=tool)
    if not stat.S_ISREG(st.st_mode):
        return InputFile(role, given_by, str(path), "other", escapes=escapes, tool=tool)
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        head = b""
    elf = len(head) >= 20 and head[:4] == b"\x7fELF" and head[5] in (1, 2)
    order: Literal["little", "big"] = "little" if head[5:6] == b"\x01" else "big"
    return InputFile(role, given_by, str(path), "file", looks_text=b"\0" not in head,
                     elf_type=int.from_bytes(head[16:18], order) if elf else None,
                     elf_machine=int.from_bytes(head[18:20], order) if elf else None,
                     executable=bool(st.st_mode & stat.S_IXUSR), escapes=escapes, tool=tool, says=says)


def host_machine() -> int | None:
    """This host's ELF e_machine, read from the running interpreter."""
    return describe(os.path.realpath(sys.executable), "tool", "").elf_machine


def says(path: str) -> str:
    """What ``path --version`` prints (stdout and stderr, at most 400 characters); run with a clean environment
    and a short timeout, only for a file already known to be an ELF executable this host runs."""
    from tritonbuild.system import proc

    out = proc.run([path, "--version"], timeout=VERSION_TIMEOUT, env=_CLEAN_ENV)
    if out.returncode == 124:
        return f"(no answer within {VERSION_TIMEOUT:.0f} s)"
    return " ".join(f"{out.stdout}\n{out.stderr}".split())[:400]


def host_tool(path: str, tool: str, given_by: str, machine: int | None) -> InputFile:
    """A cuobjdump/nvdisasm of this host (a TRITON_<TOOL>_PATH, a toolkit's, PATH's) as the plan judges it: its
    ``--version`` is asked only when it is an ELF executable this host runs (one the plan refuses is not run)."""
    f = describe(path, "tool", given_by, tool=tool)
    return replace(f, says=says(path)) if input_problem(f, machine) is None else f


def tool_file_problem(path: Path, tool: str) -> str | None:
    """What the file unpacked as ``tool`` from NVIDIA's wheel is instead of an ELF executable this host runs named
    ``tool``, or None when it is one."""
    if path.name != tool:
        return f"named {path.name}, not {tool}"
    return input_problem(describe(path, "tool", "", tool=tool), host_machine())
