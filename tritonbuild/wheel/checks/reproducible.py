"""The reproducibility note: whether the wheel says it was built with ``--reproducible``."""

from __future__ import annotations

from tritonbuild.wheel.checks.base import Context, Finding


class Reproducible:
    name = "reproducible"

    def applies(self, ctx: Context) -> bool:
        return ctx.info is not None

    def run(self, ctx: Context) -> list[Finding]:
        yes = ctx.info is not None and ctx.info.reproducible
        return [Finding(self.name, "ok", "yes: no build-machine paths, fixed zip metadata, the same bytes from any "
                        "checkout dir" if yes else "no (built without --reproducible)")]
