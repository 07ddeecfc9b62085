"""Resolve a request into a Plan (pure: every fact about the disk, git, the host and LLVMs comes in).

``cli`` gathers facts at the edge (``facts.gather``), then calls ``resolve_plan``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from tritonbuild import __version__
from tritonbuild.errors import UserError
from tritonbuild.gather.host import HostFacts
from tritonbuild.llvm.choose import pinned_hint, resolve_llvm
from tritonbuild.nvidia import choose
from tritonbuild.plan import (
    BackendPlan,
    CMakePlan,
    LLVMPlan,
    Plan,
    SourcePlan,
    ToolchainPlan,
    WheelPlan,
    compute_key,
)
from tritonbuild.resolve import (
    backend_api,
    compilecheck,
    compilercache,
    debuginfo,
    fetchdeps,
    knownissues,
    linker,
    llvm_linkage,
    proton,
)
from tritonbuild.resolve.backends import (
    BACKEND_LLVM_TARGETS,
    CORE_LLVM_TARGETS,
    Selection,
    expand_targets,
    select_backends,
)
from tritonbuild.resolve.facts import Facts
from tritonbuild.resolve.plugins import Plugin, resolve_plugins
from tritonbuild.resolve.source import SourceInfo
from tritonbuild.settings.model import Resolved

INSTALL_COMPONENT = "tritonbuild"
GIB_PER_COMPILE_JOB = 2.5
GIB_PER_LINK_JOB = 8.0


def shim_dir(cache_root: str, name: str, path: str) -> str:
    """Where a plugin without name.conf gets a generated wrapper (name.conf + add_subdirectory of the plugin)."""
    return str(Path(cache_root) / "plugin-shims" / f"{name}-{hashlib.sha256(path.encode()).hexdigest()[:8]}")


def default_jobs(host: HostFacts) -> int:
    """min(cores, total memory / 2.5 GiB), at least 1: a Triton C++ file needs up to ~2.5 GiB to compile.

    Total (not available) memory keeps the default the same from run to run on one machine.
    """
    return max(1, min(host.cpus, int(host.mem_total_gib / GIB_PER_COMPILE_JOB)))


def default_link_jobs(host: HostFacts, jobs: int) -> int:
    """min(jobs, total memory / 8 GiB), at least 1: a static LLVM link of libtriton needs several GiB."""
    return max(1, min(jobs, int(host.mem_total_gib / GIB_PER_LINK_JOB)))


def _settings_dict(settings: Mapping[str, Resolved]) -> dict[str, dict[str, object]]:
    return {k: {"value": v.value, "origin": v.origin} for k, v in sorted(settings.items())}


def _plugin_origin(origin: str) -> str:
    return origin.replace("cli ", "")


def resolve_toolchain(s: Mapping[str, Resolved], facts: Facts) -> tuple[ToolchainPlan, list[str]]:
    host, notes = facts.host, []
    clang = s["clang"].value
    if clang == "auto":
        clang = bool(host.tool("clang") and host.tool("clang++") and host.tool("ld.lld"))
        notes.append(f"clang=auto: using {'clang+lld' if clang else 'the default compiler (clang/lld not found)'}")
    if clang:
        cc, cxx, lld = host.tool("clang"), host.tool("clang++"), host.tool("ld.lld")
        if not (cc and cxx and lld):
            raise UserError(
                f"clang+lld was asked for ({s['clang'].origin}) but clang, clang++ or ld.lld is not installed "
                "(looked on PATH and in /usr/lib/llvm-*/bin). Install them (Debian: clang-22 lld-22) or drop "
                "--clang / TRITON_BUILD_WITH_CLANG_LLD."
            )
    else:
        cc, cxx = host.tool("gcc") or host.tool("cc"), host.tool("g++") or host.tool("c++")
        if not (cc and cxx):
            raise UserError("No C/C++ compiler found (gcc/g++ or cc/c++). Install one (Debian: g++) or use --clang.")
    link_with, lld_dir = linker.choose(str(s["linker"].value), s["linker"].origin, bool(clang), host)
    cc_kind, s_cc = s["compiler_cache"], s["ccache"]
    cache, cache_tool = compilercache.choose(cc_kind.value, s_cc.value, cc_kind.origin if cc_kind.value else
                                             s_cc.origin, host.tool, notes)
    hosts = s["distcc"].value
    distcc = host.tool("distcc") if hosts else None
    compilercache.check(cache, s["ccache_remote"].value, s["ccache_remote"].origin, hosts)
    if hosts and not distcc:
        raise UserError(f"--distcc ({s['distcc'].origin}) needs distcc, which is not installed. Install it "
                        "(Debian: distcc) or drop --distcc.")
    jobs = s["jobs"].value or (compilercache.fleet_jobs(hosts) if hosts else default_jobs(host))
    link_jobs = s["link_jobs"].value or default_link_jobs(host, jobs)
    proton = s["proton"].value
    src = facts.source
    if proton and not src.has_proton:
        raise UserError(
            f"Proton was asked for ({s['proton'].origin}) but this source has no third_party/proton. Drop "
            "--proton / TRITON_BUILD_PROTON."
        )
    if proton is None:
        proton = src.has_proton and choose.cupti_available(facts.nvidia, bool(s["offline"].value))
        if src.has_proton and not proton:
            cupti = facts.nvidia.sources.get("cupti")
            why = f"{cupti.wheel} from PyPI is not cached and the build is offline" if cupti else "none found"
            notes.append(f"proton is off: no CUPTI headers ({why}; set TRITON_CUPTI_INCLUDE_PATH or CUDA_HOME, or "
                         "build once online)")
    return (
        ToolchainPlan(
            c_compiler=cc,
            cxx_compiler=cxx,
            linker=link_with,
            lld_dir=lld_dir,
            ccache=cache_tool if cache == "ccache" else None,
            compiler_cache=cache,
            sccache=cache_tool if cache == "sccache" else None,
            distcc=distcc,
            distcc_hosts=hosts,
            jobs=int(jobs),
            link_jobs=int(link_jobs),
            build_type=str(s["build_type"].value),
            debug_info=debuginfo.choose(str(s["debug_info"].value), s["debug_info"].origin,
                                        str(s["build_type"].value)),
            proton=bool(proton),
            offline=bool(s["offline"].value),
            mem_total_gib=host.mem_total_gib,
        ),
        notes,
    )


def wheel_version(src: SourceInfo, suffix: str | None, scheme: str = "setup", epoch: int | None = None) -> str:
    """Triton's version plus the scheme's suffix, then TRITON_WHEEL_VERSION_SUFFIX (setup.py's rule: a second
    '+' becomes '-')."""
    import time

    base = src.version or "0.0.0"
    git = f"+git{src.git.commit[:8]}" if src.git else ""
    when = epoch if epoch is not None else (src.git.commit_time if src.git else None)
    if scheme in ("date", "date+git"):
        if when is None:
            raise UserError(f"The version scheme {scheme!r} needs a date: build from a git checkout or set "
                            "SOURCE_DATE_EPOCH.")
        base += ".dev" + time.strftime("%Y%m%d", time.gmtime(when))
    if scheme == "setup":
        base += git if src.git and not (src.git.branch or "").startswith("release") else ""
    elif scheme in ("git", "date+git"):
        base += git
    env_sfx = suffix or ""
    if "+" in base and "+" in env_sfx:
        env_sfx = env_sfx.replace("+", "-")
    return base + env_sfx


def resolve_plan(settings: Mapping[str, Resolved], facts: Facts, env: Mapping[str, str], *,
                 editable: bool = False) -> Plan:
    src = facts.source
    notes: list[str] = []
    warnings: list[str] = []
    s = settings

    # 1. in-tree backends
    sel = _in_tree_step(s, src, notes)

    # 2. plugins
    origin = _plugin_origin(s["plugin_dirs"].origin)
    plugins, pnotes, pwarn = resolve_plugins(
        [(p, origin) for p in s["plugin_dirs"].value],
        cwd=Path(facts.cwd),
        in_tree=src.backend_names,
        source_commit=src.git.commit if src.git else None,
        git_states=facts.plugin_git,
    )
    notes.extend(pnotes)
    warnings.extend(pwarn)

    # 3. toolchain (proton decides the tuple)
    toolchain, tnotes = resolve_toolchain(s, facts)
    notes.extend(tnotes)
    nv = choose.resolve(facts.nvidia, names=sel.names, proton=toolchain.proton, offline=toolchain.offline,
                        bundle_tools=bool(s["bundle_nvidia_tools"].value), compile_headers=src.nvidia_missing_headers)
    notes.extend(nv.notes)
    warnings.extend(nv.warnings)

    # 4. the backends tuple and its limit
    tup = backends_tuple(src, sel.names, toolchain.proton, plugins)

    # 5. LLVM
    machine = facts.host.machine
    llvm = _llvm_step(s, facts, env, sel.names, plugins, editable, notes, warnings)
    if src.git and src.git.dirty:
        warnings.append(f"the source {src.root} has uncommitted changes; the wheel records it as dirty")

    if facts.default_pin and facts.default_pin != src.pin.llvm_hash:
        notes.append(
            f"the source pins LLVM {src.pin.short}; tritonbuild's default recipe pins {facts.default_pin[:8]} "
            "(its llvm-hash.txt). The source's own pin is what counts for this build."
        )

    # 6. CMake
    epoch = _source_date_epoch(s, src, env)
    defines = tuple(sorted({**dict(_defines(s, facts, sel.names, plugins, toolchain, llvm)),
                            **llvm_linkage.defines(s, llvm, llvm.link), **nv.defines}.items()))
    if toolchain.proton:
        proton.preflight(src.proton_requires, dict(defines), s["cmake_args"].value)
    selected = [f"third_party/{n}" for n in sel.names] + (["third_party/proton"] if toolchain.proton else [])
    ut = any(re.fullmatch(r"-DTRITON_BUILD_UT(:BOOL)?=(ON|1|TRUE|YES)", str(a), re.I) for a in s["cmake_args"].value)
    deps, dep_defines, dep_warnings = fetchdeps.resolve(facts.fetch_decls, facts.deps_supplied,
                                                        selected_dirs=selected, ut=ut, offline=toolchain.offline,
                                                        cmake_dir=facts.cmake_dir)
    warnings.extend(dep_warnings)
    cmake, key, fingerprint = _cmake_plan(s, facts, toolchain, plugins, epoch, {**dict(defines), **dep_defines},
                                          env)

    # 7. wheel
    backends = backend_api.attach(s, facts.api, _backend_plans(src, sel.names, plugins, machine), warnings)
    wheel = _wheel_plan(s, src, facts, epoch, backends, proton=toolchain.proton)
    commands = _commands(cmake, toolchain)
    check = compilecheck.plan_check(bool(s["compile_check"].value), int(s["compile_check_timeout"].value),
                                    tuple(b.name for b in backends), s["compile_check"].origin, src.version)
    return Plan(
        tritonbuild_version=__version__,
        source=_source_plan(src),
        backends=backends,
        backends_tuple=tup,
        llvm=llvm,
        toolchain=toolchain,
        wheel=wheel,
        cmake=cmake,
        python=facts.host.python,
        cache_root=facts.cache_root,
        settings=_settings_dict(s),
        key=key,
        fingerprint=fingerprint,
        reproducible=bool(s["reproducible"].value),
        strip=bool(s["strip"].value),
        repair=tuple(s["repair_exclude"].value) if s["repair"].value else None,
        notes=tuple(notes),
        warnings=tuple(warnings),
        commands=commands,
        nvidia=nv.parts,
        deps=deps,
        compile_check=check,
    )


def _in_tree_step(s: Mapping[str, Resolved], src: SourceInfo, notes: list[str]) -> Selection:
    """The in-tree backends asked for (or the source's default list), refusing one whose submodule is empty."""
    asked = s["backends"]
    text, where = ((";".join(src.default_backends), "the source's default backend list") if asked.value is None
                   else (str(asked.value), asked.origin))
    sel = select_backends(text, src.backend_names, src.required_backends, strict=bool(s["strict"].value),
                          where=where)
    notes.extend(sel.notes)
    for sub, users in src.missing_submodules:
        needed_by = [u for u in users if u in sel.names]
        if needed_by:
            raise UserError(
                f"The backend {', '.join(needed_by)} builds the git submodule {sub}, which is not checked out in "
                f"{src.root} (it is empty). Run `git -C {src.root} submodule update --init {sub}`, or leave "
                f"{', '.join(needed_by)} out of --backends."
            )
        notes.append(f"git submodule {sub} is not checked out (no selected backend uses it)")
    return sel


def _wheel_plan(s: Mapping[str, Resolved], src: SourceInfo, facts: Facts, epoch: int | None,
                backends: tuple[BackendPlan, ...], *, proton: bool) -> WheelPlan:
    scripts: tuple[tuple[str, str], ...] = ()
    if proton:
        scripts = (("proton", "triton.profiler.proton:main"), ("proton-viewer", "triton.profiler.viewer:main"))
    return WheelPlan(
        name=str(s["wheel_name"].value),
        version=wheel_version(src, s["version_suffix"].value, str(s["version_scheme"].value), epoch),
        requires_python=str(s["requires_python"].value),
        entry_points=tuple((b.name, f"triton.backends.{b.name}") for b in backends),
        scripts=scripts,
        out_dir=str(Path(facts.cwd) / "dist"),
        bundle_libs=bool(s["bundle_libs"].value),
        system_libs=tuple(str(n) for n in s["repair_exclude"].value),
        zip_level=_zip_level(s["zip_level"]),
        requires=src.install_requires,
    )


def backends_tuple(src: SourceInfo, names: tuple[str, ...], proton_built: bool,
                   plugins: tuple[Plugin, ...]) -> tuple[str, ...]:
    """TRITON_BACKENDS_TUPLE (codegen backends, proton, plugins), refused before any build when over the limit."""
    proton_in = src.proton_in_tuple == "always" or (src.proton_in_tuple == "when-built" and proton_built)
    tup = (*names, *(["proton"] if proton_in else []), *(p.name for p in plugins))
    if len(tup) > src.tuple_limit:
        why = "its python/src/main.cc" if src.tuple_limit_known else "the default (main.cc has no FOR_EACH_ARG_N)"
        proton_why = ""
        if proton_in:
            proton_why = (" 'proton' is always part of it in this source." if src.proton_in_tuple == "always"
                          else " Dropping proton (--no-proton) frees one entry.")
        raise UserError(
            f"Too many backends for this source: TRITON_BACKENDS_TUPLE would hold {len(tup)} entries "
            f"({', '.join(tup)}) but {why} allows at most {src.tuple_limit}; the C++ build would fail deep in "
            f"main.cc.{proton_why} Select fewer backends or plugins."
        )
    return tup


def _llvm_step(s: Mapping[str, Resolved], facts: Facts, env: Mapping[str, str], names: tuple[str, ...],
               plugins: tuple[Plugin, ...], editable: bool, notes: list[str], warnings: list[str]) -> LLVMPlan:
    """The LLVM targets the selection needs, the LLVM chosen for them, how libtriton links it."""
    src, machine = facts.source, facts.host.machine
    users = {n: expand_targets(BACKEND_LLVM_TARGETS.get(n, ()), machine) for n in names}
    users.update({p.name: expand_targets(p.llvm_targets, machine) for p in plugins})
    targets = expand_targets([*CORE_LLVM_TARGETS, *(t for ts in users.values() for t in ts)], machine)
    need_lld = (src.core_finds_lld or any(src.backend(n).finds_lld for n in names)
                or any(p.finds_lld for p in plugins))
    llvm = resolve_llvm(s, facts, targets, env, need_lld, users)
    if llvm.problem:
        warnings.append(llvm.problem)
    elif llvm.is_pinned is not True:
        what = "does not record its commit" if llvm.is_pinned is None else f"is at {llvm.revision}"
        if s["require_pinned_llvm"].value:
            raise UserError(
                f"LLVM {llvm.version} at {llvm.prefix} is not the source's pinned commit {llvm.pinned_hash[:12]} (it "
                f"{what}), and this build requires the pin ({s['require_pinned_llvm'].origin}): MLIR behaviour "
                "that differs from the pin can make a wheel that builds and imports hang on real kernels. "
                f"{pinned_hint(llvm, src, names)} Or accept this LLVM with --no-require-pinned-llvm (recipe: "
                "require_pinned_llvm = false); the compile check still runs."
            )
        warnings.append(
            f"LLVM {llvm.version} at {llvm.prefix} is not the pinned commit {llvm.pinned_hash[:12]} (it {what}); "
            "the build adds -Wno-error=deprecated-declarations, and a source that uses APIs this LLVM changed "
            f"will fail to compile. {pinned_hint(llvm, src, names)}"
        )
    _known_issues(s, facts, llvm, warnings)
    link, link_why = llvm_linkage.llvm_link(s, llvm, editable=editable)
    notes.extend(llvm_linkage.notes(s, llvm, link, link_why))
    return replace(llvm, link=link)


def _known_issues(s: Mapping[str, Resolved], facts: Facts, llvm: LLVMPlan, warnings: list[str]) -> None:
    """A source/LLVM pair known not to work (tritonbuild.resolve.knownissues): refused while the compile check is on
    (it would fail after the whole build), a warning otherwise."""
    found = knownissues.matching(facts.known_source, facts.known_llvm.get(llvm.prefix or "", ()))
    check = bool(s["compile_check"].value)
    for issue in found:
        text = knownissues.message(issue, f"{llvm.version} at {llvm.prefix}", check)
        if check:
            raise UserError(text)
        warnings.append(text)


def _source_plan(src: SourceInfo) -> SourcePlan:
    return SourcePlan(
        root=src.root, generation=src.generation, version=src.version,
        commit=src.git.commit if src.git else None, dirty=src.git.dirty if src.git else None,
        branch=src.git.branch if src.git else None, commit_time=src.git.commit_time if src.git else None,
        tuple_limit=src.tuple_limit, tuple_limit_known=src.tuple_limit_known, has_proton=src.has_proton,
        proton_in_tuple=src.proton_in_tuple, in_tree_backends=src.backend_names,
        default_backends=src.default_backends, required_backends=src.required_backends,
        build_requires=src.build_requires,
    )


def _backend_plans(src: SourceInfo, names: tuple[str, ...], plugins: tuple[Plugin, ...],
                   machine: str) -> tuple[BackendPlan, ...]:
    """The selected in-tree backends, then the plugins, as the plan and the wheel's entry points list them."""
    return tuple(
        [BackendPlan(name=n, origin="in-tree", path=src.backend(n).path, language=src.backend(n).language,
                     tools=src.backend(n).tools,
                     llvm_targets=expand_targets(BACKEND_LLVM_TARGETS.get(n, ()), machine),
                     commit=src.git.commit if src.git else None, dirty=src.git.dirty if src.git else None)
         for n in names]
        + [BackendPlan(name=p.name, origin="plugin", path=p.path, language=p.language, tools=p.tools,
                       llvm_targets=expand_targets(p.llvm_targets, machine),
                       commit=p.git.commit if p.git else None, dirty=p.git.dirty if p.git else None,
                       name_from=p.name_from, given_as=p.given_as, triton_pin=p.triton_pin,
                       triton_pin_from=p.triton_pin_from, pin_matches_source=p.pin_matches_source)
           for p in plugins]
    )


def _cmake_plan(s: Mapping[str, Resolved], facts: Facts, toolchain: ToolchainPlan, plugins: tuple[Plugin, ...],
                epoch: int | None, all_defines: Mapping[str, str],
                env: Mapping[str, str]) -> tuple[CMakePlan, str, str]:
    """The CMake side of the plan, with the key of its build dir and its path-independent fingerprint."""
    src = facts.source
    defines = tuple(sorted(all_defines.items()))
    shims = tuple((shim_dir(facts.cache_root, p.name, p.path), p.path) for p in plugins
                  if p.name_from != "name.conf")
    extra_args = tuple(str(a) for a in s["cmake_args"].value)
    key = compute_key(source_root=src.root, python=facts.host.python, defines=defines, extra_args=extra_args,
                      build_type=toolchain.build_type, targets=("triton",))
    fingerprint = compute_key(
        source_root="<source>", python=facts.host.python,
        defines=tuple((k, _placeholders(v, src.root, facts.cache_root, plugins)) for k, v in defines),
        extra_args=extra_args, build_type=toolchain.build_type, targets=("triton",))
    build_dir = str(Path(facts.cache_root) / "build" / key)
    cmake = CMakePlan(
        source_dir=src.root,
        build_dir=build_dir,
        generator="Ninja",
        defines=defines,
        extra_args=extra_args,
        build_targets=("triton", *extra_targets(s["targets"])),
        install_component=INSTALL_COMPONENT,
        env=tuple(_cmake_env(s, facts, toolchain, plugins, epoch, build_dir, env)),
        plugin_shims=shims,
    )
    return cmake, key, fingerprint


def _cmake_env(s: Mapping[str, Resolved], facts: Facts, toolchain: ToolchainPlan, plugins: tuple[Plugin, ...],
               epoch: int | None, build_dir: str, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """What the build's environment adds: a ccache remote, SOURCE_DATE_EPOCH, ccache's base dir."""
    out: list[tuple[str, str]] = []
    if s["ccache_remote"].value and not toolchain.ccache:
        raise UserError(f"A ccache remote ({s['ccache_remote'].origin}) needs ccache, which is off or not "
                        "installed. Install ccache (Debian: ccache) or drop --ccache-remote.")
    if s["reproducible"].value:
        if epoch is None:
            raise UserError("A reproducible build needs SOURCE_DATE_EPOCH: build from a git checkout (its commit "
                            "date is used) or set SOURCE_DATE_EPOCH.")
        out.append(("SOURCE_DATE_EPOCH", str(epoch)))
    # One base dir above the source, the plugins and the build dirs: the cache rewrites paths under it
    # relative to the build dir, so a fresh build dir (same depth under a cache root) hits the cache.
    base = os.path.commonpath([facts.source.root, facts.cache_root, *(p.path for p in plugins)])
    return out + compilercache.build_env(toolchain.compiler_cache, base, remote=s["ccache_remote"].value,
                                         distcc=toolchain.distcc, distcc_hosts=toolchain.distcc_hosts,
                                         log_dir=build_dir, env=env)


_TARGET_NAME = re.compile(r"[A-Za-z0-9_.+-]+")


def extra_targets(given: Resolved) -> tuple[str, ...]:
    """CMake targets to build besides ``triton`` (each once, in the order given). They do not change the build
    dir: adding ``--target triton-opt`` to a dev build reuses its configured tree."""
    out: list[str] = []
    for raw in given.value:
        name = str(raw).strip()
        if not _TARGET_NAME.fullmatch(name):
            raise UserError(f"The CMake target {raw!r} (from {given.origin}) is not a target name: CMake targets "
                            "are letters, digits and _ . + -. Give one name per --target, e.g. --target "
                            "triton-opt --target triton-shared-opt.")
        if name != "triton" and name not in out:
            out.append(name)
    return tuple(out)


def _source_date_epoch(s: Mapping[str, Resolved], src: SourceInfo, env: Mapping[str, str]) -> int | None:
    given = env.get("SOURCE_DATE_EPOCH")
    if given:
        if not given.strip().isdigit():
            raise UserError(f"SOURCE_DATE_EPOCH={given!r} must be a whole number of seconds since 1970.")
        return int(given)
    return src.git.commit_time if src.git else None


def _env_headers(facts: Facts) -> list[tuple[str, str]]:
    """Header dirs of the build environment that reach the objects: pybind11's (in the build venv) and the
    interpreter's include dir. Reproducible builds map them to fixed names."""
    out = []
    if facts.host.pybind11_cmake_dir:  # <site>/pybind11/share/cmake/pybind11
        out.append(("pybind11", str(Path(facts.host.pybind11_cmake_dir).parents[2] / "include")))
    if facts.host.python_include:
        out.append(("python-include", facts.host.python_include))
    return out


def _placeholders(value: str, source: str, cache: str, plugins: tuple[Plugin, ...]) -> str:
    """A define's value with machine-specific directories replaced, for the path-independent fingerprint."""
    for p in plugins:
        value = value.replace(p.path, f"<plugin:{p.name}>")
    return value.replace(source, "<source>").replace(cache, "<cache>")


def _defines(
    s: Mapping[str, Resolved],
    facts: Facts,
    names: tuple[str, ...],
    plugins: tuple[Plugin, ...],
    tc: ToolchainPlan,
    llvm: LLVMPlan,
) -> tuple[tuple[str, str], ...]:
    src = facts.source
    d: dict[str, str] = {
        "TRITON_BUILD_PYTHON_MODULE": "ON",
        "TRITON_CODEGEN_BACKENDS": ";".join(names),
        "TRITON_BUILD_PROTON": "ON" if tc.proton else "OFF",
        "TRITON_BUILD_UT": "OFF",
        "TRITON_BUILD_WITH_CCACHE": "OFF",  # tritonbuild sets the launcher itself (and CCACHE_BASEDIR)
        "CMAKE_EXPORT_COMPILE_COMMANDS": "ON",
        "CMAKE_PROJECT_triton_INCLUDE": str(Path(facts.cmake_dir) / "TritonBuildInject.cmake"),
        "TRITONBUILD_INSTALL_COMPONENT": INSTALL_COMPONENT,
        "TRITONBUILD_BACKENDS": ";".join(
            [f"{n}={src.backend(n).path}" for n in names] + [f"{p.name}={p.path}" for p in plugins]
        ),
        "TRITON_PARALLEL_LINK_JOBS": str(tc.link_jobs),
    }
    if plugins:
        d["TRITON_PLUGIN_DIRS"] = ";".join(
            p.path if p.name_from == "name.conf" else shim_dir(facts.cache_root, p.name, p.path) for p in plugins
        )
    if tc.c_compiler:
        d["CMAKE_C_COMPILER"] = tc.c_compiler
    if tc.cxx_compiler:
        d["CMAKE_CXX_COMPILER"] = tc.cxx_compiler
    if link_flags := linker.flags(tc.linker, tc.lld_dir):
        for kind in ("EXE", "MODULE", "SHARED"):
            d[f"CMAKE_{kind}_LINKER_FLAGS"] = link_flags
    if tc.debug_flag:
        d["TRITONBUILD_DEBUG_FLAG"] = tc.debug_flag  # a compile option of the injected CMake: after the flags
    if tc.launcher:
        d["CMAKE_C_COMPILER_LAUNCHER"] = tc.launcher
        d["CMAKE_CXX_COMPILER_LAUNCHER"] = tc.launcher
    if tc.offline:
        d["TRITON_OFFLINE_BUILD"] = "ON"
    if s["reproducible"].value:
        d["TRITONBUILD_REPRODUCIBLE"] = "ON"  # the injected CMake adds -ffile-prefix-map for source and build
        d["TRITONBUILD_PREFIX_MAPS"] = ";".join(f"{name}={path}" for name, path in _env_headers(facts))
    if llvm.prefix:
        d["LLVM_SYSPATH"] = llvm.prefix
        d["LLVM_INCLUDE_DIRS"] = f"{llvm.prefix}/include"
        d["LLVM_LIBRARY_DIR"] = f"{llvm.prefix}/lib"
        # the injected CMake applies the fix only when the LLVM says LLVM_LINK_LLVM_DYLIB
        d["TRITONBUILD_LLVM_DYLIB_FIX"] = "ON"
        if llvm.is_pinned is not True:
            d["TRITONBUILD_DEPRECATED_NOT_ERROR"] = "ON"  # -Wno-error=deprecated-declarations, see the CMake
    json_prefix = s["json_syspath"].value or facts.json_prefix
    if json_prefix:
        d["JSON_SYSPATH"] = str(json_prefix)
        d["JSON_INCLUDE_DIR"] = f"{json_prefix}/include"
    if facts.host.pybind11_cmake_dir:
        d["pybind11_DIR"] = facts.host.pybind11_cmake_dir
    ptxas = s["ptxas"].value or facts.host.tool("ptxas")
    if ptxas and "nvidia" in names:
        d["TRITON_PTXAS_PATH"] = str(ptxas)
    if tc.proton:
        given = {setting: s[setting].value for setting, _env, _dir in proton.INCLUDE_DIRS.values()}
        d.update(proton.include_dirs(given, src.root, src.proton_requires))
    if src.generation == "G3":
        d["TRITON_CACHE_PATH"] = str(Path(facts.cache_root) / "triton-cache")
        d["TRITON_VERSION"] = src.version or "0.0.0"
    return tuple(sorted(d.items()))


def _commands(cmake: CMakePlan, tc: ToolchainPlan) -> tuple[str, ...]:
    """The equivalent CMake commands (scikit-build-core runs these steps for ``build``)."""
    cfg = ["cmake", "-S", cmake.source_dir, "-B", f"{cmake.build_dir}/cmake", "-G", cmake.generator,
           f"-DCMAKE_BUILD_TYPE={tc.build_type}"]
    cfg += [f"-D{k}={v}" for k, v in cmake.defines] + list(cmake.extra_args)
    return (
        shlex.join(cfg),
        shlex.join(["cmake", "--build", f"{cmake.build_dir}/cmake", "--target", *cmake.build_targets,
                    "--", f"-j{tc.jobs}"]),
        shlex.join(["cmake", "--install", f"{cmake.build_dir}/cmake", "--component", cmake.install_component]),
        shlex.join([sys.executable, "-m", "tritonbuild", "build"]) + "  # packages the wheel via scikit-build-core",
    )


def _zip_level(given: Resolved) -> int:
    level = int(given.value)
    if not 0 <= level <= 9:
        raise UserError(f"The wheel's zip level {level} ({given.origin}) is not 0-9 (0 stores, 1 is fastest, 9 is "
                        "smallest; the default is 6).")
    return level
