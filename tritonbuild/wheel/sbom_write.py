"""Put the SBOM into a finished wheel (edge: reads and rewrites the wheel, gathers host facts).

The last step that changes a wheel's content: after scikit-build-core (or the quick rebuild's writer) and after
auditwheel's repair, so the ELF files it lists are the ones the published wheel holds. The wheel is rewritten
with every member copied still compressed (same names, order, times and modes), the SBOM added as
``<dist-info>/sboms/tritonbuild.cdx.json`` with the time and mode of the RECORD, and RECORD listing it: the same
wheel and plan give the same bytes.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

from tritonbuild.gather import packages
from tritonbuild.nvidia import pypi
from tritonbuild.plan import Plan
from tritonbuild.resolve.nvidia import bundled_tools
from tritonbuild.system.fileutil import read_text
from tritonbuild.wheel import bundle, zipguard
from tritonbuild.wheel.sbom import SBOM_DIR, SBOM_NAME, Facts, Tool, WheelFile, sbom_json
from tritonbuild.wheel.writer import Span, _copy_compressed, _record_row, dist_info_dir, new_member, record_rows

ELF_MAGIC = b"\x7fELF"


def elf_members(zf: zipfile.ZipFile, rows: list[list[str]]) -> list[tuple[str, str]]:
    """``(path, sha256 hex)`` of every ELF member: the hash from RECORD (the builder just wrote both), computed
    where RECORD has no sha256."""
    known = {r[0]: r[1].removeprefix("sha256=") for r in rows if len(r) == 3 and r[1].startswith("sha256=")}
    out = []
    for info in zf.infolist():
        if info.is_dir() or zipguard.head(zf, info) != ELF_MAGIC:
            continue
        b64 = known.get(info.filename)
        digest = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex() if b64 else \
            zipguard.digest(zf, info, "sha256")[0].hex()
        out.append((info.filename, digest))
    return out


def _files(members: list[tuple[str, str]], bundled: dict[str, str]) -> tuple[WheelFile, ...]:
    sources = {path: bundled.get(path.rsplit("/", 1)[-1]) for path, _ in members}
    grafted = {path for path, _ in members if path.split("/", 1)[0].endswith(".libs")}  # auditwheel's
    pkgs = packages.packages_of([s for s in sources.values() if s])
    return tuple(WheelFile(path, digest, sources[path] or ("auditwheel repair" if path in grafted else None),
                           pkgs.get(sources[path] or ""))
                 for path, digest in members)


def _tools(pairs: list[tuple[str, str | None]], *, ask: bool) -> tuple[Tool, ...]:
    """Each tool with the package that installed it; with ``ask``, what its ``--version`` says (the compilers, which
    the build runs anyway; never a bundled NVIDIA tool, named by the environment: its package and the file
    component's sha256 say what it is)."""
    real = {path: os.path.realpath(path) for _, path in pairs if path}
    pkgs = packages.packages_of(list(real.values()))
    return tuple(Tool(name, path, packages.version_line(path) if ask else None, pkgs.get(real.get(path or "", "")))
                 for name, path in pairs if path)


def _from_wheel(tool: Tool) -> Tool:
    """A bundled tool unpacked from NVIDIA's wheel (cuobjdump, nvdisasm), with that wheel's spec and sha256."""
    origin = pypi.wheel_origin(tool.path) if tool.path else None
    return dataclasses.replace(tool, wheel=origin["spec"], wheel_sha256=origin.get("sha256")) if origin else tool


# the part of a CUDA toolkit each NVIDIA component comes from: its key in the toolkit's version.json, and its
# project in a toolkit made of NVIDIA's wheels (dist-info/nvidia_cuda_<x>-<version>.dist-info)
CUDA_PARTS = {"ptxas": "cuda_nvcc", "ptxas-blackwell": "cuda_nvcc", "cuobjdump": "cuda_cuobjdump",
              "nvdisasm": "cuda_nvdisasm", "cuda-headers": "cuda_cudart", "cupti-headers": "cuda_cupti",
              "cupti-libs": "cuda_cupti"}
_DIST_PROJECT = {"cuda_cudart": "nvidia_cuda_runtime"}
VERSION_JSON_MAX = 1 << 20  # a toolkit's version.json is a few KiB


def toolkit_versions(path: str) -> tuple[str, dict[str, str]] | None:
    """The CUDA toolkit ``path`` lies in (up to four levels up, links resolved) and its parts' versions: from its
    ``version.json`` (``{"cuda": {"version": ...}, "cuda_nvcc": ...}``) or its ``dist-info`` dirs of NVIDIA's
    wheels. None when no such toolkit holds it. The files are read as hostile: capped, any malformed one ignored."""
    for root in list(Path(os.path.realpath(path)).parents)[:4]:
        found = _version_json(root / "version.json")
        if not found and (root / "dist-info").is_dir():
            found = _dist_infos(root / "dist-info")
        if found:
            return str(root), found
    return None


def _version_json(path: Path) -> dict[str, str]:
    try:
        data = json.loads(read_text(path, VERSION_JSON_MAX + 1)) if path.is_file() else None
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v["version"] for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)
            and isinstance(v.get("version"), str) and _SAFE_VERSION.fullmatch(v["version"])}


_SAFE_VERSION = re.compile(r"[0-9][0-9A-Za-z.+-]{0,40}")  # fullmatch


def _dist_infos(where: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        entries = sorted(os.listdir(where))[:1000]
    except OSError:
        return out
    for entry in entries:
        name, _, version = entry.removesuffix(".dist-info").partition("-")
        if entry.endswith(".dist-info") and name.startswith("nvidia_cuda_") and _SAFE_VERSION.fullmatch(version):
            out[name.removeprefix("nvidia_")] = version
    return out


def _cuda_version(found: dict[str, str], part: str) -> str | None:
    key = CUDA_PARTS.get(part, "cuda")
    return found.get(key) or found.get(_DIST_PROJECT.get(key, key).removeprefix("nvidia_")) or found.get("cuda")


def _bundled_tool(tool: Tool, members: dict[str, str]) -> Tool:
    """A bundled NVIDIA tool with the sha256 of its file in the wheel and the CUDA toolkit it came from."""
    sha = members.get(f"triton/backends/nvidia/bin/{tool.name}")
    kit = toolkit_versions(tool.path) if tool.path and not tool.wheel else None
    return dataclasses.replace(tool, sha256=sha, toolkit=kit[0] if kit else None,
                               cuda=_cuda_version(kit[1], tool.name) if kit else None)


def _part_versions(plan: Plan) -> tuple[tuple[str, str], ...]:
    """Each NVIDIA part taken from a CUDA toolkit with that toolkit's version of it."""
    out = []
    for part in plan.nvidia:
        kit = toolkit_versions(part.dirs[0] + "/.") if part.dirs and part.dest != "bin" else None
        version = _cuda_version(kit[1], part.name) if kit else None
        if version:
            out.append((part.name, version))
    return tuple(out)


def _llvm_packages(plan: Plan) -> tuple[packages.DebPackage, ...]:
    """The distribution packages that installed the LLVM prefix's CMake configs (its static libraries)."""
    prefix = plan.llvm.prefix
    if not prefix:
        return ()
    wanted = ["llvm/LLVMConfig.cmake", "mlir/MLIRConfig.cmake"] + (["lld/LLDConfig.cmake"] if plan.llvm.needs_lld
                                                                    else [])
    paths = [f"{base}/lib/cmake/{w}" for w in wanted for base in dict.fromkeys([prefix, os.path.realpath(prefix)])]
    found = packages.packages_of(paths)
    return tuple(dict.fromkeys(found[p] for p in paths if p in found))


def gather(plan: Plan, zf: zipfile.ZipFile, rows: list[list[str]]) -> Facts:
    """What the SBOM says beyond the plan, gathered from the wheel and this host."""
    tc = plan.toolchain
    binding_dir = plan.cmake.define("nanobind_ROOT" if plan.source.bindings == "nanobind" else "pybind11_DIR")
    members = elf_members(zf, rows)
    return Facts(
        files=_files(members, bundle.copied(Path(plan.cmake.build_dir) / "bundle.json")),
        llvm_packages=_llvm_packages(plan),
        binding_version=packages.binding_version(binding_dir),
        compilers=_tools([(os.path.basename(c), c) for c in dict.fromkeys([tc.c_compiler, tc.cxx_compiler]) if c],
                         ask=True),
        nvidia_tools=tuple(_bundled_tool(_from_wheel(t), dict(members))
                           for t in _tools(list(bundled_tools(plan)), ask=False)),
        nvidia_versions=_part_versions(plan),
        repository=packages.repository_url(plan.source.checkout or plan.source.root),
        licence=packages.source_licence(plan.source.root),
    )


def add_sbom(plan: Plan, wheel: Path) -> dict[str, Any]:
    """Add the SBOM to ``wheel`` (replacing one an earlier build left in a reused dist-info), with its RECORD row;
    returns what the SBOM holds, in numbers, for the log. When the wheel has no SBOM yet and RECORD is its last
    member (what ``writer`` writes) only RECORD is rewritten, after the SBOM; otherwise the wheel is rewritten."""
    with zipfile.ZipFile(wheel) as old:
        dist_info = dist_info_dir(old)
        name, record = f"{dist_info}/{SBOM_DIR}/{SBOM_NAME}", f"{dist_info}/RECORD"
        rows = [r for r in record_rows(old, dist_info) if r[0] not in (name, record)]
        facts = gather(plan, old, rows)
        text = sbom_json(plan, facts)
        stamp = old.getinfo(record)
        last = max(old.infolist(), key=lambda i: i.header_offset)
        appendable = name not in old.NameToInfo and last.filename == record
    listing = io.StringIO()
    csv.writer(listing, lineterminator="\n").writerows([*rows, _record_row(name, text.encode()), [record, "", ""]])
    members = ((new_member(name, stamp.date_time), text), (new_member(record, stamp.date_time), listing.getvalue()))
    (_replace_record if appendable else _rewrite)(wheel, record, members, plan.wheel.zip_level)
    return {"path": name, "files": len(facts.files), "llvm_packages": [p.name for p in facts.llvm_packages]}


Members = tuple[tuple[zipfile.ZipInfo, str], ...]


def _replace_record(wheel: Path, record: str, members: Members, level: int) -> None:
    """RECORD, the last member, cut off and ``members`` written in its place (the others are not read again)."""
    with zipfile.ZipFile(wheel, "a") as zf:
        info = zf.NameToInfo.pop(record)
        zf.filelist.remove(info)
        assert zf.fp is not None
        zf.fp.seek(info.header_offset)
        zf.fp.truncate()
        zf.start_dir = info.header_offset
        for member, data in members:
            zf.writestr(member, data, compresslevel=level)


def _rewrite(wheel: Path, record: str, members: Members, level: int) -> None:
    """``wheel`` written anew without its RECORD and old SBOM, then ``members``."""
    tmp = wheel.with_name(f".{wheel.name}.sbom.partial")
    replaced = {record, *(m.filename for m, _ in members)}
    try:
        with zipfile.ZipFile(wheel) as old, open(wheel, "rb") as raw_fp, zipfile.ZipFile(tmp, "w") as out:
            for info in old.infolist():
                if info.filename not in replaced:
                    _copy_compressed(out, info, Span(raw_fp, info))
            for member, data in members:
                out.writestr(member, data, compresslevel=level)
        os.replace(tmp, wheel)
    finally:
        tmp.unlink(missing_ok=True)
