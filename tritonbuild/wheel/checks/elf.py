"""The libraries check: every library an ELF file of the wheel needs is on the manylinux allow-list (plus the
system libraries the wheel's provenance names) or inside the wheel, reachable through the file's own $ORIGIN run
path; run paths naming build-machine dirs are reported too. At build time it runs when the plan bundles the
libraries (``--no-bundle-libs`` keeps the build machine's by choice; ``verify`` says what)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tritonbuild.printable import printable
from tritonbuild.system import elf
from tritonbuild.wheel import elfneeds, zipguard
from tritonbuild.wheel.checks.base import Context, Finding


def extracted(ctx: Context) -> Path:
    """The wheel's ELF members, extracted through ``zipguard`` into the check's scratch dir once for the checks that
    read them (``libraries``, ``platform``); ``BadWheel`` when the archive does not let them be. At build time the
    tree the wheel was just written from (or unpacked to) instead, when its ELF files are exactly the wheel's."""
    root, done = ctx.tmp / "elf", ctx.tmp / "elf.extracted"
    if done.exists():
        return root
    members = elf_members(ctx.zf)
    if ctx.build is not None and same_elves(members, ctx.build.root):
        return ctx.build.root
    extract_elves(ctx.zf, root, members)
    done.touch()
    return root


def elf_members(zf: zipfile.ZipFile) -> dict[str, int]:
    """The wheel's ELF members by name, with their sizes."""
    return {i.filename: i.file_size for i in zf.infolist()
            if not i.is_dir() and not i.filename.endswith(".py") and zipguard.head(zf, i) == b"\x7fELF"}


def same_elves(members: dict[str, int], root: Path) -> bool:
    """Whether the ELF files under ``root`` are the wheel's ELF members, by name and size: a quick rebuild's prefix
    holds the files its wheel was written from moments ago (issue 45: extracting d8da7c998's 280 MB libtriton from
    the zip again cost 1-2.5 s of a one-edit rebuild); a prefix with one more or one fewer is not read."""
    on_disk = {p.relative_to(root).as_posix(): p.stat().st_size for p in elf.elf_files(root)}
    return bool(on_disk) and on_disk == members


def extract_elves(zf: zipfile.ZipFile, root: Path, members: dict[str, int] | None = None) -> None:
    """Every ELF member of the open wheel ``zf`` (``members``, when already found) extracted through ``zipguard``
    under ``root`` (made)."""
    root.mkdir(parents=True, exist_ok=True)
    members = elf_members(zf) if members is None else members
    for info in zf.infolist():
        if info.filename in members:
            zipguard.extract(zf, info, root)


def _needs(root: Path, system_libs: frozenset[str]) -> tuple[list[str], list[str], int]:
    problems, leaks, count = [], [], 0
    for path in elf.elf_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            info = elf.read(path)
        except Exception as exc:  # pyelftools on a hostile file: any error is a finding, not a traceback
            problems.append(f"{rel} is an ELF file that cannot be parsed ({type(exc).__name__})")
            continue
        if info is None:
            continue
        count += 1
        leaks += [f"{rel} run path {printable(e)}" for e in info.runpath if not e.startswith(("$ORIGIN", "${ORIGIN}"))]
        problems += [f"{rel} needs {printable(n)}" for n in elfneeds.outside(info, root) if n not in system_libs]
    return problems, leaks, count


class Libraries:
    name = "libraries"

    def applies(self, ctx: Context) -> bool:
        return ctx.build is None or ctx.build.plan.wheel.bundle_libs

    def run(self, ctx: Context) -> list[Finding]:
        try:
            root = extracted(ctx)
        except zipguard.BadWheel as exc:
            return [Finding(self.name, "fail", str(exc))]
        system = elf.SYSTEM_LIBS | frozenset(ctx.info.system_libs if ctx.info else ())
        problems, leaks, count = _needs(root, system)
        if problems:
            return [Finding(self.name, "fail", "needed from outside the wheel and the manylinux allow-list: "
                            f"{'; '.join(problems[:8])}{' ...' if len(problems) > 8 else ''} (build with "
                            "--bundle-libs)")]
        extra = f"; build-machine run paths left: {'; '.join(leaks[:3])}" if leaks else ""
        return [Finding(self.name, "ok", f"{count} ELF files need no library from outside the wheel but the manylinux "
                        "allow-list's (libraries only; the glibc their symbols need is verify's platform check)"
                        f"{extra}")]
