"""The provenance checks: ``triton/_build_info.json`` is well-formed (a wheel without one was built by something
else, the official wheel: a note, not a failure), and the patches it names."""

from __future__ import annotations

import json
import zipfile

from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks.base import BUILD_INFO, Context, Finding, Provenance


def _short(value: object) -> str:
    try:
        text = json.dumps(value)
    except RecursionError:  # nested about as deep as json.loads allows: too deep to print back
        return f"a {type(value).__name__} nested too deep to show"
    return text if len(text) <= 40 else text[:37] + "..."


def _parse(data: object) -> Provenance | str:
    """The provenance fields the checks use, or what is wrong with their types."""
    if not isinstance(data, dict):
        return f"is {_short(data)}, not a JSON object"
    backends, wheel, llvm = data.get("backends", []), data.get("wheel", {}), data.get("llvm", {})
    if not isinstance(backends, list) or not all(isinstance(b, dict) and isinstance(b.get("name"), str)
                                                 for b in backends):
        return f"'backends' is {_short(backends)}, not a list of objects with a 'name' string"
    if not isinstance(wheel, dict):
        return f"'wheel' is {_short(wheel)}, not an object"
    libs, repro = wheel.get("system_libs", []), wheel.get("reproducible", False)
    if not isinstance(libs, list) or not all(isinstance(x, str) for x in libs):
        return f"'wheel.system_libs' is {_short(libs)}, not a list of strings"
    if not isinstance(repro, bool):
        return f"'wheel.reproducible' is {_short(repro)}, not true or false"
    if not isinstance(llvm, dict) or not isinstance(llvm.get("prefix"), str | None):
        return f"'llvm' is {_short(llvm)}, not an object with a 'prefix' string"
    source = data.get("source", {})
    patches = source.get("patches", []) if isinstance(source, dict) else None
    if not isinstance(patches, list) or not all(isinstance(p, dict) and isinstance(p.get("path"), str)
                                                and isinstance(p.get("sha256"), str) for p in patches):
        return f"'source.patches' is {_short(patches)}, not a list of objects with 'path' and 'sha256' strings"
    return Provenance(tuple(sorted(b["name"] for b in backends)), repro, tuple(libs), llvm.get("prefix"),
                      tuple((p["path"], p["sha256"]) for p in patches))


def read(zf: zipfile.ZipFile) -> tuple[Provenance | None, str | None]:
    """The wheel's triton/_build_info.json, read once for every check: the provenance, or None and what is wrong
    with it (None and None: the wheel has none)."""
    if BUILD_INFO not in zf.namelist():
        return None, None
    try:
        data = json.loads(zipguard.read_text(zf, BUILD_INFO))
    except zipguard.BadWheel as exc:
        return None, str(exc)
    except RecursionError:
        return None, (f"{BUILD_INFO} is JSON nested too deep to read (arrays or objects inside each other a "
                      "thousand times or more)")
    except ValueError as exc:
        return None, f"{BUILD_INFO} is not JSON ({exc})"
    found = _parse(data)
    return (None, f"{BUILD_INFO}: {found}") if isinstance(found, str) else (found, None)


class WellFormed:
    name = "provenance"

    def applies(self, ctx: Context) -> bool:
        return ctx.info is None

    def run(self, ctx: Context) -> list[Finding]:
        if ctx.info_problem is not None:
            return [Finding(self.name, "fail", ctx.info_problem)]
        return [Finding(self.name, "note", f"not built by tritonbuild: no {BUILD_INFO}; backends taken from entry "
                        "points")]


def _patch_words(patches: tuple[tuple[str, str], ...]) -> str:
    """The patches a wheel's provenance names, printable whatever the wheel holds (control characters quoted)."""
    def one(text: str) -> str:
        return (text if text.isprintable() else repr(text))[:200]

    more = f"; and {len(patches) - 5} more" if len(patches) > 5 else ""
    return "; ".join(f"{one(path)} (sha256 {one(digest)})" for path, digest in patches[:5]) + more + \
        " applied to the source"


class Patches:
    name = "patches"

    def applies(self, ctx: Context) -> bool:
        return ctx.info is not None and bool(ctx.info.patches)

    def run(self, ctx: Context) -> list[Finding]:
        return [Finding(self.name, "note", _patch_words(ctx.info.patches if ctx.info else ()))]
