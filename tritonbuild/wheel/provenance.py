"""The wheel's ``triton/_build_info.json``: what was built, from what, with what (edge: asks the compiler its
version)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from tritonbuild import __version__
from tritonbuild.gather.host import tool_version
from tritonbuild.plan import BackendPlan, Plan


def provenance(plan: Plan) -> dict[str, Any]:
    """The wheel's ``triton/_build_info.json``: what was built, from what, with what.

    In reproducible mode it holds no directory of the build machine (the source, plugins and cache are
    named, not located; a patch by its file name), so the same plan built elsewhere gives the same bytes. The
    patches applied to the source are listed in order: path as given, sha256, the files each touches; a patched
    plugin's (``--patch NAME=FILE``) likewise in its backend's entry, with the plugin dir they were applied to a
    copy of (``checkout``).
    """
    tc = plan.toolchain

    def where(path: str) -> str:
        if not plan.reproducible:
            return path
        root = plan.source.root.rstrip("/")
        if path == root or path.startswith(root + "/"):  # not a sibling named like it (../triton-shared)
            return "<source>" + path[len(root):]
        return next((f"<plugin:{b.name}>" for b in plan.backends if b.path == path), "<elsewhere>")

    return {
        "tritonbuild_version": __version__,
        "plan_key": None if plan.reproducible else plan.key,
        "plan_fingerprint": plan.fingerprint,
        "source": {"root": where(plan.source.root), "commit": plan.source.commit, "dirty": plan.source.dirty,
                   "version": plan.source.version, "generation": plan.source.generation,
                   "checkout": None if plan.reproducible else plan.source.checkout,
                   "patches": [{"path": os.path.basename(p.path) if plan.reproducible else p.path,
                                "sha256": p.sha256, "files": list(p.files)} for p in plan.source.patches],
                   "submodules": [{"path": path, "commit": commit} for path, commit in plan.source.submodules]},
        "backends": [{"name": b.name, "origin": b.origin, "path": where(b.path), "commit": b.commit,
                      "dirty": b.dirty, **(_patched(b, plan.reproducible) if b.patches else {})}
                     for b in plan.backends],
        "backends_tuple": list(plan.backends_tuple),
        "llvm": {"prefix": plan.llvm.prefix, "version": plan.llvm.version, "pinned_hash": plan.llvm.pinned_hash,
                 "revision": plan.llvm.revision, "is_pinned": plan.llvm.is_pinned,
                 "shared_libllvm": plan.llvm.link_dylib, "link": plan.llvm.link},
        "toolchain": {"compiler": tool_version(tc.cxx_compiler), "compiler_path": tc.cxx_compiler,
                      "linker": tc.linker, "build_type": tc.build_type, "proton": tc.proton},
        "wheel": {"name": plan.wheel.name, "version": plan.wheel.version, "reproducible": plan.reproducible,
                  "self_contained": plan.wheel.bundle_libs, "system_libs": list(plan.wheel.system_libs)},
    }


def _patched(b: BackendPlan, reproducible: bool) -> dict[str, Any]:
    """A patched plugin's dir as given (not in reproducible mode) and its patches, as the source's are listed."""
    return {"checkout": None if reproducible else b.checkout,
            "patches": [{"path": os.path.basename(p.path) if reproducible else p.path, "sha256": p.sha256,
                         "files": list(p.files)} for p in b.patches]}


def bundled_tools(plan: Plan) -> dict[str, dict[str, str]]:
    """Each NVIDIA tool bundled into backends/nvidia/bin (``TRITONBUILD_NVIDIA_TOOLS``: ptxas, cuobjdump,
    nvdisasm): the file on this machine, the sha256 of that file (the bytes the wheel carries), and for one unpacked
    from NVIDIA's wheel, that wheel's spec (project==version) and sha256 (its cache entry's record). For the
    provenance's ``resolvedDependencies``; a file that cannot be read has no sha256."""
    from tritonbuild.nvidia import pypi
    from tritonbuild.resolve.nvidia import bundled_tools as planned
    from tritonbuild.system.fileutil import sha256_of

    out: dict[str, dict[str, str]] = {}
    for name, path in planned(plan):
        entry = {"path": path}
        with contextlib.suppress(OSError):
            entry["sha256"] = sha256_of(Path(path))
        origin = pypi.wheel_origin(path)
        if origin:
            entry.update(wheel=origin["spec"], wheel_sha256=origin.get("sha256", ""))
        out[name] = entry
    return out
