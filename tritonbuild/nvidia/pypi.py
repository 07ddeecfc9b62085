"""Fetch NVIDIA's wheels from a PyPI simple index into the cache (edge: network, cache dir).

setup.py downloads NVIDIA's redistributable archives; the same headers and libraries are published as wheels
on PyPI (``nvidia-cuda-runtime``, ``nvidia-cuda-crt``, ``nvidia-cuda-cupti``, ...), which company mirrors and
this project's CI reach like any Python package. A wheel is fetched once per version, checked against the
sha256 the index gives, and unpacked (only its ``nvidia/`` tree) into ``<cache>/nvidia/<project>-<version>``,
published atomically with a ``.complete`` marker.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from tritonbuild.errors import UserError
from tritonbuild.resolve.nvidia_parts import TOOL_PROJECTS, WheelRef, numeric, tool_wheel, wheel_file_version
from tritonbuild.settings.model import show
from tritonbuild.system.fileutil import confined, plain_file_problem, read_owned_json, sha256_of, write_if_changed
from tritonbuild.urls import join_url, split_url

if TYPE_CHECKING:  # imported where used: urllib, http.client and email cost a plan that reads no page 50 ms; the
    # HTML parser, zipfile and the extractor (tarfile) another 10 ms
    import zipfile

    from tritonbuild.system import http

# The default index is the pypi_index setting's (tritonbuild.settings.model); the plan's settings carry it.


def _links(page: str) -> list[tuple[str, str]]:
    """The ``(href, text)`` of every ``<a>`` of an index page."""
    from html.parser import HTMLParser

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.links: list[tuple[str, str]] = []
            self._href: str | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a":
                self._href = dict(attrs).get("href")

        def handle_data(self, data: str) -> None:
            if self._href is not None:
                self.links.append((self._href, data.strip()))
                self._href = None

    parser = Links()
    parser.feed(page)
    return parser.links


def pick(page: str, page_url: str, ref: WheelRef, machine: str) -> tuple[str, str | None, str] | None:
    """``(url, sha256 or None, filename)`` of the Linux wheel for ``machine`` in a PEP 503 index page."""
    prefix = f"{ref.project.replace('-', '_')}-{ref.version}-"
    for href, text in _links(page):
        parts = split_url(href)
        name = text or (PurePosixPath(parts.path).name if parts else "")
        if name.startswith(prefix) and name.endswith(".whl") and "linux" in name and machine in name:
            url = join_url(page_url, href)
            if url is None:
                continue  # a link no URL parser reads: not a wheel we could fetch
            m = re.search(r"#sha256=([0-9a-f]{64})", url)
            return url.split("#", 1)[0], (m.group(1) if m else None), name
    return None


def _extract(wheel: Path, staging: Path, name: str) -> None:
    """Unpack the wheel's ``nvidia/`` tree into ``staging`` through the one extractor (``tritonbuild.system.archive``):
    the whole archive is checked, its count and sizes from its central directory, before anything is written."""
    from tritonbuild.system.archive import extract_zip

    extract_zip(wheel, staging, f"the wheel {name}", keep=lambda member: member.startswith("nvidia/"),
                outcome="nothing was unpacked", fix="Check the index or mirror.")


INDEX_TIMEOUT = 10.0  # seconds the plan waits for an index page (one attempt: a plan stays quick)
INDEX_DEADLINE = 30.0  # seconds the plan gives an index page in all


def index_versions(index: str, project: str, machine: str, log: Callable[[str], None]
                   ) -> tuple[tuple[str, ...], str | None]:
    """The versions of ``project``'s Linux ``machine`` wheels on the index page, and why none could be read (the
    page is missing, the network failed), or None."""
    from tritonbuild.system import http

    page_url = f"{index.rstrip('/')}/{project}/"
    try:
        page = http.get_text(page_url, limits=http.Limits(retries=1, timeout=INDEX_TIMEOUT, deadline=INDEX_DEADLINE),
                             log=log)
    except http.NotFound:
        return (), f"the package index {index} has no {project} ({page_url})"
    except (http.NetworkError, OSError) as exc:
        return (), f"the package index {index} could not be read ({exc})"
    found = set()
    for href, text in _links(page):
        parts = split_url(href)
        version = wheel_file_version(text or (PurePosixPath(parts.path).name if parts else ""), project, machine)
        if version:
            found.add(version)
    return tuple(sorted(found)), None


INDEX_MEMO_LIMIT = 64 << 10  # bytes of a kept index answer: a page lists tens of versions, not thousands
INDEX_MEMO_VERSIONS = 1000


def _memo(cache_root: Path, project: str) -> Path:
    return cache_root / "nvidia" / f"{project}.index.json"


def remembered_versions(cache_root: Path, index: str, project: str, machine: str) -> tuple[str, ...] | None:
    """The versions ``index`` listed for ``project`` the last time its page was read (``remember_versions``), or
    None: none kept, one of another index or machine, or a file that is not such an answer (a link, over the size
    or count cap, other JSON) is not used: the page is read instead."""
    data = read_owned_json(_memo(cache_root, project), INDEX_MEMO_LIMIT, plain_file_problem)
    if not isinstance(data, dict) or set(data) != {"index", "machine", "versions"} \
            or data["index"] != index or data["machine"] != machine:
        return None
    versions = data["versions"]
    if not isinstance(versions, list) or len(versions) > INDEX_MEMO_VERSIONS \
            or not all(isinstance(v, str) and numeric(v) for v in versions):
        return None
    return tuple(sorted(set(versions)))


def remember_versions(cache_root: Path, index: str, project: str, machine: str, versions: tuple[str, ...]) -> None:
    """Keep what the index page listed, so that a plan whose choice from it is already unpacked asks no host."""
    with contextlib.suppress(OSError):  # a cache that cannot keep it asks the index next time
        write_if_changed(_memo(cache_root, project),
                         json.dumps({"index": index, "machine": machine, "versions": list(versions)}) + "\n")


def wheelhouse_wheels(wheelhouse: Path, project: str, machine: str) -> tuple[tuple[str, str], ...]:
    """``(version, file)`` of each Linux ``machine`` wheel of ``project`` in the ``wheelhouse`` dir, each checked
    as a download would be: a corrupt wheel, or one with a member that is a link or leaves its dir, is refused
    (UserError) before anything is unpacked."""
    try:
        names = sorted(p.name for p in wheelhouse.iterdir())
    except OSError:
        return ()
    out = []
    for name in names:
        version = wheel_file_version(name, project, machine)
        path = wheelhouse / name
        if version and path.is_file():
            check_wheel(path, name, project, version)
            out.append((version, str(path)))
    return tuple(out)


def check_wheel(path: Path, name: str, project: str | None = None, version: str | None = None) -> None:
    """Refuse (UserError) a wheel file that is not a zip, holds a member no unpack may write, or (given
    ``project`` and ``version``) whose METADATA claims another project or version than its file name."""
    fix = (f"Replace it (pip download --no-deps the same {name.split('-', 1)[0]} version), or remove it from the "
           "wheelhouse.")
    from tritonbuild.system.archive import open_zip

    try:
        with open_zip(path, f"the wheel {path}", fix=fix) as zf:
            if project and version:
                check_claims(zf, project, version, f"{name} (from the wheelhouse {path})",
                             "Remove it from the wheelhouse, or replace it with the real one (pip download --no-deps "
                             f"{project}=={version})")
    except OSError as exc:
        raise UserError(f"The wheel {path} is unreadable ({exc.strerror or exc}); nothing was unpacked from it. "
                        f"{fix}") from None


_METADATA = re.compile(r"[^/]+\.dist-info/METADATA")
MAX_METADATA = 1 << 20  # bytes of METADATA read: NVIDIA's are a few KiB


def wheel_claims(zf: zipfile.ZipFile) -> tuple[str, str] | None:
    """``(Name, Version)`` as the wheel's one ``*.dist-info/METADATA`` states them ("" for a field it lacks), or
    None when it has no such file (or several, or a huge one)."""
    metas = [i for i in zf.infolist() if _METADATA.fullmatch(i.filename)]
    if len(metas) != 1 or metas[0].file_size > MAX_METADATA:
        return None
    with zf.open(metas[0]) as f:
        head = f.read(MAX_METADATA).decode("utf-8", "replace").replace("\r\n", "\n").split("\n\n", 1)[0]
    found: dict[str, str] = {}
    for line in head.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("Name", "Version"):
            found.setdefault(key.strip(), value.strip())
    return found.get("Name", ""), found.get("Version", "")


def check_claims(zf: zipfile.ZipFile, project: str, version: str, where: str, fix: str) -> None:
    """Refuse (UserError) a wheel whose METADATA is not ``project`` at ``version``: a renamed wheel of another
    tool or version would be cached, bundled and named in the SBOM as what its file name says."""
    claims = wheel_claims(zf)
    if claims is not None and re.sub(r"[-_.]+", "-", claims[0]).lower() == project and claims[1] == version:  # PEP 503
        return
    what = (f"its METADATA says it is {show(claims[0] or '(no Name)')} {show(claims[1] or '(no Version)')}"
            if claims else "it has no (single) *.dist-info/METADATA")
    raise UserError(f"The wheel {where} is named as {project} {version}, but {what}: a renamed wheel of another "
                    f"tool or version is not taken. Nothing was unpacked from it and nothing was cached. {fix}.")


def cached_problem(entry: Path, project: str, version: str) -> str | None:
    """What is wrong with a cache entry marked complete: for a tool's wheel, its tool is no ELF executable of its
    name this host runs, or its marker records another version; None when it is sound."""
    from tritonbuild.nvidia.probe import tool_file_problem

    try:
        recorded = json.loads((entry / ".complete").read_text())
    except (OSError, ValueError):
        recorded = {}
    if isinstance(recorded, dict) and recorded.get("version") not in (None, version):
        return f"it records the version {show(str(recorded['version']))}, not {version}"
    tool = next((t for t, p in TOOL_PROJECTS.items() if p == project), None)
    ref = tool_wheel(tool, version) if tool else None
    if tool is None or ref is None:
        return None
    problem = tool_file_problem(entry / ref.subdir / tool, tool)
    return f"its {ref.subdir}/{tool} is {problem}" if problem else None


def wheel_origin(path: str) -> dict[str, str] | None:
    """Where the cache entry holding ``path`` (a bundled tool) came from: ``spec`` (project==version), ``sha256``
    of the wheel, ``url`` or ``wheelhouse`` file; None for a file of no tool wheel's cache entry."""
    for parent in Path(path).parents:
        project = next((p for p in TOOL_PROJECTS.values() if parent.name.startswith(f"{p}-")), None)
        marker = parent / ".complete"
        if project is None or not marker.is_file():
            continue
        try:
            data = json.loads(marker.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        out = {"spec": f"{project}=={parent.name[len(project) + 1:]}"}
        out.update({k: str(data[k]) for k in ("sha256", "url", "wheelhouse", "wheel", "origin") if data.get(k)})
        return out
    return None


def _publish(dest: Path, wheel: Path, ref: WheelRef, where: str, marker: dict[str, str]) -> None:
    """Unpack ``wheel`` into a staging dir beside ``dest``; a tool's wheel has its tool judged there (an ELF
    executable of its name this host runs); then rename it into place, marked complete. A refused or failed unpack
    leaves no cache entry (the staging dir is removed)."""
    staging = dest.parent / f".{dest.name}.{os.getpid()}"
    try:
        shutil.rmtree(staging, ignore_errors=True)
        _extract(wheel, staging, wheel.name)
        (staging / ".complete").write_text(json.dumps(marker) + "\n")
        problem = cached_problem(staging, ref.project, ref.version)
        if problem:
            raise UserError(f"The wheel {where} is no real {ref.spec}: {problem}. Nothing from it was cached "
                            f"({dest} was not written). Replace it with NVIDIA's wheel (pip download --no-deps "
                            f"{ref.spec}), or check the index or mirror.")
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(staging, dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _marker(ref: WheelRef, wheel: Path, origin: str, **where: str) -> dict[str, str]:
    return {"origin": origin, **where, "sha256": sha256_of(wheel), "wheel": wheel.name, "project": ref.project,
            "version": ref.version}


def provide(ref: WheelRef, cache_root: Path, *, index: str, machine: str, offline: bool,
            log: Callable[[str], None], wheelhouse: Path | None = None,
            limits: http.Limits | None = None) -> Path:
    """The unpacked wheel's directory in the cache: from the ``wheelhouse`` dir when it holds the wheel (checked
    as a download is), else fetched from the index (offline: refused). A cache entry marked complete whose tool
    fails the check is removed and provided again (offline with no wheelhouse holding it: refused, naming it)."""
    from filelock import FileLock

    dest = confined(cache_root / "nvidia", f"{ref.project}-{ref.version}", what=f"the cache entry of {ref.spec}")
    house = dict(wheelhouse_wheels(wheelhouse, ref.project, machine)) if wheelhouse else {}
    if (dest / ".complete").is_file():
        problem = cached_problem(dest, ref.project, ref.version)
        if problem is None:
            log(f"{ref.spec} from the cache ({dest})")
            return dest
        if offline and ref.version not in house:
            raise UserError(f"The cache entry {dest} of {ref.spec} (from the cache) is not sound: {problem}. "
                            "Offline, and no --wheelhouse holds that wheel: delete that dir, then run again with "
                            "--wheelhouse DIR holding NVIDIA's wheel, or with the network.")
        log(f"{ref.spec} from the cache ({dest}) is not sound ({problem}): removed, provided again")
        (dest / ".complete").unlink(missing_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if ref.version in house:
        wheel = Path(house[ref.version])
        with FileLock(str(dest) + ".lock"):
            if not (dest / ".complete").is_file():
                log(f"unpacking {ref.spec} from the wheelhouse {wheel}")
                _publish(dest, wheel, ref, f"{wheel.name} (from the wheelhouse {wheel})",
                         _marker(ref, wheel, f"the wheelhouse {wheel}", wheelhouse=str(wheel)))
        return dest
    if offline:
        raise UserError(f"Offline (TRITON_OFFLINE_BUILD/--offline): {ref.spec} from PyPI is not in the cache "
                        f"({dest}). Run the same build once with the network, or set the Triton variable that "
                        "points at the files instead (TRITON_CUDART_PATH, TRITON_CUPTI_INCLUDE_PATH, ...), or set "
                        "CUDA_HOME to a CUDA toolkit.")
    with FileLock(str(dest) + ".lock"):
        if not (dest / ".complete").is_file():
            _download(ref, dest, index, machine, log, limits)
    log(f"{ref.spec} ready at {dest}")
    return dest


def _download(ref: WheelRef, dest: Path, index: str, machine: str, log: Callable[[str], None],
              limits: http.Limits | None) -> None:
    """Fetch ``ref``'s wheel from the index, check its sha256 and METADATA, and publish it into ``dest``."""
    from tritonbuild.system import http
    from tritonbuild.system.archive import open_zip

    page_url = f"{index.rstrip('/')}/{ref.project}/"
    hint = "Check the network or the index (TRITONBUILD_PYPI_INDEX / PIP_INDEX_URL)."
    try:
        page = http.get_text(page_url, limits=limits or http.DEFAULT_LIMITS, log=log, hint=hint)
    except http.NotFound:
        raise UserError(f"The package index {index} has no {ref.project} ({page_url}). Point "
                        "TRITONBUILD_PYPI_INDEX at an index that mirrors NVIDIA's wheels.") from None
    found = pick(page, page_url, ref, machine)
    if found is None:
        raise UserError(f"{ref.spec} has no Linux {machine} wheel on {index}. The tree pins that version in "
                        "cmake/nvidia-toolchain-version.json; set CUDA_HOME or the TRITON_*_PATH variable "
                        "to supply the files instead.")
    url, sha, name = found
    part = confined(dest.parent / ".downloads", f"{name}.{os.getpid()}", what=f"the download of {ref.spec}")
    try:
        log(f"downloading {ref.spec} ({name}) from {url}")
        http.fetch(url, part, limits=limits or http.DEFAULT_LIMITS, log=log, hint=hint)
        actual = sha256_of(part)
        if sha and actual != sha:
            raise UserError(f"The download of {name} (from {url}) does not match the index's sha256 ({sha}, got "
                            f"{actual}); it was deleted. Check the index or mirror.")
        with open_zip(part, f"the wheel {name} (from {url})", outcome="nothing was unpacked",
                      fix="Check the index or mirror.") as zf:
            check_claims(zf, ref.project, ref.version, f"{name} (from {url})", "Check the index or mirror")
        _publish(dest, part, ref, f"{name} (from {url})", _marker(ref, part, url, url=url))
    finally:
        part.unlink(missing_ok=True)
