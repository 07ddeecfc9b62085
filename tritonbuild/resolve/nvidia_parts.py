"""Pure facts about NVIDIA's redistributables: version pins, PyPI wheels, header includes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

# The CUPTI libraries proton and its profilers load (official wheels ship them in backends/nvidia/lib/cupti).
CUPTI_LIBS = ("libcupti", "libnvperf_host", "libnvperf_target", "libpcsamplingutil", "libcheckpoint")

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
# C source embedded in the nvidia backend's Python (the launcher template) includes headers too.
_EMBEDDED_INCLUDE = re.compile(r'#include\s*\\?[<"]([\w./-]+)\\?[>"]')


def includes(text: str) -> list[tuple[str, str]]:
    """``(kind, name)`` of each ``#include`` line: kind is ``"`` or ``<``."""
    return [(m.group(1), m.group(2).strip()) for m in _INCLUDE.finditer(text)]


def embedded_includes(text: str) -> set[str]:
    """Header names a Python file's embedded C source includes (``#include \\"cuda.h\\"``)."""
    return set(_EMBEDDED_INCLUDE.findall(text))


def parse_versions(json_text: str | None, txt_text: str | None) -> dict[str, str]:
    """The tree's NVIDIA pins: ``cmake/nvidia-toolchain-version.json`` (since 2024-09: one version per
    component) or ``cmake/nvidia-toolchain-version.txt`` (2024: one version for all)."""
    if json_text:
        try:
            data = json.loads(json_text)
        except ValueError:
            data = {}
        if isinstance(data, dict):
            return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}
    if txt_text and re.fullmatch(r"\d+\.\d+(\.\d+)*", txt_text.strip()):
        v = txt_text.strip()
        return dict.fromkeys(("ptxas", "cuobjdump", "nvdisasm", "cudacrt", "cudart", "cupti"), v)
    return {}


@dataclass(frozen=True)
class WheelRef:
    """An NVIDIA wheel on PyPI that carries the same files as setup.py's download."""

    project: str
    version: str
    subdir: str  # the directory inside the wheel that corresponds to setup.py's download

    @property
    def spec(self) -> str:
        return f"{self.project}=={self.version}"


def pypi_wheel(component: str, version: str | None) -> WheelRef | None:
    """The wheel for ``component`` (cudart, cudacrt, cupti, cupti-lib) at ``version``: CUDA 13 wheels are
    ``nvidia-cuda-<x>`` with files under ``nvidia/cu13``; CUDA 12 ones ``nvidia-cuda-<x>-cu12`` under
    ``nvidia/cuda_<x>`` (CRT headers are in nvcc's wheel before 13)."""
    if not version or not re.fullmatch(r"\d+\.\d+(\.\d+)*", version):
        return None
    major = int(version.split(".")[0])
    sub = "lib" if component == "cupti-lib" else "include"
    if major >= 13:
        project = {"cudart": "runtime", "cudacrt": "crt", "cupti": "cupti", "cupti-lib": "cupti"}[component]
        return WheelRef(f"nvidia-cuda-{project}", version, f"nvidia/cu{major}/{sub}")
    if major == 12:
        project = {"cudart": "runtime", "cudacrt": "nvcc", "cupti": "cupti", "cupti-lib": "cupti"}[component]
        return WheelRef(f"nvidia-cuda-{project}-cu12", version, f"nvidia/cuda_{project}/{sub}")
    return None


# NVIDIA's wheels of the tools setup.py also downloads (CUDA 13 on: one file each, nvidia/cu<major>/bin/<tool>).
TOOL_PROJECTS = {"cuobjdump": "nvidia-cuda-cuobjdump", "nvdisasm": "nvidia-cuda-nvdisasm"}
TOOL_WHEEL_MAJOR = 13  # the first CUDA major NVIDIA publishes these wheels for
_NUMERIC = re.compile(r"\d+(\.\d+)*")


def version_key(version: str) -> tuple[int, ...]:
    """A numeric version (``13.2.51``) as a tuple that orders like the version."""
    return tuple(int(x) for x in version.split("."))


def numeric(version: str | None) -> bool:
    return version is not None and len(version) <= 40 and _NUMERIC.fullmatch(version) is not None


def tool_wheel(tool: str, version: str) -> WheelRef | None:
    """The wheel that carries ``tool`` (cuobjdump, nvdisasm) at ``version``; None before CUDA 13 (no such wheel)."""
    if tool not in TOOL_PROJECTS or not numeric(version) or version_key(version)[0] < TOOL_WHEEL_MAJOR:
        return None
    return WheelRef(TOOL_PROJECTS[tool], version, f"nvidia/cu{version_key(version)[0]}/bin")


def wheel_file_version(filename: str, project: str, machine: str) -> str | None:
    """The version in ``filename`` when it names a Linux ``machine`` wheel of ``project``
    (``nvidia_cuda_cuobjdump-13.2.51-py3-none-manylinux2014_x86_64.whl``), else None."""
    prefix = project.replace("-", "_") + "-"
    if not (filename.startswith(prefix) and filename.endswith(".whl") and "linux" in filename
            and machine in filename):
        return None
    version = filename[len(prefix):].split("-", 1)[0]
    return version if numeric(version) else None


@dataclass(frozen=True)
class ToolOffer:
    """The versions of one tool's wheel that can be had, and from where (gathered; ``choose`` picks one)."""

    tool: str  # cuobjdump, nvdisasm
    entries: str  # the cache dir of unpacked wheels (<cache>/nvidia): the tool is run from there
    cached: tuple[str, ...] = ()  # versions already unpacked in the cache
    wheelhouse: tuple[tuple[str, str], ...] = ()  # (version, wheel file) in --wheelhouse
    index: tuple[str, ...] = ()  # versions on the index page (online only)
    looked: tuple[str, ...] = ()  # where it was looked for, for messages: "the cache", "the wheelhouse DIR", ...
    problem: str | None = None  # why the index could not be read (online), or None

    @property
    def versions(self) -> tuple[str, ...]:
        found = {*self.cached, *(v for v, _ in self.wheelhouse), *self.index}
        return tuple(sorted(found, key=version_key))


Files = tuple[tuple[str, str], ...]  # (directory, path relative to it)


@dataclass(frozen=True)
class Source:
    """Where one component comes from."""

    component: str  # cudart, cudacrt, cupti, cupti-lib
    dirs: tuple[str, ...]  # where its files are (a wheel's: where it is, or will be, unpacked in the cache)
    found_by: str  # "env TRITON_CUDART_PATH", "CUDA toolkit /usr/local/cuda-13.0", "PyPI nvidia-cuda-...==..."
    wheel: str | None = None  # the PyPI spec when it comes from a wheel
    cached: bool = True  # False: a wheel still to download


@dataclass(frozen=True)
class InputFile:
    """A file (or dir) a plan would copy into the wheel, as found on disk (``discover`` gathers it; ``choose``
    judges it: the environment that names it is hostile)."""

    role: str  # "tool" (an executable), "lib" (a shared library), "header", "dir" (a dir of such files)
    given_by: str  # "env TRITON_PTXAS_PATH", "CUDA toolkit /usr/local/cuda", ...
    path: str  # as named
    kind: str  # after following links: "file", "dir", "missing" or "other" (a FIFO, a socket, a device)
    looks_text: bool = False  # its first bytes hold no NUL
    elf_type: int | None = None  # e_type of an ELF file (2: executable, 3: shared object or PIE); None: not ELF
    elf_machine: int | None = None  # e_machine (62: x86-64, 183: aarch64)
    executable: bool = False  # the exec bit for its owner
    escapes: str | None = None  # a link (or ../) that leads out of this dir
    tool: str = ""  # the tool it stands for (cuobjdump, nvdisasm), for a tool whose --version is asked
    says: str | None = None  # what its ``--version`` printed (None: not asked)


@dataclass(frozen=True)
class NvidiaFacts:
    versions: dict[str, str] = field(default_factory=dict)  # the tree's pins per component
    driver_headers: tuple[str, ...] = ()  # CUDA headers the nvidia driver compiles against at run time
    wants_ptxas_blackwell: bool = False  # the tree's nvidia backend looks for bin/ptxas-blackwell
    sources: dict[str, Source] = field(default_factory=dict)  # per component, the first found
    header_files: Files | None = None  # closure of driver_headers (None: a source is not unpacked yet)
    cupti_header_files: Files | None = None  # closure of cupti.h
    cupti_lib_files: Files | None = None
    tools: tuple[tuple[str, str, str], ...] = ()  # (name, real binary, found by)
    toolkit: str | None = None  # the CUDA toolkit root the headers come from, if one
    inputs: tuple[InputFile, ...] = ()  # every file and dir above as found, for the plan to refuse what is not
    machine: int | None = None  # this host's ELF e_machine (bundled binaries must run here)
    ptxas_version: str | None = None  # what the bundled ptxas says it is (``ptxas --version``), when read
    tool_offers: dict[str, ToolOffer] = field(default_factory=dict)  # tools wanted from NVIDIA's wheels
