"""The provenance checks: ``triton/_build_info.json`` is well-formed (a wheel without one was built by something
else, the official wheel: a note, not a failure), and the patches it names.

Well-formed means: JSON without NaN, Infinity or a number too big for a float (``1e999999``), and every field
tritonbuild writes (``tritonbuild.wheel.provenance``), when present, of the type it writes (``SHAPE``)."""

from __future__ import annotations

import json
import math
import zipfile
from typing import Any

from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks.base import BUILD_INFO, Context, Finding, Provenance


def _short(value: object) -> str:
    try:
        text = json.dumps(value)
    except RecursionError:  # nested about as deep as json.loads allows: too deep to print back
        return f"a {type(value).__name__} nested too deep to show"
    return text if len(text) <= 40 else text[:37] + "..."


STR, OPT_STR, BOOL, OPT_BOOL = (str,), (str, type(None)), (bool,), (bool, type(None))
STRS = [STR]  # a list of strings
# the fields tritonbuild.wheel.provenance writes: a tuple of types, a list of one shape, an object's known keys (each
# one optional: wheels of older tritonbuilds lack some; unknown keys are let through)
SHAPE: dict[str, Any] = {
    "tritonbuild_version": OPT_STR, "plan_key": OPT_STR, "plan_fingerprint": OPT_STR, "backends_tuple": STRS,
    "source": {"root": OPT_STR, "commit": OPT_STR, "dirty": OPT_BOOL, "version": OPT_STR, "generation": OPT_STR,
               "checkout": OPT_STR, "patches": [{"path": STR, "sha256": STR, "files": STRS}]},
    "backends": [{"name": STR, "origin": OPT_STR, "path": OPT_STR, "commit": OPT_STR, "dirty": OPT_BOOL,
                  "checkout": OPT_STR, "patches": [{"path": STR, "sha256": STR, "files": STRS}]}],
    "llvm": {"prefix": OPT_STR, "version": OPT_STR, "pinned_hash": OPT_STR, "revision": OPT_STR,
             "is_pinned": OPT_BOOL, "shared_libllvm": OPT_BOOL, "link": OPT_STR},
    "toolchain": {"compiler": OPT_STR, "compiler_path": OPT_STR, "linker": OPT_STR, "build_type": OPT_STR,
                  "proton": OPT_BOOL},
    "wheel": {"name": OPT_STR, "version": OPT_STR, "reproducible": BOOL, "self_contained": OPT_BOOL,
              "system_libs": STRS},
}
_WORDS = {str: "a string", bool: "true or false", type(None): "null"}


def _mistyped(value: object, shape: Any, where: str) -> str | None:
    """The first field of ``value`` not of its ``shape``'s type, worded, or None."""
    if isinstance(shape, tuple):
        ok = isinstance(value, shape)
        return None if ok else f"{where!r} is {_short(value)}, not {' or '.join(_WORDS[t] for t in shape)}"
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where!r} is {_short(value)}, not a list"
        return next((why for i, item in enumerate(value) if (why := _mistyped(item, shape[0], f"{where}[{i}]"))),
                    None)
    if not isinstance(value, dict):
        return f"{where!r} is {_short(value)}, not an object"
    return next((why for key, sub in shape.items() if key in value
                 and (why := _mistyped(value[key], sub, f"{where}.{key}" if where else key))), None)


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
    if why := _mistyped(data, SHAPE, ""):
        return why
    plugin_patches = [(b["name"], p) for b in backends for p in b.get("patches", [])]
    if not all(isinstance(p, dict) and isinstance(p.get("path"), str) and isinstance(p.get("sha256"), str)
               for _, p in plugin_patches):
        return f"a backend's 'patches' is {_short(plugin_patches)}, not a list of objects with 'path' and 'sha256' " \
            "strings"
    return Provenance(tuple(sorted(b["name"] for b in backends)), repro, tuple(libs), llvm.get("prefix"),
                      tuple((p["path"], p["sha256"]) for p in patches),
                      tuple((name, p["path"], p["sha256"]) for name, p in plugin_patches))


def _no_constant(word: str) -> float:
    raise ValueError(f"{word} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too big for a number")
    return value


def loads(text: str) -> object:
    """JSON as the standard allows it: NaN, Infinity and numbers that overflow a float refused (ValueError)."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite)


def read(zf: zipfile.ZipFile) -> tuple[Provenance | None, str | None]:
    """The wheel's triton/_build_info.json, read once for every check: the provenance, or None and what is wrong
    with it (None and None: the wheel has none)."""
    if BUILD_INFO not in zf.namelist():
        return None, None
    try:
        data = loads(zipguard.read_text(zf, BUILD_INFO))
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


def _one(text: str) -> str:
    return (text if text.isprintable() else repr(text))[:200]


def _patch_words(patches: tuple[tuple[str, str], ...], what: str = "the source") -> str:
    """The patches a wheel's provenance names, printable whatever the wheel holds (control characters quoted)."""
    more = f"; and {len(patches) - 5} more" if len(patches) > 5 else ""
    return "; ".join(f"{_one(path)} (sha256 {_one(digest)})" for path, digest in patches[:5]) + more + \
        f" applied to {what}"


def _all_patch_words(info: Provenance) -> str:
    """The source's patches, then each patched plugin's (at most 5 plugins named, the rest counted)."""
    plugins = list(dict.fromkeys(name for name, _, _ in info.plugin_patches))
    words = [_patch_words(info.patches)] if info.patches else []
    words += [_patch_words(tuple((p, d) for n, p, d in info.plugin_patches if n == name), f"the plugin {_one(name)}")
              for name in plugins[:5]]
    return "; ".join(words) + (f"; and patches to {len(plugins) - 5} more plugins" if len(plugins) > 5 else "")


class Patches:
    name = "patches"

    def applies(self, ctx: Context) -> bool:
        return ctx.info is not None and bool(ctx.info.patches or ctx.info.plugin_patches)

    def run(self, ctx: Context) -> list[Finding]:
        return [Finding(self.name, "note", _all_patch_words(ctx.info) if ctx.info else "")]
