"""Find what the nvidia backend needs on this machine (edge: reads the tree, CUDA toolkits and the cache).

Order, as setup.py's own: Triton's ``TRITON_*_PATH`` variable, else a CUDA toolkit (``CUDA_HOME``, ``CUDA_PATH``,
``/usr/local/cuda``, then other ``/usr/local/cuda-*``), else NVIDIA's wheel on PyPI at the version the tree pins
(already unpacked in the cache, or to download when the build runs). cuobjdump and nvdisasm, which no CUDA 13
toolkit install need have, may come from NVIDIA's own wheels of them: ``tool_offer`` lists the versions the
cache, the --wheelhouse dir and (online) the index hold; ``choose.pick_tool_version`` picks one.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.nvidia.probe import describe, host_machine, host_tool
from tritonbuild.resolve.nvidia import header_name_ok
from tritonbuild.resolve.nvidia_parts import (
    CUPTI_LIBS,
    TOOL_PROJECTS,
    TOOL_WHEEL_MAJOR,
    Files,
    InputFile,
    NvidiaFacts,
    Source,
    ToolOffer,
    embedded_includes,
    includes,
    numeric,
    parse_versions,
    pypi_wheel,
    version_key,
)
from tritonbuild.settings.model import Settings
from tritonbuild.system.elf import is_elf

TOOLS = ("ptxas", "cuobjdump", "nvdisasm")
_CUDA_NAME = re.compile(r"^(cuda|cupti|driver_|vector_types|crt/|nv|generated_)")


def cuda_roots(env: Mapping[str, str]) -> list[str]:
    """CUDA toolkit roots, each once (links resolved): CUDA_HOME/CUDA_PATH when set (the user said which CUDA),
    else /usr/local/cuda and the other /usr/local/cuda-X.Y, newest first."""
    given = [env[k] for k in ("CUDA_HOME", "CUDA_PATH") if env.get(k)]
    if given:
        return [r for r in dict.fromkeys(given) if Path(r).is_dir()]
    given = ["/usr/local/cuda"]
    others = sorted((str(p) for p in Path("/usr/local").glob("cuda-*") if p.is_dir()), key=_version_key,
                    reverse=True)
    out: list[str] = []
    for root in [*given, *others]:
        if Path(root).is_dir() and str(Path(root).resolve()) not in (str(Path(o).resolve()) for o in out):
            out.append(root)
    return out


def _version_key(path: str) -> tuple[int, ...]:
    m = re.search(r"cuda-(\d+)\.(\d+)", path)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def find_tools(env: Mapping[str, str], roots: Sequence[str],
               settings: Settings | None = None) -> tuple[tuple[str, str, str], ...]:
    """The NVIDIA tools setup.py puts into backends/nvidia/bin: ``(name, real path, found by)``. The tool's
    setting wins (``ptxas``, ``cuobjdump``, ``nvdisasm``: Triton's ``TRITON_<NAME>_PATH``, read by the settings
    model, never from ``env``); else a real binary (not a wrapper script, which would not work on another machine)
    from the CUDA roots or PATH (``env``'s). Symlinks are resolved: the wheel gets the file itself."""
    found = []
    s = settings or Settings()
    for name, given in zip(TOOLS, (s.ptxas, s.cuobjdump, s.nvdisasm), strict=True):
        if given:  # taken as given: the plan refuses it unless it is an executable (choose.input_problem)
            found.append((name, os.path.realpath(given), s.origin(name)))
            continue
        on_path = shutil.which(name, path=env.get("PATH"))
        for cand in [*(Path(r) / "bin" / name for r in roots), *([Path(on_path)] if on_path else [])]:
            real = cand.resolve()
            if real.is_file() and is_elf(real):
                found.append((name, str(real), str(cand)))
                break
    return tuple(found)


@dataclass(frozen=True)
class ToolLookup:
    """How to look for NVIDIA's wheels of cuobjdump and nvidia: given only when the plan bundles the nvidia
    backend's tools (nvidia selected, --bundle-nvidia-tools)."""

    tools_from: str  # auto, pypi (host: no lookup)
    index: str
    wheelhouse: Path | None
    offline: bool
    machine: str  # platform.machine(): the wheels' tag


def ptxas_version(ptxas: str | None, machine: int | None) -> str | None:
    """What ``ptxas --version`` says (``V13.0.88``), run (10 s at most) only when it is an ELF executable this host
    runs: one the plan would refuse is not run."""
    from tritonbuild.resolve.nvidia import input_problem
    from tritonbuild.system import probememo, proc

    if ptxas is None or input_problem(describe(ptxas, "tool", ""), machine):
        return None
    key = {"files": probememo.files_key([ptxas])}  # a static executable: what it says is in it
    memo = probememo.recall("ptxas", key, lambda v: isinstance(v, str) and len(v) < 32 and numeric(v))
    if memo is not None:
        return str(memo)
    out = proc.run([ptxas, "--version"], timeout=10)
    m = re.search(r"\bV(\d+\.\d+(?:\.\d+)?)\b", out.stdout) if out.ok else None
    version = m.group(1) if m and numeric(m.group(1)) else None
    if version:
        probememo.remember("ptxas", key, version)
    return version


def tool_offer(tool: str, cache_root: Path, lookup: ToolLookup, log: Callable[[str], None],
               pin: str | None = None, choice: Callable[[tuple[str, ...]], str | None] = lambda v: None
               ) -> ToolOffer:
    """The versions of ``tool``'s wheel to be had: unpacked in the cache, in the wheelhouse (each checked: a
    hostile one is refused), on the index page (online only). The page is not read when ``pin``, the version the
    choice takes whatever else is offered, is already at hand, nor when ``choice`` (what the choice takes from
    given versions) takes an unpacked version from the page's answer kept in the cache: a plan of a warm cache
    reaches no host."""
    from tritonbuild.nvidia import pypi

    project, entries = TOOL_PROJECTS[tool], cache_root / "nvidia"
    complete = [(v, e) for e in (sorted(entries.glob(f"{project}-*")) if entries.is_dir() else [])
                if numeric(v := e.name[len(project) + 1:]) and (e / ".complete").is_file()]
    unsound = [(e, why) for v, e in complete if (why := pypi.cached_problem(e, project, v))]
    cached = tuple(v for v, e in complete if e not in dict(unsound))
    house = pypi.wheelhouse_wheels(lookup.wheelhouse, project, lookup.machine) if lookup.wheelhouse else ()
    looked = [f"the cache ({entries})", *([f"the wheelhouse {lookup.wheelhouse}"] if lookup.wheelhouse else [])]
    index: tuple[str, ...] = ()
    problem = None
    if not lookup.offline and not (pin and (pin in cached or pin in dict(house))):
        kept = pypi.remembered_versions(cache_root, lookup.index, project, lookup.machine)
        if kept is not None and choice((*cached, *dict(house), *kept)) in cached:
            index = kept
            looked.append(f"the index {lookup.index} (its last answer, kept in the cache)")
        else:
            index, problem = pypi.index_versions(lookup.index, project, lookup.machine, log)
            looked.append(f"the index {lookup.index}")
            if problem is None:
                pypi.remember_versions(cache_root, lookup.index, project, lookup.machine, index)
    bad = "; ".join(f"the cache entry {e} is not sound ({why}) and is not taken: a build that can fetch or "
                    "unpack that version again replaces it, else delete it" for e, why in unsound)
    return ToolOffer(tool, str(entries), cached, house, index, tuple(looked),
                     "; ".join(p for p in (problem, bad) if p) or None)


def ptxas_blackwell(settings: Settings, roots: Sequence[str], ptxas: str | None) -> tuple[str, str] | None:
    """``(binary, found by)``: the ``ptxas_blackwell`` setting (TRITON_PTXAS_BLACKWELL_PATH), else the ptxas of a
    second CUDA toolkit (another one than the ptxas bundled as bin/ptxas), newest first."""
    if settings.ptxas_blackwell:  # taken as given, judged by the plan like TRITON_PTXAS_PATH
        return os.path.realpath(settings.ptxas_blackwell), settings.origin("ptxas_blackwell")
    for root in roots:
        cand = (Path(root) / "bin" / "ptxas").resolve()
        if cand.is_file() and is_elf(cand) and str(cand) != ptxas:
            return str(cand), f"a second CUDA toolkit ({root})"
    return None


def closure(roots: Iterable[str], dirs: Sequence[str]) -> tuple[Files, tuple[str, ...], tuple[InputFile, ...]]:
    """The headers ``roots`` include, transitively, found in ``dirs`` (quoted includes first next to the
    including file); returns the files, the roots found nowhere, and what was found but is no header to copy (a
    link or ``../`` out of its dir, not a regular file, not a header's name). Includes outside ``dirs`` (the C
    library) are not followed."""
    found: dict[str, tuple[str, str]] = {}  # real path -> (dir, rel)
    missing: list[str] = []
    refused: dict[str, InputFile] = {}

    def inside(cand: Path) -> tuple[str, str] | None:
        for d in dirs:
            real, base = Path(os.path.realpath(cand)), Path(os.path.realpath(d))
            if real.is_relative_to(base):
                return d, str(real.relative_to(base))
        return None

    def locate(name: str, near: Path | None) -> tuple[str, str] | None:
        home = (inside(near) or (str(near), ""))[0] if near is not None else ""
        cands = ([(near / name, home)] if near is not None else []) + [(Path(d) / name, d) for d in dirs]
        for cand, base in cands:
            if not os.path.lexists(cand):
                continue
            hit = inside(cand)
            info = describe(cand, "header", "", escapes=None if hit else base)
            if hit and info.kind == "file" and header_name_ok(name):
                return hit
            refused.setdefault(str(cand), info)
            return None
        return None

    queue: list[tuple[str, Path | None, bool]] = [(r, None, True) for r in roots]
    while queue:
        name, near, is_root = queue.pop(0)
        hit = locate(name, near)
        if hit is None:
            if is_root:
                missing.append(name)
            continue
        path = (Path(hit[0]) / hit[1]).resolve()
        if str(path) in found:
            continue
        found[str(path)] = hit
        text = path.read_text(errors="replace")
        queue += [(inc, path.parent if kind == '"' else None, False) for kind, inc in includes(text)]
    return tuple(sorted(found.values(), key=lambda f: f[1])), tuple(missing), tuple(refused.values())


def lib_files(dirs: Sequence[str]) -> Files:
    """The CUPTI shared libraries in ``dirs``, under every name they have there (a wheel holds no links)."""
    out: list[tuple[str, str]] = []
    for d in dirs:
        for path in sorted(Path(d).glob("lib*.so*")):
            if path.name.split(".so")[0] in CUPTI_LIBS and path.resolve().is_file():
                out.append((d, path.name))
    return tuple(out)


def driver_headers(nvidia: Path, missing_2024: Sequence[str]) -> tuple[str, ...]:
    """The CUDA headers the nvidia backend compiles against from backend/include: its driver's C sources and the
    launcher C embedded in driver.py (cuda.h), plus what 2024 trees' C++ includes as backend/include/<x>."""
    names: set[str] = set(missing_2024)
    backend = nvidia / "backend"
    for path in sorted(backend.glob("*")):
        if path.suffix in (".c", ".h", ".cc", ".cpp") and path.is_file():
            names.update(n for _, n in includes(path.read_text(errors="replace")))
        elif path.suffix == ".py" and path.is_file():
            names.update(embedded_includes(path.read_text(errors="replace")))
    return tuple(sorted(n for n in names if _CUDA_NAME.match(n) and not (backend / n).is_file()
                        and not (backend / "include" / n).is_file()))


def _toolkit_dirs(root: str) -> dict[str, list[str]]:
    r = Path(root)
    out: dict[str, list[str]] = {}
    if (r / "include" / "cuda.h").is_file():
        out["cudart"] = [str(r / "include")]
    if (r / "include" / "crt").is_dir():
        out["cudacrt"] = [str(r / "include")]
    for inc in (r / "include", r / "extras" / "CUPTI" / "include"):
        if (inc / "cupti.h").is_file():
            out["cupti"] = [str(inc)]
            break
    for lib in (r / "extras" / "CUPTI" / "lib64", r / "lib64", r / "lib"):
        if any(lib.glob("libcupti.so*")):
            out["cupti-lib"] = [str(lib)]
            break
    return out


def find_sources(s: Settings, roots: Sequence[str], versions: Mapping[str, str],
                 cache_root: Path) -> tuple[dict[str, Source], str | None]:
    """Per component, where its files come from (its setting, Triton's TRITON_*_PATH > toolkit > PyPI wheel); the
    toolkit root used."""
    sources: dict[str, Source] = {}
    toolkit = None
    kits = [(root, _toolkit_dirs(root)) for root in roots]
    # what setup.py downloads for each component (cuda.h's dir, crt/'s, cupti.h's, libcupti's), and the setting
    # (Triton's variable) that replaces the download
    given_by = {"cudart": (s.cudart_path, "cudart_path"), "cudacrt": (s.cudacrt_path, "cudacrt_path"),
                "cupti": (s.cupti_include, "cupti_include"), "cupti-lib": (s.cupti_lib, "cupti_lib")}
    for comp, (given, name) in given_by.items():
        if given:
            sources[comp] = Source(comp, (str(given),), s.origin(name))
            continue
        kit = next(((root, dirs[comp]) for root, dirs in kits if comp in dirs), None)
        if kit:
            sources[comp] = Source(comp, tuple(kit[1]), f"CUDA toolkit {kit[0]}")
            toolkit = toolkit or kit[0]
            continue
        ref = pypi_wheel(comp, versions.get("cupti" if comp.startswith("cupti") else comp))
        if ref:
            unpacked = cache_root / "nvidia" / f"{ref.project}-{ref.version}"
            sources[comp] = Source(comp, (str(unpacked / ref.subdir),), f"PyPI {ref.spec}", wheel=ref.spec,
                                   cached=(unpacked / ".complete").is_file())
    return sources, toolkit


def gather(source_root: Path, settings: Settings, env: Mapping[str, str], cache_root: Path,
           missing_2024: Sequence[str] = (), lookup: ToolLookup | None = None,
           *, log: Callable[[str], None]) -> NvidiaFacts:
    """What the NVIDIA backend's files and tools are and where they come from. The ``settings`` that name them
    (Triton's TRITON_*_PATH variables, read by the settings model) are used, never the variables read again;
    ``env`` gives CUDA_HOME/CUDA_PATH and PATH. With ``lookup``,
    the wheels of cuobjdump/nvdisasm are looked for when the host has none (or ``tools_from`` is pypi), and what
    looking says (a failed try at the index) goes to ``log``."""
    nvidia = source_root / "third_party" / "nvidia"
    if not nvidia.is_dir():
        return NvidiaFacts()
    cmake = source_root / "cmake"
    versions = parse_versions(
        (cmake / "nvidia-toolchain-version.json").read_text() if (cmake / "nvidia-toolchain-version.json").is_file()
        else None,
        (cmake / "nvidia-toolchain-version.txt").read_text() if (cmake / "nvidia-toolchain-version.txt").is_file()
        else None)
    roots = cuda_roots(env)
    sources, toolkit = find_sources(settings, roots, versions, cache_root)
    headers = driver_headers(nvidia, missing_2024)
    header_dirs = [d for c in ("cudart", "cudacrt", "cupti") if c in sources for d in sources[c].dirs]
    unpacked = all(s.cached for s in sources.values())
    tools = find_tools(env, roots, settings)
    ptxas = next((p for n, p, _ in tools if n == "ptxas"), None)
    blackwell_wanted = _mentions(source_root, "ptxas-blackwell", "ptxas_blackwell")
    blackwell = ptxas_blackwell(settings, roots, ptxas) if blackwell_wanted else None
    if blackwell:
        tools = (*tools, ("ptxas-blackwell", *blackwell))
    offers, version = wheel_offers(tools, versions, cache_root, lookup, log) if lookup else ({}, None)
    headers_of = closure(headers, header_dirs) if unpacked else None
    cupti_of = closure(["cupti.h"], header_dirs) if unpacked and "cupti" in sources else None
    libs = lib_files(sources["cupti-lib"].dirs) if "cupti-lib" in sources and sources["cupti-lib"].cached else None
    return NvidiaFacts(
        versions=dict(versions),
        driver_headers=headers,
        wants_ptxas_blackwell=blackwell_wanted,
        sources=sources,
        header_files=headers_of[0] if headers_of else None,
        cupti_header_files=cupti_of[0] if cupti_of else None,
        cupti_lib_files=libs,
        tools=tools,
        toolkit=toolkit,
        inputs=_inputs(sources, tools, libs, [*(headers_of[2] if headers_of else ()),
                                               *(cupti_of[2] if cupti_of else ())]),
        machine=host_machine(),
        ptxas_version=version,
        tool_offers=offers,
    )


def wheel_offers(tools: Sequence[tuple[str, str, str]], pins: Mapping[str, str], cache_root: Path,
                 lookup: ToolLookup, log: Callable[[str], None]) -> tuple[dict[str, ToolOffer], str | None]:
    """The offers of the tools wanted from NVIDIA's wheels, and the bundled ptxas's version (read only when one is
    wanted). Its CUDA major (else the tree's ptxas pin's) below the wheels' first one: nothing is looked up.
    ``pins``: the tree's versions by tool (a tool's pin of ptxas's CUDA major is what the choice takes)."""
    offers = wanted_from_wheels(tools, cache_root, lookup)
    ptxas = next((p for n, p, _ in tools if n == "ptxas"), None)
    version = ptxas_version(ptxas, host_machine()) if offers else None
    basis = version or pins.get("ptxas")
    major = version_key(basis)[0] if basis and numeric(basis) else None
    if major is not None and major < TOOL_WHEEL_MAJOR:
        return {t: ToolOffer(t, str(cache_root / "nvidia"), problem=f"NVIDIA publishes these wheels from CUDA "
                             f"{TOOL_WHEEL_MAJOR} on") for t in offers}, version
    taken = {t: p for t in offers if numeric(p := pins.get(t, "")) and
             (major is None or version_key(p)[0] == major)}  # what pick_tool_version takes when at hand
    from tritonbuild.resolve.nvidia import pick_tool_version

    def choice(tool: str) -> Callable[[tuple[str, ...]], str | None]:
        return lambda versions: pick_tool_version(versions, ptxas=basis, pin=pins.get(tool))[0]

    return {t: tool_offer(t, cache_root, lookup, log, taken.get(t), choice(t)) for t in offers}, version


def wanted_from_wheels(tools: Sequence[tuple[str, str, str]], cache_root: Path, lookup: ToolLookup
                       ) -> dict[str, ToolOffer]:
    """The tools wanted from NVIDIA's wheels, each with an empty offer: those the host lacks, or with
    ``tools_from`` pypi every one no TRITON_<TOOL>_PATH names."""
    have = {n: how for n, _, how in tools}
    wanted = [t for t in TOOL_PROJECTS if t not in have
              or (lookup.tools_from == "pypi" and not have[t].startswith("env "))]
    return {t: ToolOffer(t, str(cache_root / "nvidia")) for t in wanted}


def _inputs(sources: Mapping[str, Source], tools: Sequence[tuple[str, str, str]], libs: Files | None,
            refused_headers: Sequence[InputFile]) -> tuple[InputFile, ...]:
    """What the plan would copy, described for ``choose.input_problem``: the tools, the dirs the TRITON_*_PATH
    variables name, the CUPTI libraries, and the headers the closures found but did not take."""
    machine = host_machine()
    out = [host_tool(path, name, how, machine) if name in TOOL_PROJECTS else describe(path, "tool", how)
           for name, path, how in tools]
    out += [describe(d, "dir", src.found_by) for src in sources.values() if src.found_by.startswith("env ")
            for d in src.dirs]
    lib_by = sources["cupti-lib"].found_by if "cupti-lib" in sources else ""
    out += [describe(Path(d) / name, "lib", lib_by) for d, name in libs or ()]
    dirs = [(d, src.found_by) for src in sources.values() for d in src.dirs]
    out += [dataclasses.replace(h, given_by=next((by for d, by in dirs if Path(h.path).is_relative_to(d)), "?"))
            for h in refused_headers]
    return tuple(out)


def _mentions(root: Path, *words: str) -> bool:
    for rel in ("third_party/nvidia/backend/compiler.py", "python/triton/knobs.py"):
        path = root / rel
        if path.is_file() and any(w in path.read_text(errors="replace") for w in words):
            return True
    return False
