"""Which NVIDIA files this plan installs, and from where (pure: facts + the plan's choices -> parts)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from tritonbuild.plan import NvidiaPart, Plan
from tritonbuild.resolve.nvidia_parts import (
    CUPTI_LIBS,
    TOOL_PROJECTS,
    InputFile,
    NvidiaFacts,
    Source,
    numeric,
    tool_wheel,
    version_key,
)


@dataclass
class Choice:
    parts: list[NvidiaPart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    headers_missing: str | None = None  # the driver's CUDA headers cannot be had: how to supply them
    cupti_missing: str | None = None  # proton's CUPTI headers cannot be had: how to supply them
    cupti_staged: bool = False  # proton compiles against the staged include dir (no self-sufficient CUPTI dir)
    cupti_dir: str | None = None  # else this dir (a toolkit's include/ with cupti.h and cuda.h)


def _usable(src: Source | None, offline: bool) -> bool:
    return src is not None and (src.cached or not offline)


def cupti_available(nv: NvidiaFacts, offline: bool) -> bool:
    """Whether proton's CUPTI headers can be had (decides proton's default)."""
    return _usable(nv.sources.get("cupti"), offline)


def _missing(what: str, var: str, src: Source | None, spec_hint: str | None) -> str:
    where = (f"{src.wheel} from PyPI is not in the cache and the build is offline" if src and src.wheel
             else f"no {what} found")
    online = f", or build once online (tritonbuild fetches {spec_hint} from PyPI)" if spec_hint else ""
    return (f"{where}: set {var}, or CUDA_HOME to a CUDA toolkit that has them{online}")


def _part(name: str, dest: str, sources: list[Source], why: str, roots: tuple[str, ...],
          files: tuple[tuple[str, str], ...] | None) -> NvidiaPart:
    return NvidiaPart(
        name=name, dest=dest, dirs=tuple(d for s in sources for d in s.dirs),
        found_by="; ".join(dict.fromkeys(s.found_by for s in sources)), why=why, roots=roots,
        files=files or (), wheels=tuple(dict.fromkeys(s.wheel for s in sources if s.wheel and not s.cached)))


def choose(nv: NvidiaFacts, *, nvidia: bool, proton: bool, offline: bool) -> Choice:
    c = Choice()
    src = nv.sources
    if nvidia and nv.driver_headers:
        cudart = src.get("cudart")
        if not _usable(cudart, offline):
            ref = (cudart.wheel if cudart else None) or "the CUDA runtime headers"
            c.headers_missing = _missing("CUDA headers", "TRITON_CUDART_PATH", cudart, ref)
        else:
            assert cudart is not None
            feeds = [cudart] + ([src["cudacrt"]] if "cudacrt" in src and _usable(src["cudacrt"], offline) else [])
            c.parts.append(_part("cuda-headers", "include", feeds,
                                 "the nvidia driver compiles its launcher against them at run time", nv.driver_headers,
                                 nv.header_files))
    if proton:
        cupti = src.get("cupti")
        if not _usable(cupti, offline):
            c.cupti_missing = _missing("CUPTI headers", "TRITON_CUPTI_INCLUDE_PATH", cupti,
                                       cupti.wheel if cupti else None)
        else:
            assert cupti is not None
            feeds = [cupti] + [src[k] for k in ("cudart", "cudacrt") if k in src and _usable(src[k], offline)]
            self_sufficient = cupti.cached and not cupti.wheel and nv.cupti_header_files is not None and all(
                d == cupti.dirs[0] for d, _ in nv.cupti_header_files)
            c.cupti_staged = not self_sufficient
            c.cupti_dir = cupti.dirs[0] if self_sufficient else None
            if nvidia:
                c.parts.append(_part("cupti-headers", "include", feeds,
                                     "proton is compiled against them; setup.py ships them too", ("cupti.h",),
                                     nv.cupti_header_files))
        lib = src.get("cupti-lib")
        if nvidia and _usable(lib, offline) and nv.cupti_lib_files is not None and not nv.cupti_lib_files:
            assert lib is not None  # a dir was named (TRITON_CUPTI_LIB_PATH=/etc) that holds no CUPTI library
            c.notes.append(f"proton: {lib.found_by} names {', '.join(lib.dirs)}, which holds no CUPTI library "
                           f"({', '.join(CUPTI_LIBS)}); none is bundled, and proton will need TRITON_CUPTI_LIB_PATH "
                           "at run time")
        elif nvidia and _usable(lib, offline):
            assert lib is not None
            c.parts.append(_part("cupti-libs", "lib/cupti", [lib],
                                 "proton loads libcupti.so from backends/nvidia/lib/cupti (TRITON_CUPTI_LIB_PATH)", (),
                                 nv.cupti_lib_files))
        elif nvidia:
            c.notes.append("proton: no CUPTI libraries found to bundle (TRITON_CUPTI_LIB_PATH, a CUDA toolkit's "
                           "lib64, PyPI); proton will need TRITON_CUPTI_LIB_PATH at run time")
    for part in c.parts:
        what = f"{len(part.files)} files" if part.files else "files"
        fetch = f" (downloads {', '.join(part.wheels)} when the build runs)" if part.wheels else ""
        c.notes.append(f"nvidia: {part.name}: {what} from {part.found_by} into backends/nvidia/{part.dest}{fetch}")
    return c


ELF_EXEC, ELF_DYN = 2, 3  # e_type: an executable; a shared object (or a position-independent executable)
_HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inl", ".cuh")


def header_name_ok(name: str) -> bool:
    """A header's name: .h, .hpp (.hh, .inl, .cuh), or none at all (libcu++'s <cuda/std/type_traits>)."""
    base = name.rsplit("/", 1)[-1]
    return base.endswith(_HEADER_SUFFIXES) or ("." not in base and bool(base))

_WANT = {"tool": "an ELF executable", "lib": "an ELF shared library", "header": "a header file (.h, .hpp)",
         "dir": "a directory"}
_MACHINES = {62: "x86-64", 183: "aarch64", 21: "ppc64", 3: "i386", 40: "arm"}


def _what(f: InputFile) -> str:
    if f.kind == "dir":
        return "a directory"
    if f.kind == "other":
        return "not a regular file (a FIFO, a socket or a device)"
    if f.elf_type is not None:
        return {ELF_EXEC: "an ELF executable", ELF_DYN: "an ELF shared object"}.get(f.elf_type, "an ELF object")
    return "a text file" if f.looks_text else "a binary file that is not ELF"


def input_problem(f: InputFile, machine: int | None) -> str | None:
    """What ``f`` is instead of what the wheel may carry in its place, or None when it is fine: a tool must be an
    executable ELF file for this host, a library an ELF shared object, a header a regular ``.h``/``.hpp`` file
    inside its dir, a dir a directory (links followed, so a link to a secret is judged by what it leads to)."""
    want = _WANT[f.role]
    if f.escapes:
        return f"a link (or ../) that leads out of {f.escapes}, not {want} inside it"
    if f.kind == "missing":
        return f"nothing (no such file or directory), not {want}"
    if f.role == "dir" or f.kind != "file":
        return None if f.role == "dir" and f.kind == "dir" else f"{_what(f)}, not {want}"
    if f.role == "header":
        return None if header_name_ok(f.path) else f"a file not named like a header, not {want}"
    if f.elf_type is None:
        return f"{_what(f)}, not {want}"
    if machine is not None and f.elf_machine != machine:
        arch = _MACHINES.get(f.elf_machine or 0, f"machine {f.elf_machine}")
        return f"an ELF file for {arch}, not {want} this host ({_MACHINES.get(machine, machine)}) runs"
    if f.role == "tool" and (f.elf_type not in (ELF_EXEC, ELF_DYN) or not f.executable):
        return f"{_what(f)} without the exec bit, not {want}" if f.elf_type in (ELF_EXEC, ELF_DYN) \
            else f"{_what(f)}, not {want}"
    if f.role == "lib" and f.elf_type != ELF_DYN:
        return f"{_what(f)}, not {want}"
    if f.role == "tool" and f.says is not None and not banner_ok(f.tool, f.says):
        return (f"a program that is not NVIDIA's {f.tool}: its `--version` says {f.says[:160]!r}"
                if f.says else f"a program that is not NVIDIA's {f.tool}: its `--version` prints nothing")
    return None


def banner_ok(tool: str, says: str) -> bool:
    """Whether ``--version`` output is NVIDIA's ``tool``'s (``cuobjdump: NVIDIA (R) CUDA Object Utility``)."""
    return re.search(rf"\b{re.escape(tool)}\b", says, re.I) is not None and "NVIDIA" in says


def refuse_inputs(inputs: tuple[InputFile, ...], machine: int | None, roles: tuple[str, ...]) -> None:
    """One paragraph (UserError) for the first of ``inputs`` in ``roles`` the wheel must not carry: what names it
    (the variable), the path, and what it is instead."""
    from tritonbuild.errors import UserError

    for f in inputs:
        if f.role in roles and (problem := input_problem(f, machine)):
            var = f.given_by.removeprefix("env ")
            fix = (f"Point {var} at the real one, or unset it" if f.given_by.startswith("env ")
                   else "Fix or remove that file, or set the TRITON_*_PATH variable of that part")
            raise UserError(
                f"{f.path} (from {f.given_by}) is {problem}. The nvidia backend's files (bin/ptxas and its tools, "
                "lib/cupti, include) are copied into the wheel, and only what each must be is taken. "
                f"{fix}{' (or build with --no-bundle-nvidia-tools)' if f.role == 'tool' else ''}.")


TOOL_ORDER = ("ptxas", "cuobjdump", "nvdisasm", "ptxas-blackwell")  # as backends/nvidia/bin lists them
SASS_USERS = ("Triton's SASS disassembly needs them (triton.tools.disasm, a compiled kernel's asm['sass'], "
              "Triton's test_disasm.py: \"Cannot find cuobjdump\")")


def pick_tool_version(available: Iterable[str], *, ptxas: str | None, pin: str | None) -> tuple[str | None, str]:
    """Which of the ``available`` versions of a tool's wheel to bundle beside a ptxas of version ``ptxas`` (None:
    unknown), and why: only versions of ptxas's CUDA major (a newer cuobjdump/nvdisasm of one major reads that
    major's cubins); among them the tree's ``pin`` when there, else the lowest version >= ptxas's, else the newest.
    ``(None, why)`` when none fits."""
    versions = sorted({v for v in available if numeric(v)}, key=version_key)
    if numeric(ptxas):
        assert ptxas is not None
        major = version_key(ptxas)[0]
        versions = [v for v in versions if version_key(v)[0] == major]
        if not versions:
            return None, f"no CUDA {major} version is available for ptxas {ptxas}"
    if pin in versions:
        return pin, f"the tree's pin (cmake/nvidia-toolchain-version.json){' is available' if ptxas else ''}"
    unpinned = f"the tree's pin {pin} is not available" if pin else "the tree pins no version"
    if numeric(ptxas):
        assert ptxas is not None
        above = [v for v in versions if version_key(v) >= version_key(ptxas)]
        if above:
            return above[0], f"{unpinned}: the lowest available version >= ptxas {ptxas}"
        return versions[-1], f"{unpinned}, none is >= ptxas {ptxas}: the newest of CUDA " \
                             f"{version_key(ptxas)[0]}"
    if versions:
        return versions[-1], f"{unpinned} and the CUDA version of ptxas is unknown: the newest available"
    return None, "no version of it is available"


def wheel_tools(nv: NvidiaFacts, *, tools_from: str
                ) -> tuple[list[tuple[str, str, str]], list[NvidiaPart], list[str], list[tuple[str, str]]]:
    """The tools to bundle with those of NVIDIA's wheels chosen in: ``(tools, parts, notes, missing)``, missing
    being ``(tool, why)`` for each tool wanted from a wheel that none provides. ``tools_from`` "pypi" replaces a
    toolkit's cuobjdump/nvdisasm (never one a TRITON_<TOOL>_PATH names)."""
    tools = [t for t in nv.tools
             if not (tools_from == "pypi" and t[0] in TOOL_PROJECTS and not t[2].startswith("env "))]
    parts: list[NvidiaPart] = []
    notes: list[str] = []
    missing: list[tuple[str, str]] = []
    ptxas = nv.ptxas_version or nv.versions.get("ptxas")
    basis = " (what the bundled ptxas says it is)" if nv.ptxas_version else \
        " (no bundled ptxas to ask: the tree's ptxas pin)" if ptxas else ""
    for tool, offer in sorted(nv.tool_offers.items()):
        if any(n == tool for n, _, _ in tools):
            continue
        version, why = pick_tool_version(offer.versions, ptxas=ptxas, pin=nv.versions.get(tool))
        ref = tool_wheel(tool, version) if version else None
        if ref is None:
            where = f"looked in {', '.join(offer.looked)}" if offer.looked else ""
            said = "; ".join(w for w in (where, offer.problem or "") if w)
            missing.append((tool, f"{why}{basis}" + (f"; {said}" if said else "")))
            continue
        bindir = f"{offer.entries}/{ref.project}-{ref.version}/{ref.subdir}"
        tools.append((tool, f"{bindir}/{tool}", f"PyPI {ref.spec}"))
        fetch = "" if ref.version in offer.cached else (
            " (unpacked from the --wheelhouse file when the build runs)" if ref.version in dict(offer.wheelhouse)
            else " (downloaded when the build runs)")
        parts.append(NvidiaPart(name=tool, dest="bin", dirs=(bindir,), found_by=f"PyPI {ref.spec}",
                                why="Triton's SASS disassembly runs it from backends/nvidia/bin",
                                files=((bindir, tool),),
                                wheels=() if ref.version in offer.cached else (ref.spec,)))
        notes.append(f"nvidia: {tool} {ref.version} from NVIDIA's wheel {ref.spec}: {why}{basis}{fetch}")
    tools.sort(key=lambda t: TOOL_ORDER.index(t[0]) if t[0] in TOOL_ORDER else len(TOOL_ORDER))
    return tools, parts, notes, missing


def missing_tools(plan: Plan) -> tuple[str, ...]:
    """The tools the plan's wheel lacks of cuobjdump and nvdisasm, when it bundles the nvidia backend's tools (for
    the build summary and the manifest: the plan warned of each)."""
    if "nvidia" not in plan.backend_names or not plan.settings.bundle_nvidia_tools:
        return ()
    bundled = dict(bundled_tools(plan))
    return tuple(t for t in TOOL_PROJECTS if t not in bundled)


def bundled_tools(plan: Plan) -> tuple[tuple[str, str], ...]:
    """``(tool, path)`` of each tool the plan bundles into backends/nvidia/bin: what ``TRITONBUILD_NVIDIA_TOOLS``
    (written by ``resolve``) names, for the SBOM, the provenance and the build summary."""
    items = (plan.cmake.define("TRITONBUILD_NVIDIA_TOOLS") or "").split(";")
    return tuple((name, path) for name, _, path in (t.partition("=") for t in items) if name and path)


# The TRITON_*_PATH a configure-time download step (mid-2026 build_helpers.py) reads for each staged part: the dir
# under <build dir>/tritonbuild-nvidia, which mirrors where it would copy them in third_party/nvidia/backend.
_STAGED_PATHS = {"cuda-headers": (("TRITON_CUDACRT_PATH", "include"), ("TRITON_CUDART_PATH", "include")),
                 "cupti-headers": (("TRITON_CUPTI_INCLUDE_PATH", "include"),),
                 "cupti-libs": (("TRITON_CUPTI_LIB_PATH", "lib/cupti"),)}


def configure_paths(tree_vars: tuple[str, ...], nv: Resolution,
                    defines: dict[str, str]) -> tuple[dict[str, str], list[str], list[str]]:
    """For a tree whose configure downloads NVIDIA's parts into its source tree for each of ``tree_vars`` left
    empty: the defines that name what the plan's NVIDIA resolution ``nv`` provides (the staged dirs through
    TRITONBUILD_NVIDIA_PATHS, which the injected CMake resolves against the build dir; the bundled tools' binaries)
    and TRITON_OFFLINE_BUILD, so that configure downloads nothing (no network, no file written into the source);
    with notes and warnings. ``defines``: the plan's others (TRITON_PTXAS_PATH, LLVM_SYSPATH, JSON_SYSPATH)."""
    if not tree_vars:
        return {}, [], []
    staged = {var: rel for part in nv.parts for var, rel in _STAGED_PATHS.get(part.name, ()) if var in tree_vars}
    d: dict[str, str] = {}
    if staged:
        d["TRITONBUILD_NVIDIA_PATHS"] = ";".join(f"{var}={rel}" for var, rel in staged.items())
    for name, path, _ in nv.tools or ():
        var = f"TRITON_{name.upper().replace('-', '_')}_PATH"
        if var in tree_vars:
            d[var] = path
    given = [v for v in tree_vars if v in d or v in staged or defines.get(v)]
    left = [v for v in tree_vars if v not in given]
    step = ("this tree's configure runs python/build_helpers.py download_and_copy_dependencies, which downloads "
            "NVIDIA's archives and copies them into the source tree for each TRITON_*_PATH left empty")
    if not (defines.get("LLVM_SYSPATH") and defines.get("JSON_SYSPATH")):
        return d, [], [f"nvidia: {step}; tritonbuild gives {', '.join(given) or 'none of them'}, and cannot make "
                       "that step offline without LLVM_SYSPATH and JSON_SYSPATH (nlohmann/json: install "
                       f"nlohmann-json3-dev or set JSON_SYSPATH), so configure downloads {', '.join(left)}"]
    d["TRITON_OFFLINE_BUILD"] = "ON"
    without = f"; none is provided for {', '.join(left)}, which the wheel goes without" if left else ""
    return d, [f"nvidia: {step}: tritonbuild gives {', '.join(given) or 'none of them'} and sets "
               f"TRITON_OFFLINE_BUILD, so it downloads nothing{without}"], []


def _missing_tools(missing: list[tuple[str, str]], tools_from: str, nv: NvidiaFacts) -> str:
    names = [t for t, _ in missing]
    example = " ".join(f"{TOOL_PROJECTS[t]}==X" for t in names)
    are = "are" if len(names) > 1 else "is"
    wanted = f"{are} wanted from NVIDIA's wheels (--cuda-tools-from pypi)" if tools_from == "pypi" else \
        f"{are} not on this host (TRITON_<TOOL>_PATH, a CUDA toolkit, PATH), nor to be had from NVIDIA's wheels"
    reasons = "; ".join(dict.fromkeys(why for _, why in missing))
    return (f"{' and '.join(names)} {wanted}: {reasons}. {SASS_USERS}. Give "
            f"--wheelhouse DIR holding the wheels (`pip download --no-deps {example} -d DIR`, X a version of "
            f"ptxas's CUDA major, 13 or later), build once online, or set "
            f"{' / '.join(f'TRITON_{t.upper()}_PATH' for t in names)}")


@dataclass
class Resolution:
    parts: tuple[NvidiaPart, ...] = ()
    defines: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tools: tuple[tuple[str, str, str], ...] | None = None  # None: not bundling; (): bundling but none found


def resolve(nv: NvidiaFacts, *, names: tuple[str, ...], proton: bool, offline: bool, bundle_tools: bool,
            compile_headers: tuple[str, ...], tools_from: str = "auto") -> Resolution:
    """The plan's NVIDIA files. ``compile_headers``: what 2024 trees' C++ includes as backend/include/<x>: without
    them the build cannot compile, so their absence is an error; missing run-time headers are a warning (the
    wheel builds, but cannot launch kernels on NVIDIA GPUs)."""
    from tritonbuild.errors import UserError

    nvidia = "nvidia" in names
    if nvidia:  # what the wheel would carry, judged before any work: the environment that names it is hostile
        refuse_inputs(nv.inputs, nv.machine, ("dir", "header", *(("lib",) if proton else ()),
                                               *(("tool",) if bundle_tools else ())))
    c = choose(nv, nvidia=nvidia, proton=proton, offline=offline)
    r = Resolution(parts=tuple(c.parts), notes=list(c.notes))
    if c.headers_missing and compile_headers:
        raise UserError(f"This source's nvidia backend includes {', '.join(compile_headers)} from "
                        "backend/include, which Triton's setup.py downloads into the source tree; "
                        f"{c.headers_missing}. Or leave nvidia out of --backends if the source allows it.")
    if c.cupti_missing:
        raise UserError(f"Proton needs the CUPTI headers (CUPTI_INCLUDE_DIR); {c.cupti_missing}. Or build without "
                        "proton (--no-proton).")
    if c.headers_missing:
        r.warnings.append(f"The nvidia backend compiles against {', '.join(nv.driver_headers)} "
                          "(backends/nvidia/include) when it launches a kernel, and the wheel must carry them; "
                          f"{c.headers_missing}. Until then the wheel cannot launch kernels on NVIDIA GPUs.")
    if r.parts:
        r.defines["TRITONBUILD_NVIDIA_STAGE"] = "ON"  # the injected CMake installs <build>/tritonbuild-nvidia
    if nvidia and compile_headers and r.parts:
        r.defines["TRITONBUILD_CUDA_HEADERS"] = ";".join(compile_headers)  # compiled against the staged copy
    if proton:
        if c.cupti_dir:
            r.defines["CUPTI_INCLUDE_DIR"] = c.cupti_dir
        elif c.cupti_staged:
            r.defines["TRITONBUILD_CUPTI_FROM_STAGE"] = "ON"
            r.notes.append("proton: compiled against the staged CUPTI + CUDA headers (<build dir>/tritonbuild-nvidia/"
                           "include), as setup.py puts them together in backend/include")
    if nvidia and bundle_tools:  # after the staged parts: a tool's wheel is installed by the define, not staged
        _tools(nv, r, tools_from=tools_from)
    return r


def _tools(nv: NvidiaFacts, r: Resolution, *, tools_from: str) -> None:
    """The tools bundled into backends/nvidia/bin (the define the injected CMake installs them by), with notes on
    what is not bundled; ``tools_from`` "pypi" refuses (UserError) the plan of a wheel that cannot be had."""
    from tritonbuild.errors import UserError

    tools, parts, notes, missing = wheel_tools(nv, tools_from=tools_from)
    if missing and tools_from == "pypi":
        raise UserError(_missing_tools(missing, tools_from, nv) + ", or build with --cuda-tools-from auto.")
    r.tools = tuple(tools)
    r.parts = (*r.parts, *parts)
    if tools:
        r.defines["TRITONBUILD_NVIDIA_TOOLS"] = ";".join(f"{n}={p}" for n, p, _ in tools)
        host = [(n, p, how) for n, p, how in tools if not how.startswith("PyPI ")]
        if host:
            r.notes.append("nvidia: " + ", ".join(f"{n} from {p}" + (f" ({how})" if how.startswith(("env", "a "))
                                                                       else "") for n, p, how in host)
                           + " copied into the wheel's backends/nvidia/bin, as setup.py does")
    r.notes.extend(notes)
    if missing:
        r.warnings.append(f"nvidia: the wheel carries no {' or '.join(t for t, _ in missing)}: "
                          f"{_missing_tools(missing, tools_from, nv)} to bundle them.")
    lacking = [t for t in TOOL_PROJECTS if t not in {n for n, _, _ in tools} and t not in dict(missing)]
    if lacking:  # --cuda-tools-from host on a host without them: nothing was looked up, and the wheel lacks them
        r.warnings.append(f"nvidia: the wheel carries no {' or '.join(lacking)}: --cuda-tools-from {tools_from} "
                          "takes them only from this host (TRITON_<TOOL>_PATH, a CUDA toolkit, PATH), which has "
                          f"none. {SASS_USERS}. Build with --cuda-tools-from auto (NVIDIA's wheels from the index or "
                          f"--wheelhouse), or set {' / '.join(f'TRITON_{t.upper()}_PATH' for t in lacking)}.")
    if not any(n == "ptxas" for n, _, _ in tools):
        r.notes.append("nvidia: no ptxas binary found to bundle (TRITON_PTXAS_PATH, CUDA_HOME/bin, "
                       "/usr/local/cuda/bin, PATH; wrapper scripts do not count): the wheel compiles to PTX, and "
                       "needs TRITON_PTXAS_PATH at run time for cubins. Set TRITON_PTXAS_PATH to bundle one.")
    if nv.wants_ptxas_blackwell and not any(n == "ptxas-blackwell" for n, _, _ in tools):
        r.notes.append("nvidia: this tree looks for bin/ptxas-blackwell (sm_100+); none bundled (set "
                       "TRITON_PTXAS_BLACKWELL_PATH, or install a second CUDA toolkit)")
