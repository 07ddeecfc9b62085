"""Gather what the compatibility check needs (edge: reads the sources, asks git about the source's history).

Per backend: the ``apicheck`` findings for its ``backend/compiler.py`` and ``backend/driver.py`` against the
source's base classes, and, for a plugin pinned to another Triton commit, the C++ drift: the commits between its
pin and the source commit, and those that changed a header the plugin includes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from tritonbuild.resolve import backend_api, binding_calls
from tritonbuild.system import probememo, safegit
from tritonbuild.system.fileutil import files_under, read_text, write_if_changed

_INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]', re.M)
_CXX = {".h", ".hpp", ".cpp", ".cc", ".cxx", ".inc", ".td"}
MAX_LISTED = 20
_PARALLEL_FROM = 16  # files to parse before the work is worth forking for
USAGE_MEMO = "usage-1"  # the tag of the kept usages: a new one when _parse_one changes what it finds


def _py_files(root: Path) -> list[Path]:
    return sorted(p for p in files_under(root, "The Python package", lambda d: d == "__pycache__")
                  if p.suffix == ".py")


def cached_usage(root: Path, cache: Path | None) -> backend_api.Usage:
    """What the Python files under ``root`` read, parsing only files changed since the last call: each file's
    usage is kept in ``cache`` by path, size and mtime (a real tree's python/triton takes ~0.5 s to parse, which
    every plan and no-op build paid; on several cores from ``_PARALLEL_FROM`` files)."""
    store = cache / (hashlib.sha256(os.fsencode(root)).hexdigest()[:16] + ".json") if cache else None
    total = backend_api.Usage()
    for names, calls in probememo.per_file([str(p) for p in _py_files(root)], store, USAGE_MEMO, _parse_one,
                                           _usage_entry, _PARALLEL_FROM).values():
        total = total | backend_api.Usage(set(names), {k: set(v) for k, v in calls.items()})
    return total


def _parse_one(path: str) -> tuple[list[str], dict[str, list[int]]]:
    one = backend_api.usage([read_text(Path(path))])
    return sorted(one.names), {k: sorted(v) for k, v in one.calls.items()}


def _usage_entry(entry: object) -> tuple[list[str], dict[str, list[int]]] | None:
    """A cache entry's usage, None when it is not the [names, {call: [argument counts]}] written here."""
    if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[0], list):
        return None
    names, calls = entry
    ok = all(isinstance(n, str) for n in names) and isinstance(calls, dict) and all(
        isinstance(v, list) and all(isinstance(n, int) for n in v) for v in calls.values())
    return (names, calls) if ok else None


def source_interface(source: Path, cache: Path | None = None) -> tuple[dict[str, backend_api.ClassInfo],
                                                                       backend_api.Usage]:
    """The source's backend base classes and every name its Python code reads."""
    backends = source / "python" / "triton" / "backends"
    classes: dict[str, backend_api.ClassInfo] = {}
    for module in ("compiler", "driver"):
        path = backends / f"{module}.py"
        classes.update({k: v for k, v in backend_api.parse_classes(read_text(path), str(path)).items()
                        if k in backend_api.BASES})
    return classes, cached_usage(source / "python" / "triton", cache)


def binding_findings(backend: Path, bindings: binding_calls.Bindings) -> list[backend_api.Finding]:
    """Calls of the backend's Python into libtriton's bindings that this source's signatures do not take."""
    out = []
    for file in _py_files(backend):
        for line, cls, method, passed, takes in binding_calls.bad_calls(read_text(file), bindings):
            out.append(backend_api.Finding(backend_api.ERROR, str(file), (
                f"{file.name}:{line} calls {cls}.{method}() with {passed} argument(s), and this Triton's "
                f"python/src binds it with {' or '.join(str(n) for n in sorted(takes))}: compiling a kernel "
                f"fails with \"TypeError: {method}(): incompatible function arguments\"")))
    return out


def check_backend(name: str, path: Path, source_classes: dict[str, backend_api.ClassInfo],
                  source_used: backend_api.Usage, drift: dict[str, Any] | None = None,
                  bindings: binding_calls.Bindings | None = None) -> backend_api.BackendApi:
    backend = path / "backend"
    used = source_used | backend_api.usage(read_text(p) for p in _py_files(backend))
    findings: list[backend_api.Finding] = []
    for module in ("compiler", "driver"):
        file = backend / f"{module}.py"
        findings += backend_api.check_module(backend_api.parse_classes(read_text(file), str(file)), source_classes,
                                             used, source_used.calls)
    findings += binding_findings(backend, bindings or {})
    changed = int(drift.get("touching_count", 0)) if drift else 0
    theirs, ours = (drift.get("llvm_at_pin"), drift.get("llvm_at_source")) if drift else (None, None)
    if theirs and ours and theirs != ours:
        findings.append(backend_api.Finding(backend_api.WARNING, str(path), (
            f"the plugin's Triton pin builds with LLVM {theirs[:12]}, this source pins LLVM {ours[:12]}: its "
            "MLIR/LLVM code was written against another LLVM API (removed headers, changed signatures, "
            "GEN_PASS_CLASSES) and may not compile")))
    if drift and changed:
        findings.append(backend_api.Finding(backend_api.WARNING, str(path), (
            f"{changed} of the {drift['commits']} source commits since the plugin's Triton pin changed headers it "
            f"includes ({', '.join(drift['headers'][:5])}{' ...' if len(drift['headers']) > 5 else ''})")))
    return backend_api.BackendApi(name, tuple(findings), backend_api.verdict(findings), drift)


def plugin_includes(plugin: Path, source: Path) -> list[str]:
    """The source files a plugin's C++ includes (``triton/...`` under include/, ``third_party/...``, a backend's
    include/), as paths relative to the source root."""
    found: set[str] = set()
    roots = [source / "include", source, *sorted(source.glob("third_party/*/include"))]
    for file in files_under(plugin, "The plugin"):
        if file.suffix not in _CXX or not file.is_file():
            continue
        for name in _INCLUDE.findall(read_text(file)):
            for root in roots:
                cand = root / name
                if cand.is_file():
                    found.add(str(cand.relative_to(source)))
                    break
    return sorted(found)


def _git(source: Path, *args: str) -> str | None:
    res = safegit.run_git(source, *args, timeout=60)
    return res.stdout if res.ok else None


def llvm_pin_at(source: Path, commit: str) -> str | None:
    """The LLVM commit a Triton commit pins (cmake/llvm-hash.txt, or llvm-info.json's llvm_hash)."""
    text = _git(source, "cat-file", "blob", f"{commit}:cmake/llvm-hash.txt")
    if text and re.fullmatch(r"[0-9a-f]{40}", text.strip()):
        return text.strip()
    info = _git(source, "cat-file", "blob", f"{commit}:cmake/llvm-info.json") or ""
    m = re.search(r'"llvm_hash"\s*:\s*"([0-9a-f]{40})"', info)
    return m.group(1) if m else None


def drift(source: Path, source_commit: str | None, pin: str, headers: Sequence[str]) -> dict[str, Any]:
    """Commits between the plugin's Triton pin and the source commit, and those touching ``headers``."""
    out: dict[str, Any] = {"pin": pin, "source": source_commit, "headers_included": len(headers),
                           "commits": 0, "touching": [], "touching_count": 0, "headers": []}
    if not source_commit:
        return {**out, "status": "the source is not a git checkout: no history to compare the pin with"}
    if not re.fullmatch(r"[0-9a-fA-F]{7,64}", pin):  # the plugin's file: never handed to git as an argument
        return {**out, "pin": pin[:80], "status": f"pin {pin[:40]!r} is not a commit hash: no history compared"}
    if (_git(source, "rev-parse", "--is-shallow-repository") or "").strip() == "true":
        out["shallow"] = True
    if _git(source, "cat-file", "-e", f"{pin}^{{commit}}") is None:
        why = ("the source is a shallow clone" if out.get("shallow") else "the source's history does not have it")
        return {**out, "status": f"pin {pin[:12]} not found ({why}): fetch more history (git fetch --unshallow) "
                                 "to see what changed"}
    if _git(source, "merge-base", "--is-ancestor", pin, source_commit) is None:
        return {**out, "status": f"pin {pin[:12]} is not an ancestor of the source commit (another branch)"}
    out["llvm_at_pin"] = llvm_pin_at(source, pin)
    out["llvm_at_source"] = llvm_pin_at(source, source_commit)
    count = _git(source, "rev-list", "--count", f"{pin}..{source_commit}")
    out["commits"] = int(count.strip()) if count and count.strip().isascii() and count.strip().isdigit() else 0
    if headers:
        log = _git(source, "log", "--no-ext-diff", "--no-textconv", "--no-show-signature", "--format=@@%H%x09%s",
                   "--name-only", f"{pin}..{source_commit}", "--",
                   *headers) or ""
        touching: list[dict[str, Any]] = []
        for line in log.splitlines():
            if line.startswith("@@"):
                sha, _, subject = line[2:].partition("\t")
                touching.append({"commit": sha[:12], "subject": subject, "files": []})
            elif line.strip() and touching:
                touching[-1]["files"].append(line.strip())
        out["touching"] = touching
        out["headers"] = sorted({f for t in touching for f in t["files"]})
    out["touching_count"] = len(out["touching"])
    shown = out["touching"][:MAX_LISTED]
    out["listed"] = len(shown)
    out["touching"] = shown
    out["status"] = "ok" if not out.get("shallow") else "ok (shallow clone: counts may be short)"
    return out


def _stamp(source: Path, source_commit: str | None, in_tree: Sequence[tuple[str, Path]],
           plugins: Sequence[tuple[str, Path, str | None]]) -> str:
    """What every check reads, by path, size and mtime: the source's Python package and bindings, each backend's
    Python files, the plugins' pins and the source commit (their drift)."""
    files = [*_py_files(source / "python" / "triton"), *sorted((source / "python" / "src").glob("*.cc"))]
    for _name, path in [*in_tree, *((n, p) for n, p, _pin in plugins)]:
        files += _py_files(path / "backend")
    h = hashlib.sha256(json.dumps([source_commit, [(n, str(p)) for n, p in in_tree],  # ASCII: \udcff escaped
                                   [(n, str(p), pin) for n, p, pin in plugins]]).encode())
    for f in files:  # by the name's bytes: one that is not UTF-8 is a key like any other
        try:
            st = f.stat()
            h.update(os.fsencode(f) + f"\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        except OSError:  # a dangling link: read as empty by every check
            h.update(os.fsencode(f) + b"\0-\n")
    return h.hexdigest()


def gather(source: Path, source_commit: str | None, in_tree: Iterable[tuple[str, Path]],
           plugins: Iterable[tuple[str, Path, str | None]],
           cache: Path | None = None) -> dict[str, backend_api.BackendApi]:
    """The check for each in-tree backend ``(name, path)`` and plugin ``(name, path, triton pin)``, by path
    (``cache``: where parsed files and, keyed by every input's path, size and mtime, whole results are
    remembered: a plan of an unchanged tree reads its answer instead of parsing the backends again)."""
    in_tree, plugins = list(in_tree), list(plugins)
    store = cache / ("result-" + hashlib.sha256(os.fsencode(source)).hexdigest()[:16] + ".json") if cache else None
    key = _stamp(source, source_commit, in_tree, plugins)
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        kept = json.loads(store.read_text()) if store else None
        if kept and kept["key"] == key:
            return {p: backend_api.BackendApi.from_dict(d) for p, d in kept["results"].items()}
    out = _check_all(source, source_commit, in_tree, plugins, cache)
    if store and store.parent.parent.is_dir():
        with contextlib.suppress(OSError):
            write_if_changed(store, json.dumps({"key": key, "results": {p: a.to_dict() | {"name": a.name}
                                                                        for p, a in out.items()}}))
    return out


def _check_all(source: Path, source_commit: str | None, in_tree: Sequence[tuple[str, Path]],
               plugins: Sequence[tuple[str, Path, str | None]],
               cache: Path | None) -> dict[str, backend_api.BackendApi]:
    classes, used = source_interface(source, cache)
    if not classes:
        return {}  # a source without python/triton/backends: nothing to check against
    bindings = binding_calls.parse_bindings(read_text(p) for p in sorted((source / "python" / "src").glob("*.cc")))
    out = {str(path): check_backend(name, path, classes, used, bindings=bindings) for name, path in in_tree}
    for name, path, pin in plugins:
        moved = None
        if pin and source_commit and not source_commit.startswith(pin) and not pin.startswith(source_commit):
            moved = drift(source, source_commit, pin, plugin_includes(path, source))
        out[str(path)] = check_backend(name, path, classes, used, moved, bindings)
    return out
