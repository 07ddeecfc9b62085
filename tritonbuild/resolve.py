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
from dataclasses import dataclass, field, replace
from pathlib import Path

from tritonbuild import __version__, fetchdeps, linkage, proton
from tritonbuild.apicheck import BackendApi
from tritonbuild.backends import BACKEND_LLVM_TARGETS, CORE_LLVM_TARGETS, expand_targets, select_backends
from tritonbuild.errors import UserError
from tritonbuild.host import HostFacts
from tritonbuild.llvm.probe import LLVMInstall
from tritonbuild.llvm.requirement import check, host_suffix, is_pinned
from tritonbuild.nvidia import choose
from tritonbuild.nvidia.discover import NvidiaFacts
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
from tritonbuild.plugins import Plugin, resolve_plugins
from tritonbuild.settings import Resolved
from tritonbuild.source import GitState, SourceInfo

INSTALL_COMPONENT = "tritonbuild"
GIB_PER_COMPILE_JOB = 2.5
GIB_PER_LINK_JOB = 8.0


@dataclass(frozen=True)
class Facts:
    source: SourceInfo
    host: HostFacts
    llvm_explicit: LLVMInstall | None  # probed --llvm PATH / LLVM_SYSPATH
    llvm_system: tuple[LLVMInstall, ...]  # probed system LLVMs, newest first
    plugin_git: Mapping[str, GitState | None]
    cwd: str
    cmake_dir: str  # tritonbuild's injected CMake code
    cache_root: str
    json_prefix: str | None = None
    default_pin: str | None = None  # the LLVM pin of tritonbuild's default recipe (llvm-hash.txt)
    llvm_cached: tuple[LLVMInstall, ...] = ()  # probed cache entries at the pinned commit
    llvm_stale: tuple[tuple[str, str], ...] = ()  # cache entries at the pin whose sha256 the pin contradicts
    nvidia: NvidiaFacts = field(default_factory=NvidiaFacts)  # CUDA headers, CUPTI, NVIDIA tools on this machine
    api: Mapping[str, BackendApi] = field(default_factory=dict)  # compatibility check per backend path
    fetch_decls: tuple[fetchdeps.Decl, ...] = ()  # FetchContent/ExternalProject declarations of source and plugins
    deps_supplied: Mapping[str, fetchdeps.Supplied] = field(default_factory=dict)  # --dep, by lowercase name


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
        linker = "lld"
    else:
        cc, cxx, linker = host.tool("gcc") or host.tool("cc"), host.tool("g++") or host.tool("c++"), "default"
        if not (cc and cxx):
            raise UserError("No C/C++ compiler found (gcc/g++ or cc/c++). Install one (Debian: g++) or use --clang.")
    ccache_setting = s["ccache"]
    ccache = host.tool("ccache")
    if ccache_setting.value is True and not ccache:
        raise UserError(
            f"ccache was asked for ({ccache_setting.origin}) but it is not on PATH. Install it (Debian: ccache) "
            "or drop the request."
        )
    if ccache_setting.value is False:
        ccache = None
    elif ccache_setting.value is None and not ccache:
        notes.append("ccache not found: rebuilds in a fresh build dir will recompile everything")
    jobs = s["jobs"].value or default_jobs(host)
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
            linker=linker,
            ccache=ccache,
            jobs=int(jobs),
            link_jobs=int(link_jobs),
            build_type=str(s["build_type"].value),
            proton=bool(proton),
            offline=bool(s["offline"].value),
            mem_total_gib=host.mem_total_gib,
        ),
        notes,
    )


def _download_blocker(
    s: Mapping[str, Resolved], facts: Facts, targets: tuple[str, ...], suffix: str | None
) -> str | None:
    """Why the prebuilt download cannot supply this plan's LLVM, or None when it can."""
    from tritonbuild.llvm.download import PREBUILT_TARGETS

    pin = facts.source.pin
    if s["offline"].value:
        return "offline (TRITON_OFFLINE_BUILD/--offline)"
    if not suffix:
        return "no prebuilt LLVM for this platform"
    extra = [t for t in targets if t not in PREBUILT_TARGETS]
    if extra:
        return f"prebuilt LLVMs hold only the host, NVPTX and AMDGPU targets; this plan also needs {', '.join(extra)}"
    if suffix not in pin.sha256 and not s["allow_unpinned"].value:
        return (f"the pin ({Path(pin.path).name}) has no sha256 for {suffix}, so a download cannot be verified "
                "(--allow-unpinned accepts it)")
    return None


def _download_refusal(short: str, blocker: str, targets: tuple[str, ...], users: Mapping[str, tuple[str, ...]],
                      root: str) -> str:
    """Why the prebuilt cannot serve, and what to do instead: for missing targets, which backends need them, the
    prebuilt for the others, or a source build with all of them."""
    from tritonbuild.llvm.download import PREBUILT_TARGETS

    extra = [t for t in targets if t not in PREBUILT_TARGETS]
    if not extra:
        return (f"--llvm download cannot supply LLVM {short}: {blocker}. Use --llvm system, --llvm source or "
                "--llvm PREFIX.")
    needing = [n for n, ts in users.items() if set(ts) & set(extra)]
    others = ";".join(n for n in users if n not in needing)
    fetch = (f"`tritonbuild llvm fetch --source {root} --backends '{others}'` fetches the prebuilt for the other "
             "backends; " if others else "")
    who = ", ".join(needing) or "this plan"
    return (f"The prebuilt LLVM {short} holds only the host, NVPTX and AMDGPU targets, and {who} also needs "
            f"{', '.join(extra)}. {fetch}`tritonbuild llvm build --source {root} --backends '{';'.join(users)}'` "
            "builds the pinned LLVM with every target this plan needs (hours on 2 cores).")


def resolve_llvm(
    s: Mapping[str, Resolved], facts: Facts, targets: tuple[str, ...], env: Mapping[str, str], need_lld: bool = True,
    users: Mapping[str, tuple[str, ...]] | None = None,
) -> LLVMPlan:
    """auto: an explicit prefix, else a cached LLVM at the pinned commit, else the prebuilt download, else a
    system LLVM (with a warning that it is not the pinned commit), else a problem that says what to run."""
    pin = facts.source.pin
    suffix = host_suffix(facts.host, env)
    choice = str(s["llvm"].value)
    rejected: list[tuple[str, str]] = []
    chosen: LLVMInstall | None = None
    strategy, prefix, pinned = "none", None, None
    problem: str | None = None
    req_root = Path(facts.cache_root)
    if choice not in ("auto", "system", "download", "source"):
        inst = facts.llvm_explicit
        assert inst is not None, "facts.gather probes an explicit LLVM prefix"
        why = check(inst, targets, need_lld)
        if why:
            raise UserError(
                f"The LLVM at {inst.prefix} (from {s['llvm'].origin}) cannot build this plan: {why}. Point "
                f"--llvm/LLVM_SYSPATH at an LLVM prefix with MLIR{' and LLD' if need_lld else ''}, or run "
                "`tritonbuild llvm status`."
            )
        chosen, strategy = inst, "prefix"
    if chosen is None and choice == "auto":
        rejected.extend(facts.llvm_stale)
        for inst in facts.llvm_cached:
            why = check(inst, targets, need_lld)
            if why:
                rejected.append((inst.prefix, why))
            else:
                chosen, strategy = inst, "cached"
                break
    if chosen is None and choice in ("auto", "download"):
        blocker = _download_blocker(s, facts, targets, suffix)
        if blocker is None:
            strategy, pinned = "download", True
            prefix = str(req_root / "llvm" / pin.archive_name(suffix or "").removesuffix(".tar.gz"))
        elif choice == "download":
            raise UserError(_download_refusal(pin.short, blocker, targets, users or {}, facts.source.root))
        else:
            rejected.append(("prebuilt download", blocker))
    if choice == "source":
        from tritonbuild.llvm.cache import LLVMRequest, source_entry

        strategy, pinned = "source", True
        prefix = str(source_entry(LLVMRequest(pin.llvm_hash, None, {}, None, targets, req_root, "",
                                              assertions=bool(s["llvm_assertions"].value))))
    if chosen is None and strategy == "none" and choice in ("auto", "system"):
        for inst in facts.llvm_system:
            why = check(inst, targets, need_lld)
            if why:
                rejected.append((inst.prefix, why))
                continue
            chosen, strategy = inst, "system"
            break
        if chosen is None:
            tried = "; ".join(f"{p}: {w}" for p, w in rejected) or "none found"
            problem = (
                f"No usable LLVM for pin {pin.short} with targets {' '.join(targets)} ({tried}). Install a system "
                "LLVM (Debian: llvm-22-dev libmlir-22-dev mlir-22-tools liblld-22-dev), pass --llvm PREFIX / "
                f"LLVM_SYSPATH, or build the pinned one: tritonbuild llvm build --source {facts.source.root}"
            )
    if chosen is not None:
        prefix = chosen.prefix
        pinned = is_pinned(chosen, pin.llvm_hash)
    return LLVMPlan(
        pin_file=pin.path,
        pinned_hash=pin.llvm_hash,
        build_number=pin.build_number,
        sha256=dict(pin.sha256),
        host_suffix=suffix,
        archive=pin.archive_name(suffix) if suffix else None,
        required_targets=targets,
        needs_lld=need_lld,
        strategy=strategy,
        found_by=chosen.found_by if chosen else (strategy if prefix else None),
        prefix=prefix,
        version=chosen.version if chosen else None,
        targets_built=chosen.targets_built if chosen else (),
        link_dylib=chosen.link_dylib if chosen else False,
        static_libs=chosen.static_libs if chosen else True,
        static_missing=chosen.static_missing if chosen else (),
        revision=chosen.revision if chosen else (pin.llvm_hash if prefix else None),
        is_pinned=pinned,
        problem=problem,
        rejected=tuple(rejected),
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
    if s["backends"].value is None:
        sel = select_backends(";".join(src.default_backends), src.backend_names, src.required_backends,
                              strict=bool(s["strict"].value), where="the source's default backend list")
    else:
        sel = select_backends(str(s["backends"].value), src.backend_names, src.required_backends,
                              strict=bool(s["strict"].value), where=s["backends"].origin)
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
    proton_in = src.proton_in_tuple == "always" or (src.proton_in_tuple == "when-built" and toolchain.proton)
    tup = (*sel.names, *(["proton"] if proton_in else []), *(p.name for p in plugins))
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

    # 5. LLVM
    machine = facts.host.machine
    wanted = list(CORE_LLVM_TARGETS)
    for name in sel.names:
        wanted.extend(BACKEND_LLVM_TARGETS.get(name, ()))
    for p in plugins:
        wanted.extend(p.llvm_targets)
    targets = expand_targets(wanted, machine)
    need_lld = (src.core_finds_lld or any(src.backend(n).finds_lld for n in sel.names)
                or any(p.finds_lld for p in plugins))
    target_users = {n: expand_targets(BACKEND_LLVM_TARGETS.get(n, ()), machine) for n in sel.names}
    target_users.update({p.name: expand_targets(p.llvm_targets, machine) for p in plugins})
    llvm = resolve_llvm(s, facts, targets, env, need_lld, target_users)
    if llvm.problem:
        warnings.append(llvm.problem)
    elif llvm.is_pinned is not True:
        what = "does not record its commit" if llvm.is_pinned is None else f"is at {llvm.revision}"
        warnings.append(
            f"LLVM {llvm.version} at {llvm.prefix} is not the pinned commit {llvm.pinned_hash[:12]} (it {what}); "
            "the build adds -Wno-error=deprecated-declarations, and a source that uses APIs this LLVM changed "
            f"will fail to compile. {_pinned_hint(llvm, src, sel.names)}"
        )
    if src.git and src.git.dirty:
        warnings.append(f"the source {src.root} has uncommitted changes; the wheel records it as dirty")
    link, link_why = linkage.llvm_link(s, llvm, editable=editable)
    llvm = replace(llvm, link=link)
    notes.extend(linkage.notes(s, llvm, link, link_why))

    if facts.default_pin and facts.default_pin != src.pin.llvm_hash:
        notes.append(
            f"the source pins LLVM {src.pin.short}; tritonbuild's default recipe pins {facts.default_pin[:8]} "
            "(its llvm-hash.txt). The source's own pin is what counts for this build."
        )

    # 6. CMake
    epoch = _source_date_epoch(s, src, env)
    defines = tuple(sorted({**dict(_defines(s, facts, sel.names, plugins, toolchain, llvm)),
                            **linkage.defines(s, llvm, link), **nv.defines}.items()))
    if toolchain.proton:
        proton.preflight(src.proton_requires, dict(defines))
    selected = [f"third_party/{n}" for n in sel.names] + (["third_party/proton"] if toolchain.proton else [])
    ut = any(re.fullmatch(r"-DTRITON_BUILD_UT(:BOOL)?=(ON|1|TRUE|YES)", str(a), re.I) for a in s["cmake_args"].value)
    deps, dep_defines, dep_warnings = fetchdeps.resolve(facts.fetch_decls, facts.deps_supplied,
                                                        selected_dirs=selected, ut=ut, offline=toolchain.offline)
    warnings.extend(dep_warnings)
    defines = tuple(sorted({**dict(defines), **dep_defines}.items()))
    shims = tuple((shim_dir(facts.cache_root, p.name, p.path), p.path) for p in plugins
                  if p.name_from != "name.conf")
    extra_args = tuple(str(a) for a in s["cmake_args"].value)
    build_targets = ("triton", *extra_targets(s["targets"]))
    key = compute_key(source_root=src.root, python=facts.host.python, defines=defines, extra_args=extra_args,
                      build_type=toolchain.build_type, targets=("triton",))
    build_dir = str(Path(facts.cache_root) / "build" / key)
    cmake_env: list[tuple[str, str]] = []
    fingerprint = compute_key(
        source_root="<source>", python=facts.host.python,
        defines=tuple((k, _placeholders(v, src.root, facts.cache_root, plugins)) for k, v in defines),
        extra_args=extra_args, build_type=toolchain.build_type, targets=("triton",))
    if s["ccache_remote"].value:
        if not toolchain.ccache:
            raise UserError(f"A ccache remote ({s['ccache_remote'].origin}) needs ccache, which is off or not "
                            "installed. Install ccache (Debian: ccache) or drop --ccache-remote.")
        cmake_env.append(("CCACHE_REMOTE_STORAGE", str(s["ccache_remote"].value)))
    if s["reproducible"].value:
        if epoch is None:
            raise UserError("A reproducible build needs SOURCE_DATE_EPOCH: build from a git checkout (its commit "
                            "date is used) or set SOURCE_DATE_EPOCH.")
        cmake_env.append(("SOURCE_DATE_EPOCH", str(epoch)))
    if toolchain.ccache:
        # One base dir above the source, the plugins and the build dirs: ccache rewrites paths under it
        # relative to the build dir, so a fresh build dir (same depth under a cache root) hits the cache.
        base = os.path.commonpath([src.root, facts.cache_root, *(p.path for p in plugins)])
        cmake_env += [("CCACHE_BASEDIR", base), ("CCACHE_NOHASHDIR", "1")]
    cmake = CMakePlan(
        source_dir=src.root,
        build_dir=build_dir,
        generator="Ninja",
        defines=defines,
        extra_args=extra_args,
        build_targets=build_targets,
        install_component=INSTALL_COMPONENT,
        env=tuple(cmake_env),
        plugin_shims=shims,
    )

    # 7. wheel
    backends = tuple(
        [BackendPlan(name=n, origin="in-tree", path=src.backend(n).path, language=src.backend(n).language,
                     tools=src.backend(n).tools,
                     llvm_targets=expand_targets(BACKEND_LLVM_TARGETS.get(n, ()), machine),
                     commit=src.git.commit if src.git else None, dirty=src.git.dirty if src.git else None)
         for n in sel.names]
        + [BackendPlan(name=p.name, origin="plugin", path=p.path, language=p.language, tools=p.tools,
                       llvm_targets=expand_targets(p.llvm_targets, machine),
                       commit=p.git.commit if p.git else None, dirty=p.git.dirty if p.git else None,
                       name_from=p.name_from, given_as=p.given_as, triton_pin=p.triton_pin,
                       triton_pin_from=p.triton_pin_from, pin_matches_source=p.pin_matches_source)
           for p in plugins]
    )
    backends = api_checked(s, facts, backends, warnings)
    scripts: tuple[tuple[str, str], ...] = ()
    if toolchain.proton:
        scripts = (("proton", "triton.profiler.proton:main"), ("proton-viewer", "triton.profiler.viewer:main"))
    wheel = WheelPlan(
        name=str(s["wheel_name"].value),
        version=wheel_version(src, s["version_suffix"].value, str(s["version_scheme"].value), epoch),
        requires_python=str(s["requires_python"].value),
        entry_points=tuple((b.name, f"triton.backends.{b.name}") for b in backends),
        scripts=scripts,
        out_dir=str(Path(facts.cwd) / "dist"),
        bundle_libs=bool(s["bundle_libs"].value),
        system_libs=tuple(str(n) for n in s["repair_exclude"].value),
    )
    commands = _commands(cmake, toolchain)
    return Plan(
        tritonbuild_version=__version__,
        source=SourcePlan(
            root=src.root, generation=src.generation, version=src.version,
            commit=src.git.commit if src.git else None, dirty=src.git.dirty if src.git else None,
            branch=src.git.branch if src.git else None, commit_time=src.git.commit_time if src.git else None,
            tuple_limit=src.tuple_limit, tuple_limit_known=src.tuple_limit_known, has_proton=src.has_proton,
            proton_in_tuple=src.proton_in_tuple, in_tree_backends=src.backend_names,
            default_backends=src.default_backends, required_backends=src.required_backends,
        ),
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
    )


def api_checked(s: Mapping[str, Resolved], facts: Facts, backends: tuple[BackendPlan, ...],
                warnings: list[str]) -> tuple[BackendPlan, ...]:
    """Attach each backend's compatibility check; a backend that will fail to import is an error unless
    --no-api-check, which makes it a warning like the rest."""
    out, fatal = [], []
    for b in backends:
        api = facts.api.get(b.path)
        if api is None:
            out.append(b)
            continue
        out.append(replace(b, api=api.to_dict()))
        if api.verdict == "compatible":
            continue
        lines = "; ".join(f.message for f in api.findings)
        if api.verdict == "will fail" and s["api_check"].value:
            fatal.append(f"{b.name}: {lines}")
        else:
            warnings.append(f"backend {b.name!r} ({api.verdict} with this Triton): {lines}")
    if fatal:
        raise UserError(f"A backend does not fit this Triton's backend interface: {' | '.join(fatal)}. Update the "
                        "backend to the source's python/triton/backends/compiler.py and driver.py, build the Triton it "
                        "was written for, or pass --no-api-check to build anyway (`tritonbuild backends --check` "
                        "shows the full report).")
    return tuple(out)


def _pinned_hint(llvm: LLVMPlan, src: SourceInfo, names: tuple[str, ...]) -> str:
    """How to get the pinned LLVM instead, given why the prebuilt download was not taken."""
    why = dict(llvm.rejected).get("prebuilt download", "")
    build = (f"`tritonbuild llvm build --source {src.root} --backends '{';'.join(names)}'` builds it (mlir and lld "
             f"with {', '.join(llvm.required_targets)}; hours on 2 cores)")
    if "offline" in why:
        return f"For the pinned LLVM: `tritonbuild llvm fetch` on a connected machine, or {build}."
    if "--allow-unpinned" in why:
        return f"For the pinned LLVM: add --allow-unpinned to use Triton's prebuilt archive, or {build}."
    if "only the host, NVPTX and AMDGPU" in why:
        return f"No prebuilt LLVM has all these targets; for the pinned LLVM, {build}."
    return f"For the pinned LLVM, {build}."


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
    if tc.linker == "lld":
        for kind in ("EXE", "MODULE", "SHARED"):
            d[f"CMAKE_{kind}_LINKER_FLAGS"] = "-fuse-ld=lld"
    if tc.ccache:
        d["CMAKE_C_COMPILER_LAUNCHER"] = tc.ccache
        d["CMAKE_CXX_COMPILER_LAUNCHER"] = tc.ccache
    if tc.offline:
        d["TRITON_OFFLINE_BUILD"] = "ON"
    if s["reproducible"].value:
        d["TRITONBUILD_REPRODUCIBLE"] = "ON"  # the injected CMake adds -ffile-prefix-map for source and build
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
        roctracer = proton.roctracer_include(s["roctracer_include"].value, src.root)
        if roctracer:
            d["ROCTRACER_INCLUDE_DIR"] = roctracer
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
