"""The wheel's SBOM: a CycloneDX 1.6 document made with cyclonedx-python-lib from the plan and the facts gathered
at the edge (pure: reads no file, runs nothing).

It lists what the wheel is made of: the Triton source (repository, commit, dirty, patches with sha256), every
backend and plugin (origin, commit, pin), the LLVM (revision or version, where it came from: a prefix, the
distribution packages that installed it, an archive with its URL and sha256; linked statically or not), the NVIDIA
parts (headers, CUPTI, bundled tools), the binding library, the compilers, and every ELF file of the wheel by path
and sha256 (a library the bundle step or auditwheel copied in: where from, and the package that installed it).

It is deterministic: no random UUID (the serial number is derived from the document's own bytes), no wall-clock
time (the plan's SOURCE_DATE_EPOCH or the source's commit time, else none), and in reproducible mode no directory
of the build machine (the source and plugins are ``<source>``/``<plugin:NAME>``, as in ``_build_info.json``).
"""

from __future__ import annotations

import datetime
import hashlib
import re
import uuid
import warnings
from dataclasses import dataclass

from cyclonedx.model import ExternalReference, ExternalReferenceType, HashAlgorithm, HashType, Property, XsUri
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.license import LicenseExpression
from cyclonedx.output.json import JsonV1Dot6
from packageurl import PackageURL

from tritonbuild import __version__
from tritonbuild.gather.packages import DebPackage
from tritonbuild.plan import Plan

SBOM_DIR = "sboms"
SBOM_NAME = "tritonbuild.cdx.json"  # <name>-<version>.dist-info/sboms/<this> (PEP 770)
LLVM_LICENSE = "Apache-2.0 WITH LLVM-exception"
BINDING_LICENSE = "BSD-3-Clause"  # pybind11 and nanobind
FILE_REF = "file:"  # the bom-ref prefix of a wheel member's component


@dataclass(frozen=True)
class WheelFile:
    """One ELF file of the wheel: its path there, sha256 (hex), and, for a library copied in by the bundle step or
    auditwheel, the file it was copied from and the package that installed that file."""

    path: str
    sha256: str
    copied_from: str | None = None
    package: DebPackage | None = None


@dataclass(frozen=True)
class Tool:
    """A program the build used or the wheel bundles: name, path, its ``--version`` line (a compiler's; a bundled
    tool is not run), the package that installed it."""

    name: str
    path: str | None
    version: str | None
    package: DebPackage | None = None
    wheel: str | None = None  # a tool unpacked from NVIDIA's wheel: its PyPI spec (project==version)
    wheel_sha256: str | None = None  # that wheel's sha256 (checked against the index's when downloaded)
    sha256: str | None = None  # a bundled tool: the sha256 of its file in the wheel
    toolkit: str | None = None  # the CUDA toolkit it lies in (its root), when one
    cuda: str | None = None  # that toolkit's version of the tool's part (its version.json or dist-info)


@dataclass(frozen=True)
class Facts:
    """What the edge gathered for the SBOM (each may be unknown)."""

    files: tuple[WheelFile, ...]
    llvm_packages: tuple[DebPackage, ...] = ()  # the packages that installed the LLVM prefix's CMake configs
    binding_version: str | None = None
    compilers: tuple[Tool, ...] = ()  # c, c++
    nvidia_tools: tuple[Tool, ...] = ()  # ptxas, cuobjdump, nvdisasm as bundled
    nvidia_versions: tuple[tuple[str, str], ...] = ()  # NVIDIA part (cuda-headers, cupti-libs) -> its CUDA version
    repository: str | None = None  # the source checkout's origin URL
    licence: str | None = None  # the SPDX identifier of the source's LICENSE (the wheel's too), when known


def _props(**values: object) -> list[Property]:
    return [Property(name=f"tritonbuild:{k.replace('_', '-')}", value=str(v).lower() if isinstance(v, bool)
                     else str(v)) for k, v in values.items() if v is not None and v != ""]


def deb_purl(pkg: DebPackage) -> PackageURL:
    return PackageURL(type="deb", namespace=pkg.distro, name=pkg.name, version=pkg.version,
                      qualifiers={"arch": pkg.arch} if pkg.arch else None)


def _deb(pkg: DebPackage, licence: str | None = None) -> Component:
    return Component(name=pkg.name, version=pkg.version, bom_ref=f"deb:{pkg.name}", purl=deb_purl(pkg),
                     licenses=[LicenseExpression(licence)] if licence else None,
                     properties=_props(origin="distribution package"))


def _licences(facts: Facts) -> list[LicenseExpression] | None:
    return [LicenseExpression(facts.licence)] if facts.licence else None


def epoch(plan: Plan) -> int | None:
    """The SBOM's time: the build's SOURCE_DATE_EPOCH (reproducible builds), else the source's commit time."""
    given = dict(plan.cmake.env).get("SOURCE_DATE_EPOCH", "")
    return int(given) if given.isascii() and given.isdigit() else plan.source.commit_time


def _where(plan: Plan, path: str | None) -> str | None:
    """A directory as ``_build_info.json`` names it: in reproducible mode never one of the build machine."""
    if path is None or not plan.reproducible:
        return path
    plugin = next((f"<plugin:{b.name}>" for b in plan.backends if b.origin == "plugin" and b.path == path), None)
    if plugin:
        return plugin
    root = plan.source.root.rstrip("/")
    if path == root or path.startswith(root + "/"):  # not a sibling whose name starts alike (triton-shared)
        return "<source>" + path[len(root):]
    return "<elsewhere>"


_GITHUB = re.compile(r"github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")


def _source(plan: Plan, facts: Facts) -> Component:
    src, url = plan.source, facts.repository
    gh = _GITHUB.search(url) if url else None
    purl = PackageURL(type="github", namespace=gh.group(1).lower(), name=gh.group(2).lower(), version=src.commit) \
        if gh and src.commit else None
    refs = [ExternalReference(type=ExternalReferenceType.VCS, url=XsUri(url))] if url else []
    patches = {f"patch-{i}": f"{p.path.rsplit('/', 1)[-1] if plan.reproducible else p.path} sha256:{p.sha256}"
               for i, p in enumerate(src.patches, 1)}
    return Component(name="triton-source", version=src.commit or src.version, bom_ref="source", purl=purl,
                     type=ComponentType.LIBRARY, licenses=_licences(facts), external_references=refs,
                     description="the Triton source tree",
                     properties=_props(commit=src.commit, dirty=src.dirty, version=src.version,
                                       generation=src.generation, root=_where(plan, src.root), **patches))


def _backends(plan: Plan) -> list[Component]:
    out = []
    for b in plan.backends:
        commit = b.commit or (plan.source.commit if b.origin == "in-tree" else None)
        out.append(Component(name=b.name, version=commit, bom_ref=f"backend:{b.name}",
                             description=f"Triton backend ({b.origin})",
                             properties=_props(origin=b.origin, commit=commit, dirty=b.dirty,
                                               path=_where(plan, b.path), triton_pin=b.triton_pin,
                                               triton_pin_from=b.triton_pin_from,
                                               pin_matches_source=b.pin_matches_source)))
    return out


def _llvm(plan: Plan, facts: Facts) -> list[Component]:
    llvm = plan.llvm
    refs, hashes = [], []
    if llvm.archive and llvm.strategy in ("download", "cached"):
        refs.append(ExternalReference(type=ExternalReferenceType.DISTRIBUTION, url=XsUri(llvm.archive)))
        digest = llvm.sha256.get(llvm.host_suffix or "")
        hashes = [HashType(alg=HashAlgorithm.SHA_256, content=digest)] if digest else []
    origin = "distribution package" if facts.llvm_packages else \
        {"download": "archive", "cached": "archive"}.get(llvm.strategy, "prefix")
    main = Component(name="llvm", version=llvm.revision or llvm.version, bom_ref="llvm",
                     licenses=[LicenseExpression(LLVM_LICENSE)], external_references=refs, hashes=hashes,
                     description="LLVM and MLIR, linked " + ("statically into libtriton" if llvm.link == "static" else
                                                              "as a shared library (libLLVM.so) by libtriton"),
                     properties=_props(origin=origin, revision=llvm.revision, version=llvm.version,
                                       pinned_hash=llvm.pinned_hash, is_pinned=llvm.is_pinned, link=llvm.link,
                                       prefix=llvm.prefix, strategy=llvm.strategy, found_by=llvm.found_by,
                                       packages=", ".join(f"{p.name} {p.version}" for p in facts.llvm_packages)))
    return [main, *(_deb(p, LLVM_LICENSE) for p in facts.llvm_packages)]


_PYPI_SPEC = re.compile(r"PyPI ([A-Za-z0-9._-]+)==([A-Za-z0-9._+-]+)")


def _nvidia(plan: Plan, facts: Facts) -> list[Component]:
    out = []
    for part in (p for p in plan.nvidia if p.dest != "bin"):  # a tool's wheel: its nvidia-tool component says so
        spec = _PYPI_SPEC.search(part.found_by)
        purl = PackageURL(type="pypi", name=spec.group(1).lower(), version=spec.group(2)) if spec else None
        version = spec.group(2) if spec else dict(facts.nvidia_versions).get(part.name)
        out.append(Component(name=part.name, version=version, bom_ref=f"nvidia:{part.name}",
                             purl=purl, description=f"NVIDIA files in triton/backends/nvidia/{part.dest}",
                             properties=_props(origin=part.found_by if not plan.reproducible or spec else None,
                                               dest=part.dest)))
    for tool in facts.nvidia_tools:
        out.append(_tool(plan, tool, f"nvidia-tool:{tool.name}", "NVIDIA tool bundled in backends/nvidia/bin"))
    return out


_NUMBER = r"(?<![\d.])(\d+\.\d+(?:\.\d+)*)"
_VERSION = re.compile(_NUMBER)
_SAID_VERSION = re.compile(r"(?:version |release |V)" + _NUMBER)  # clang's "version 22.1.8", ptxas's "V12.8.93"


def _tool(plan: Plan, tool: Tool, ref: str, description: str, group: str | None = None) -> Component:
    said = _SAID_VERSION.findall(tool.version or "")
    found = said[-1:] or _VERSION.findall(tool.version or "")[-1:]
    version = found[0] if found else tool.package.version if tool.package else None
    project, _, wheel_version = (tool.wheel or "").partition("==")
    purl = deb_purl(tool.package) if tool.package else None
    if tool.wheel:  # NVIDIA's wheel of the tool: the PyPI package and the wheel's sha256 say what it is
        version, purl = wheel_version, PackageURL(type="pypi", name=project.lower(), version=wheel_version)
    version = version or tool.cuda
    return Component(name=tool.name, version=version, bom_ref=ref, group=group,
                     type=ComponentType.APPLICATION, description=description, purl=purl,
                     hashes=[HashType(alg=HashAlgorithm.SHA_256, content=tool.sha256)] if tool.sha256 else None,
                     properties=_props(version_output=tool.version, path=None if plan.reproducible else tool.path,
                                       package=f"{tool.package.name} {tool.package.version}" if tool.package
                                       else None, origin=_tool_origin(plan, tool),
                                       wheel_sha256=tool.wheel_sha256))


def _tool_origin(plan: Plan, tool: Tool) -> str | None:
    """Where a tool came from: NVIDIA's wheel, a CUDA toolkit (its root named outside reproducible mode), a
    distribution package, or for a bundled tool a file of this host."""
    if tool.wheel:
        return f"PyPI {tool.wheel}"
    if tool.toolkit:
        return "CUDA toolkit" + (f" {tool.cuda}" if tool.cuda else "") + \
            ("" if plan.reproducible else f" at {tool.toolkit}")
    if tool.package:
        return "distribution package"
    return "a file of the build machine" if tool.sha256 else None


def _binding(plan: Plan, facts: Facts) -> Component:
    name, version = plan.source.bindings, facts.binding_version
    return Component(name=name, version=version, bom_ref="binding", licenses=[LicenseExpression(BINDING_LICENSE)],
                     purl=PackageURL(type="pypi", name=name, version=version) if version else None,
                     description="the binding library of libtriton's Python module")


def _file(plan: Plan, f: WheelFile) -> Component:
    where = f.copied_from.rsplit("/", 1)[-1] if f.copied_from and plan.reproducible else f.copied_from
    pkg = f.package
    return Component(name=f.path, type=ComponentType.FILE, bom_ref=FILE_REF + f.path,
                     hashes=[HashType(alg=HashAlgorithm.SHA_256, content=f.sha256)],
                     purl=deb_purl(pkg) if pkg else None,
                     properties=_props(copied_from=where, package=f"{pkg.name} {pkg.version}" if pkg else None))


def build(plan: Plan, facts: Facts, timestamp: int | None) -> Bom:
    """The SBOM of the wheel ``plan`` makes, as a cyclonedx ``Bom`` (serial number left to ``dumps``)."""
    bom = Bom()
    if timestamp is None:  # the library's default is now: no time at all rather than the build machine's clock
        bom.metadata.timestamp = None  # type: ignore[assignment]
    else:
        bom.metadata.timestamp = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    bom.metadata.tools.components.add(Component(name="tritonbuild", version=__version__, bom_ref="tritonbuild",
                                                type=ComponentType.APPLICATION))
    root = Component(name=plan.wheel.name, version=plan.wheel.version, bom_ref="wheel", licenses=_licences(facts),
                     purl=PackageURL(type="pypi", name=plan.wheel.name.lower().replace("_", "-"),
                                     version=plan.wheel.version),
                     description="the wheel", properties=_props(reproducible=plan.reproducible,
                                                               plan_fingerprint=plan.fingerprint,
                                                               backends_tuple=" ".join(plan.backends_tuple)))
    bom.metadata.component = root
    parts = [_source(plan, facts), *_backends(plan), *_llvm(plan, facts), *_nvidia(plan, facts),
             _binding(plan, facts), *(_tool(plan, c, f"compiler:{c.name}", "a compiler of the build", "compiler")
                                      for c in facts.compilers),
             *(_file(plan, f) for f in facts.files)]
    for part in parts:
        bom.components.add(part)
    bom.register_dependency(root, [p for p in parts if not str(p.bom_ref).startswith("deb:")])
    llvm = next(p for p in parts if str(p.bom_ref) == "llvm")
    bom.register_dependency(llvm, [p for p in parts if str(p.bom_ref).startswith("deb:")])
    return bom


def dumps(bom: Bom) -> str:
    """The SBOM as JSON, its serial number a UUID made from the sha256 of the document itself (with a zero
    serial): the same content gives the same bytes."""
    bom.serial_number = uuid.UUID(int=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the library's notes on an incomplete graph: files depend on nothing
        draft = JsonV1Dot6(bom).output_as_string(indent=2)
        bom.serial_number = uuid.UUID(bytes=hashlib.sha256(draft.encode()).digest()[:16], version=5)
        return JsonV1Dot6(bom).output_as_string(indent=2) + "\n"


def sbom_json(plan: Plan, facts: Facts) -> str:
    """The SBOM document of ``plan``'s wheel with ``facts``."""
    return dumps(build(plan, facts, epoch(plan)))

