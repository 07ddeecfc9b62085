"""Resolve settings and facts into a Plan (pure: every fact about the disk, git, the host and LLVMs comes in).

``tritonbuild.gather.request`` gathers the facts at the edge (``gather.collect.gather``), then calls ``resolve_plan``;
the toolchain and the CMake side are resolved by ``resolve.toolchain`` and ``resolve.cmake``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from tritonbuild import __version__, manylinux
from tritonbuild.errors import UserError
from tritonbuild.plan import (
    BackendPlan,
    LLVMPlan,
    PatchInfo,
    Plan,
    SourcePlan,
    ToolchainPlan,
    WheelPlan,
    patches_hash,
)
from tritonbuild.resolve import (
    backend_api,
    compilecheck,
    fetchdeps,
    llvm_linkage,
    nvidia,
    preflight,
    proton,
)
from tritonbuild.resolve.backends import (
    CORE_LLVM_TARGETS,
    Selection,
    expand_targets,
    in_tree_targets,
    select_backends,
)
from tritonbuild.resolve.canary import plan_canary
from tritonbuild.resolve.cmake import cmake_plan, commands, defines, extra_targets
from tritonbuild.resolve.facts import Facts
from tritonbuild.resolve.llvm import pinned_hint, resolve_llvm
from tritonbuild.resolve.plugins import Plugin, plugin_origin, resolve_plugins
from tritonbuild.resolve.source import SourceInfo, limited_api
from tritonbuild.resolve.toolchain import resolve_toolchain
from tritonbuild.settings.model import Settings, VersionScheme, show, version_problem


def wheel_version(src: SourceInfo, suffix: str | None, scheme: VersionScheme = "setup", epoch: int | None = None,
                  patches: tuple[PatchInfo, ...] = ()) -> str:
    """Triton's version plus the scheme's suffix, then TRITON_WHEEL_VERSION_SUFFIX (setup.py's rule: a second
    '+' becomes '-'), then the patches' label ``p<8 hex of their combined hash>``: the local label (``+p...``), or
    its last part (``.p...``) when the version has one."""
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
    version, patched = base + env_sfx, patches_hash(patches)
    return version + ("." if "+" in version else "+") + f"p{patched[:8]}" if patched else version


def _checked_version(version: str, s: Settings, src: SourceInfo) -> str:
    """Refuse at plan time a version the wheel's metadata would refuse at the end of the build (PEP 440)."""
    problem = version_problem(version)
    if problem is None:
        return version
    sfx = s.version_suffix
    what = (f"The version suffix {show(sfx)} ({s.origin('version_suffix')})" if sfx
            else "The wheel's version scheme")
    raise UserError(f"{what} {problem}. The tree's version is {show(src.version)} (version scheme "
                    f"{s.version_scheme}); give a suffix such as .post1, .dev1 or +local1.")


def resolve_plan(s: Settings, facts: Facts, *,
                 editable: bool = False, keep_preflight: bool = False) -> Plan:
    """The plan: backends, toolchain, LLVM, CMake and wheel, each resolved from the settings and the facts.
    The include preflight's problems refuse the plan, or with ``keep_preflight`` are kept in ``Plan.preflight``
    (check-llvm reports them beside the canary's causes). ``s`` is what ``resolve_settings`` decided: its values
    are read, its origins go into messages, and it is the plan's ``settings``."""
    src = facts.source
    notes: list[str] = []
    warnings: list[str] = []
    sel, plugins = _backends_step(s, facts, notes, warnings)
    toolchain, tnotes = resolve_toolchain(s, facts)
    notes.extend(tnotes)
    nv = nvidia.resolve(facts.nvidia, names=sel.names, proton=toolchain.proton, offline=toolchain.offline,
                        bundle_tools=s.bundle_nvidia_tools, compile_headers=src.nvidia_missing_headers,
                        tools_from=s.cuda_tools_from)
    notes.extend(nv.notes)
    warnings.extend(nv.warnings)
    tup = backends_tuple(src, sel.names, toolchain.proton, plugins)
    llvm = _llvm_step(s, facts, sel.names, plugins, editable, notes, warnings)
    preflight_problems = _preflight(s, facts, llvm, sel.names, toolchain.proton, plugins, warnings, keep_preflight)
    _source_remarks(src, facts, notes, warnings, editable=editable, names={p.path: p.name for p in plugins})
    warnings += platform_warnings(s, facts.host.glibc, facts.host.machine, llvm.strategy)
    epoch = s.source_date_epoch if s.source_date_epoch is not None else src.git.commit_time if src.git else None
    all_defines = {**dict(defines(s, facts, sel.names, plugins, toolchain, llvm)),
                   **llvm_linkage.defines(s, llvm, llvm.link), **nv.defines}
    paths, path_notes, path_warnings = nvidia.configure_paths(src.configure_nvidia_paths, nv, all_defines)
    all_defines.update(paths)
    notes.extend(path_notes)
    warnings.extend(path_warnings)
    deps, dep_defines = _deps_step(s, facts, sel.names, toolchain, all_defines, warnings)
    cmake, key, fingerprint = cmake_plan(s, facts, toolchain, plugins, epoch, {**all_defines, **dep_defines})
    planned = _backend_plans(src, sel.names, plugins, facts.host.machine, facts.plugin_patches)
    backends = backend_api.attach(s.api_check, facts.api, planned, warnings)
    return Plan(
        tritonbuild_version=__version__, source=_source_plan(src, facts), backends=backends, backends_tuple=tup,
        llvm=llvm, toolchain=toolchain,
        wheel=_wheel_plan(s, src, facts, epoch, backends, proton=toolchain.proton),
        cmake=cmake, python=facts.host.python, cache_root=facts.cache_root, settings=s, key=key,
        fingerprint=fingerprint, reproducible=s.reproducible, strip=s.strip,
        repair=s.repair_exclude if s.repair else None, repair_plat=s.plat if s.repair else None, notes=tuple(notes),
        warnings=tuple(warnings), commands=commands(cmake, toolchain), nvidia=nv.parts, deps=deps,
        compile_check=compilecheck.plan_check(s.compile_check, s.compile_check_timeout,
                                              tuple(b.name for b in backends), s.origin("compile_check"),
                                              src.version),
        canary=plan_canary(s.canary, s.origin("canary"), llvm.is_pinned, llvm.pinned_hash, llvm.version,
                           budget=s.canary_budget, budget_origin=s.origin("canary_budget"),
                           whole_cover=keep_preflight),
        preflight=preflight_problems,
    )


def platform_warnings(s: Settings, glibc: str | None, machine: str,
                      llvm_strategy: str) -> list[str]:
    """What keeps this host from the policy ``--plat`` asks for: a glibc newer than the policy's (the wheel would
    link its newer symbols and the repair refuse), another arch; and ``--plat`` without ``--repair``."""
    if s.plat is None:
        return []
    given = f"{s.plat} ({s.origin('plat')})"
    if not s.repair:
        return [f"--plat {given} has no effect without --repair (TRITONBUILD_REPAIR=1, recipe key repair)"]
    out = []
    arch = manylinux.arch_of(s.plat)
    if arch is not None and arch != machine:
        out.append(f"--plat {given} is for {arch}; this host builds {machine} wheels, which auditwheel will not "
                   "retag for another arch")
    want = manylinux.glibc_of(s.plat)
    have = tuple(int(p) for p in glibc.split(".")[:2] if p.isdigit()) if glibc else None
    if want is not None and have is not None and have > want:
        llvm = (" (an LLVM installed on this host was built against it too: use --llvm download, upstream's LLVM built "
                "for manylinux)" if llvm_strategy in ("system", "prefix") else "")
        out.append(f"this host's glibc {glibc} is newer than {s.plat}'s {want[0]}.{want[1]}: a wheel built here may "
                   f"need symbols of glibc {glibc}{llvm}, and --repair --plat {s.plat} then refuses, naming them; "
                   f"build in a container or on a host with glibc {want[0]}.{want[1]} or older (pypa's "
                   f"quay.io/pypa/manylinux_2_28_{arch or machine} image has glibc 2.28)")
    return out


def _backends_step(s: Settings, facts: Facts, notes: list[str],
                   warnings: list[str]) -> tuple[Selection, tuple[Plugin, ...]]:
    """The in-tree backends asked for, then the plugins."""
    src = facts.source
    sel = _in_tree_step(s, src, notes, facts.checkout)
    origin = plugin_origin(s)
    plugins, pnotes, pwarn = resolve_plugins(
        [(p, origin) for p in s.plugin_dirs], files=facts.plugin_files, in_tree=src.backend_names,
        source_commit=src.git.commit if src.git else None, git_states=facts.plugin_git)
    notes.extend(pnotes)
    warnings.extend(pwarn)
    return sel, plugins


def _source_remarks(src: SourceInfo, facts: Facts, notes: list[str], warnings: list[str], *,
                    editable: bool = False, names: Mapping[str, str] | None = None) -> None:
    """Notes on the source and the plugins patched (``names``: a plugin's name by its path, the copy's when
    patched), and for ``develop`` a warning for each patched tree the editable install uses instead of the user's."""
    if src.git and src.git.dirty:
        warnings.append(f"the source {facts.checkout or src.root} has uncommitted changes; the wheel records it as "
                        "dirty")
    if facts.patches:
        notes.append(f"{len(facts.patches)} patch{'es' if len(facts.patches) > 1 else ''} applied to tritonbuild's "
                     f"copy of {facts.checkout} at {src.root}; the checkout is not edited")
    for copy, (given, applied) in facts.plugin_patches.items():
        notes.append(f"{len(applied)} patch{'es' if len(applied) > 1 else ''} applied to tritonbuild's copy of the "
                     f"plugin dir {given} at {copy}; the plugin dir is not edited")
        if editable:
            warnings.append(f"the editable install uses tritonbuild's patched copy {copy} of the plugin "
                            f"{(names or {}).get(copy, '?')}, not the plugin dir {given}: an edit in the plugin dir "
                            "reaches it at the next `tritonbuild develop`, and an edit made in the copy is "
                            "overwritten then")
    if (facts.patches or facts.submodules) and editable:
        kind = "patched copy" if facts.patches else "copy"
        warnings.append(f"the editable install points at tritonbuild's {kind} {src.root}, not at the checkout "
                        f"{facts.checkout}: an edit in the checkout reaches it at the next `tritonbuild develop`, "
                        "and an edit made in the copy is overwritten then")
    if facts.default_pin and facts.default_pin != src.pin.llvm_hash:
        notes.append(
            f"the source pins LLVM {src.pin.short}; tritonbuild's default recipe pins {facts.default_pin[:8]} "
            "(its llvm-hash.txt). The source's own pin is what counts for this build."
        )


def _deps_step(s: Settings, facts: Facts, names: tuple[str, ...], toolchain: ToolchainPlan,
               all_defines: Mapping[str, str], warnings: list[str]) -> tuple[tuple[fetchdeps.Dep, ...], dict[str, str]]:
    """Proton's required variables, then the configure-time downloads the selected dirs reach."""
    if toolchain.proton:
        proton.preflight(facts.source.proton_requires, dict(all_defines), list(s.cmake_args),
                         facts.source.proton_dirs)
    selected = [f"third_party/{n}" for n in names] + (["third_party/proton"] if toolchain.proton else [])
    ut = any(re.fullmatch(r"-DTRITON_BUILD_UT(:BOOL)?=(ON|1|TRUE|YES)", a, re.I) for a in s.cmake_args)
    deps, dep_defines, dep_warnings = fetchdeps.resolve(facts.fetch_decls, facts.deps_supplied,
                                                        selected_dirs=selected, ut=ut, offline=toolchain.offline,
                                                        cmake_dir=facts.cmake_dir)
    warnings.extend(dep_warnings)
    return deps, dep_defines


def _in_tree_step(s: Settings, src: SourceInfo, notes: list[str],
                  checkout: str | None = None) -> Selection:
    """The in-tree backends asked for (or the source's default list), refusing one whose submodule is empty."""
    text, where = ((";".join(src.default_backends), "the source's default backend list") if s.backends is None
                   else (s.backends, s.origin("backends")))
    sel = select_backends(text, src.backend_names, src.required_backends, strict=s.strict,
                          where=where)
    notes.extend(sel.notes)
    for sub, users in src.missing_submodules:
        needed_by = [u for u in users if u in sel.names]
        if needed_by:
            raise UserError(
                f"The backend {', '.join(needed_by)} builds the git submodule {sub}, which is not checked out in "
                f"{checkout or src.root} (it is empty). Run `git -C {checkout or src.root} submodule update --init "
                f"{sub}`{' (the patched copy is made from that checkout)' if checkout else ''}, or give a clone "
                f"of it on this machine (nothing is fetched): `--submodule {sub}=PATH_OF_THE_CLONE`, or leave "
                f"{', '.join(needed_by)} out of --backends."
            )
        notes.append(f"git submodule {sub} is not checked out (no selected backend uses it)")
    return sel


def _wheel_plan(s: Settings, src: SourceInfo, facts: Facts, epoch: int | None,
                backends: tuple[BackendPlan, ...], *, proton: bool) -> WheelPlan:
    scripts: tuple[tuple[str, str], ...] = ()
    if proton:
        scripts = (("proton", "triton.profiler.proton:main"), ("proton-viewer", "triton.profiler.viewer:main"))
    return WheelPlan(
        name=s.wheel_name,
        version=_checked_version(wheel_version(src, s.version_suffix, s.version_scheme, epoch, facts.every_patch()),
                                 s, src),
        requires_python=s.requires_python,
        entry_points=tuple((b.name, f"triton.backends.{b.name}") for b in backends),
        scripts=scripts,
        out_dir=str(Path(facts.cwd) / "dist"),
        bundle_libs=s.bundle_libs,
        system_libs=s.repair_exclude,
        zip_level=s.zip_level,  # its range (0-9) is the setting's, checked where it is resolved
        requires=src.install_requires,
        python_abi=facts.host.python_abi,
        py_api="cp312" if limited_api(src, facts.host.python_abi, s.stable_abi, s.origin("stable_abi"))
        else None,
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


def _llvm_step(s: Settings, facts: Facts, names: tuple[str, ...],
               plugins: tuple[Plugin, ...], editable: bool, notes: list[str], warnings: list[str]) -> LLVMPlan:
    """The LLVM targets the selection needs, the LLVM chosen for them, how libtriton links it."""
    src, machine = facts.source, facts.host.machine
    users = {n: expand_targets(in_tree_targets(n)[0], machine) for n in names}
    warnings += [w for n in names if (w := in_tree_targets(n)[1])]
    users.update({p.name: expand_targets(p.llvm_targets, machine) for p in plugins})
    targets = expand_targets([*CORE_LLVM_TARGETS, *(t for ts in users.values() for t in ts)], machine)
    need_lld = (src.core_finds_lld or any(src.backend(n).finds_lld for n in names)
                or any(p.finds_lld for p in plugins))
    llvm = resolve_llvm(s, facts, targets, need_lld, users)
    if llvm.problem:
        warnings.append(llvm.problem)
    elif llvm.is_pinned is not True:
        what = "does not record its commit" if llvm.is_pinned is None else f"is at {llvm.revision}"
        if s.require_pinned_llvm:
            raise UserError(
                f"LLVM {llvm.version} at {llvm.prefix} is not the source's pinned commit {llvm.pinned_hash[:12]} (it "
                f"{what}), and this build requires the pin ({s.origin('require_pinned_llvm')}): MLIR behaviour "
                "that differs from the pin can make a wheel that builds and imports hang on real kernels. "
                f"{pinned_hint(llvm, src, names, *_given(facts))} Or accept this LLVM with "
                "--no-require-pinned-llvm (recipe: require_pinned_llvm = false); the compile check still runs."
            )
        warnings.append(
            f"LLVM {llvm.version} at {llvm.prefix} is not the pinned commit {llvm.pinned_hash[:12]} (it {what}); "
            "the build adds -Wno-error=deprecated-declarations, and a source that uses APIs this LLVM changed "
            f"will fail to compile. {pinned_hint(llvm, src, names, *_given(facts))}"
        )
    link, link_why = llvm_linkage.llvm_link(s, llvm, editable=editable)
    notes.extend(llvm_linkage.notes(s, llvm, link, link_why))
    return replace(llvm, link=link)


def _given(facts: Facts) -> tuple[str | None, tuple[str, ...]]:
    """The user's checkout and patches (with --patch), for advice the user acts on in the checkout."""
    return facts.checkout, tuple(p.path for p in facts.patches)


def _preflight(s: Settings, facts: Facts, llvm: LLVMPlan, names: tuple[str, ...],
               proton: bool, plugins: tuple[Plugin, ...], warnings: list[str], keep: bool = False) -> tuple[str, ...]:
    """Every header the compiled code includes that this LLVM lacks, and every known source/LLVM issue
    (tritonbuild.resolve.knownissues), refused in one message listing them all (resolve.preflight); with ``keep``
    returned instead, one problem each."""
    built = preflight.Built(names, facts.source.backend_names, proton, tuple(p.path for p in plugins),
                            bin=bool(extra_targets(s.targets, s.origin("targets"))))
    label = f"{llvm.version} at {llvm.prefix}"
    found = preflight.check(facts.includes, facts.known_source, facts.known_llvm.get(llvm.prefix or "", ()),
                            llvm.prefix, label, s.compile_check, built)
    warnings.extend(found.warnings)
    if keep:
        return tuple(found.errors)
    error = preflight.error_text(found, label, llvm.pinned_hash)
    if error:
        raise UserError(error)
    return ()


def _source_plan(src: SourceInfo, facts: Facts) -> SourcePlan:
    return SourcePlan(
        root=src.root, generation=src.generation, version=src.version,
        commit=src.git.commit if src.git else None, dirty=src.git.dirty if src.git else None,
        branch=src.git.branch if src.git else None, commit_time=src.git.commit_time if src.git else None,
        tuple_limit=src.tuple_limit, tuple_limit_known=src.tuple_limit_known, has_proton=src.has_proton,
        proton_in_tuple=src.proton_in_tuple, in_tree_backends=src.backend_names,
        default_backends=src.default_backends, required_backends=src.required_backends,
        build_requires=src.build_requires, bindings=src.bindings, stable_abi=src.stable_abi,
        checkout=facts.checkout, patches=facts.patches, submodules=facts.submodules,
    )


def _backend_plans(src: SourceInfo, names: tuple[str, ...], plugins: tuple[Plugin, ...],
                   machine: str, patched: Mapping[str, tuple[str, tuple[PatchInfo, ...]]]) -> tuple[BackendPlan, ...]:
    """The selected in-tree backends, then the plugins (``patched``: a patched plugin's dir given and patches, by
    its copy's path), as the plan and the wheel's entry points list them."""
    return tuple(
        [BackendPlan(name=n, origin="in-tree", path=src.backend(n).path, language=src.backend(n).language,
                     tools=src.backend(n).tools,
                     llvm_targets=expand_targets(in_tree_targets(n)[0], machine),
                     commit=src.git.commit if src.git else None, dirty=src.git.dirty if src.git else None)
         for n in names]
        + [BackendPlan(name=p.name, origin="plugin", path=p.path, language=p.language, tools=p.tools,
                       llvm_targets=expand_targets(p.llvm_targets, machine),
                       commit=p.git.commit if p.git else None, dirty=p.git.dirty if p.git else None,
                       name_from=p.name_from, given_as=p.given_as, triton_pin=p.triton_pin,
                       triton_pin_from=p.triton_pin_from, pin_matches_source=p.pin_matches_source,
                       checkout=patched.get(p.path, (None, ()))[0], patches=patched.get(p.path, (None, ()))[1])
           for p in plugins]
    )

