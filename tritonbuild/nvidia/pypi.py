"""Fetch NVIDIA's wheels from a PyPI simple index into the cache (edge: network, cache dir).

setup.py downloads NVIDIA's redistributable archives; the same headers and libraries are published as wheels
on PyPI (``nvidia-cuda-runtime``, ``nvidia-cuda-crt``, ``nvidia-cuda-cupti``, ...), which company mirrors and
this project's CI reach like any Python package. A wheel is fetched once per version, checked against the
sha256 the index gives, and unpacked (only its ``nvidia/`` tree) into ``<cache>/nvidia/<project>-<version>``,
published atomically with a ``.complete`` marker.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import zipfile
import zlib
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

from tritonbuild import http
from tritonbuild.errors import UserError
from tritonbuild.fileutil import check_zip, confined, sha256_of
from tritonbuild.nvidia.parts import WheelRef
from tritonbuild.urls import join_url, split_url

# The default index is the pypi_index setting's (tritonbuild.settings.model); the plan's settings carry it.


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str]] = []  # (href, text)
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links.append((self._href, data.strip()))
            self._href = None


def pick(page: str, page_url: str, ref: WheelRef, machine: str) -> tuple[str, str | None, str] | None:
    """``(url, sha256 or None, filename)`` of the Linux wheel for ``machine`` in a PEP 503 index page."""
    parser = _Links()
    parser.feed(page)
    prefix = f"{ref.project.replace('-', '_')}-{ref.version}-"
    for href, text in parser.links:
        parts = split_url(href)
        name = text or (PurePosixPath(parts.path).name if parts else "")
        if name.startswith(prefix) and name.endswith(".whl") and "linux" in name and machine in name:
            url = join_url(page_url, href)
            if url is None:
                continue  # a link no URL parser reads: not a wheel we could fetch
            m = re.search(r"#sha256=([0-9a-f]{64})", url)
            return url.split("#", 1)[0], (m.group(1) if m else None), name
    return None


def unpacked_dir(cache_root: Path, ref: WheelRef) -> Path:
    return cache_root / "nvidia" / f"{ref.project}-{ref.version}"


def _extract(wheel: Path, staging: Path, name: str) -> None:
    """Unpack the wheel's ``nvidia/`` tree into ``staging``. The whole archive is checked before anything is
    written: a member with an absolute name or ``..``, a symlink or a device refuses it (UserError)."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            check_zip(zf, f"the wheel {name}")
            for info in zf.infolist():
                if not info.filename.startswith("nvidia/") or info.is_dir():
                    continue
                target = confined(staging, info.filename, what=f"the member of {name}")
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
                if info.external_attr >> 16 & 0o111:
                    target.chmod(0o755)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise UserError(f"The wheel {name} is corrupt ({exc}); nothing was unpacked. Check the index or mirror.") \
            from None


def provide(ref: WheelRef, cache_root: Path, *, index: str, machine: str, offline: bool,
            log: Callable[[str], None] = print) -> Path:
    """The unpacked wheel's directory in the cache, fetching it first when needed."""
    from filelock import FileLock

    dest = confined(cache_root / "nvidia", f"{ref.project}-{ref.version}", what=f"the cache entry of {ref.spec}")
    if (dest / ".complete").is_file():
        return dest
    if offline:
        raise UserError(f"Offline (TRITON_OFFLINE_BUILD/--offline): {ref.spec} from PyPI is not in the cache "
                        f"({dest}). Run the same build once with the network, or set the Triton variable that "
                        "points at the files instead (TRITON_CUDART_PATH, TRITON_CUPTI_INCLUDE_PATH, ...), or set "
                        "CUDA_HOME to a CUDA toolkit.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(dest) + ".lock"):
        if (dest / ".complete").is_file():
            return dest
        page_url = f"{index.rstrip('/')}/{ref.project}/"
        hint = "Check the network or the index (TRITONBUILD_PYPI_INDEX / PIP_INDEX_URL)."
        try:
            page = http.get_text(page_url, log=log, hint=hint)
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
        staging = dest.parent / f".{dest.name}.{os.getpid()}"
        try:
            log(f"downloading {ref.spec} ({name})")
            http.fetch(url, part, log=log, hint=hint)
            actual = sha256_of(part)
            if sha and actual != sha:
                raise UserError(f"The download of {name} does not match the index's sha256 ({sha}, got {actual}); "
                                "it was deleted. Check the index or mirror.")
            shutil.rmtree(staging, ignore_errors=True)
            _extract(part, staging, name)
            (staging / ".complete").write_text(json.dumps({"url": url, "sha256": actual, "wheel": name}) + "\n")
            shutil.rmtree(dest, ignore_errors=True)
            os.replace(staging, dest)
        finally:
            part.unlink(missing_ok=True)
            shutil.rmtree(staging, ignore_errors=True)
    log(f"{ref.spec} ready at {dest}")
    return dest
