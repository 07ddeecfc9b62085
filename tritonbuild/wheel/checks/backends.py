"""The backends check: the ``triton.backends`` entry points match the backend dirs, and the provenance's backends
when the wheel has one."""

from __future__ import annotations

import zipfile

from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks.base import Context, Finding, entry_points, status


def entry_point_backends(zf: zipfile.ZipFile) -> list[str] | str:
    """The ``triton.backends`` entry points' names, or what is wrong with entry_points.txt."""
    try:
        return sorted(entry_points(zf).get("triton.backends", {}))
    except zipguard.BadWheel as exc:
        return str(exc)


class Backends:
    name = "backends"

    def applies(self, ctx: Context) -> bool:
        return True

    def run(self, ctx: Context) -> list[Finding]:
        if isinstance(ctx.eps, str):
            return [Finding(self.name, "fail", ctx.eps)]
        eps = ctx.eps
        dirs = sorted({n.split("/")[2] for n in ctx.zf.namelist() if n.startswith("triton/backends/")
                       and n.count("/") >= 3 and n.endswith("/compiler.py")})
        if ctx.info is None:
            ok = eps == dirs
            return [Finding(self.name, status(ok), ", ".join(eps) if ok else f"entry points {eps}, backend dirs "
                            f"{dirs} differ")]
        recorded = list(ctx.info.backends)
        ok = recorded == eps == dirs
        return [Finding(self.name, status(ok), ", ".join(recorded) if ok else
                        f"provenance {recorded}, entry points {eps}, backend dirs {dirs} differ")]
