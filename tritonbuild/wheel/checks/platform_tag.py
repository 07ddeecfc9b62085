"""The platform check (verify): the lowest manylinux/musllinux policy the wheel's ELF files meet, from the symbol
versions and the libraries each needs (``tritonbuild.wheel.elfneeds``: auditwheel's policy data and decision), held to
the policy its file name's platform tag claims. A tag that claims an older policy than the files need is a FAIL
(pip would install the wheel where it cannot load); a plain ``linux_<arch>`` tag is a note: no package index takes
it, and the row names the policy ``--repair --plat`` could give it."""

from __future__ import annotations

from pathlib import Path

from tritonbuild import manylinux
from tritonbuild.printable import printable
from tritonbuild.system import elf
from tritonbuild.wheel import elfneeds, zipguard
from tritonbuild.wheel.checks.base import Context, Finding
from tritonbuild.wheel.checks.elf import extracted

SHOWN = 4  # symbols a row names


def _tags(wheel: Path) -> list[str]:
    """The platform tags of the wheel's file name (a compressed set, ``manylinux_2_17_x86_64.manylinux2014_x86_64``,
    is several)."""
    return wheel.name.removesuffix(".whl").split("-")[-1].split(".")


def _needs(root: Path) -> tuple[list[elfneeds.ElfNeeds], list[str]]:
    elves, problems = [], []
    for path in elf.elf_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            found = elfneeds.read(path, root)
        except Exception as exc:  # pyelftools on a hostile file: any error is a finding, not a traceback
            problems.append(f"{printable(rel)} cannot be read ({printable(str(exc) or type(exc).__name__)[:200]})")
            continue
        if found is not None:
            elves.append(found)
    return elves, problems


def _why(level: elfneeds.Level) -> str:
    if not level.why:
        return "the oldest policy auditwheel knows"
    more = f" and {len(level.why) - SHOWN} more" if len(level.why) > SHOWN else ""
    return printable("; ".join(level.why[:SHOWN])) + more


def _judge(level: elfneeds.Level, tags: list[str]) -> Finding:
    need = f"the ELF files need {level.policy} at least ({_why(level)})"
    if level.policy.startswith("linux_"):
        need = f"the ELF files meet no manylinux or musllinux policy ({_why(level)})"
    unknown = [t for t in tags if not t.startswith("linux_") and manylinux.find(t) is None]
    if unknown:
        return Finding("platform", "fail", f"the tag {printable('.'.join(tags))} is no platform auditwheel knows; "
                       f"{need}")
    claims = list({p.name: p for t in tags if (p := manylinux.find(t)) is not None}.values())
    over = [p.name for p in claims if p.priority > level.priority]
    if over:
        return Finding("platform", "fail", f"{need}; the tag claims {', '.join(over)}, older than that: pip would "
                       "install it where it cannot load (build where glibc is that old, in a manylinux container, or "
                       f"tag what it meets: --repair --plat {level.policy})")
    if not claims:
        fix = (f": build with --repair --plat {level.policy}" if not level.policy.startswith("linux_") else
               ": bundle or drop what keeps it from a policy")
        return Finding("platform", "note", f"{need}; the tag {printable('.'.join(tags))} cannot go to a package "
                       f"index{fix}")
    return Finding("platform", "ok", f"{need}; the tag claims {', '.join(p.name for p in claims)}")


class Platform:
    name = "platform"

    def applies(self, ctx: Context) -> bool:
        return ctx.build is None

    def run(self, ctx: Context) -> list[Finding]:
        if not manylinux.available():
            return [Finding(self.name, "skip", "auditwheel is not installed (pip install auditwheel): its policy data "
                            "decides the platform level")]
        tags = _tags(ctx.wheel)
        if tags == ["any"]:
            return [Finding(self.name, "skip", "the platform tag is any (a pure wheel): no policy to hold it to")]
        arch = next((a for t in tags if (a := manylinux.arch_of(t))), None)
        if arch is None:
            return [Finding(self.name, "fail", f"the tag {printable('.'.join(tags))} names no arch auditwheel knows")]
        try:
            elves, problems = _needs(extracted(ctx))
        except zipguard.BadWheel as exc:
            return [Finding(self.name, "fail", str(exc))]
        if problems:
            return [Finding(self.name, "fail", "; ".join(problems[:4]))]
        if not elves:
            return [Finding(self.name, "ok", f"no dynamically linked ELF files: the tag {'.'.join(tags)} ties the "
                            "wheel to no glibc")]
        return [_judge(elfneeds.level(elves, arch), tags)]
