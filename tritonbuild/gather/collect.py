"""Gather every fact a plan needs (edge: reads the disk, runs git and llvm-config, may clone a URL)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.gather import compat, deps, git, host, includes, patches, submodules
from tritonbuild.gather.plugins import absolute, has_backend, read_files, read_plugin
from tritonbuild.gather.source import inspect_source, looks_like_triton
from tritonbuild.llvm import cache as llvm_cache
from tritonbuild.llvm.probe import probe, system_prefixes
from tritonbuild.nvidia import discover as nvidia_discover
from tritonbuild.plan import PatchInfo
from tritonbuild.resolve import compilercache, knownissues
from tritonbuild.resolve.backend_api import BackendApi
from tritonbuild.resolve.facts import Facts, LLVMInstall
from tritonbuild.resolve.llvm import STRATEGIES
from tritonbuild.resolve.plugins import plugin_origin, submodule_pin
from tritonbuild.resolve.source import GitState, SourceInfo
from tritonbuild.settings import cacheroot
from tritonbuild.settings.model import Settings, show, split_patch
from tritonbuild.system import paths, safegit
from tritonbuild.system.fileutil import read_text


def tool_lookup(s: Settings, source: SourceInfo, cwd: Path) -> nvidia_discover.ToolLookup | None:
    """How to look for NVIDIA's wheels of cuobjdump/nvdisasm, or None when the plan cannot want them: nvidia not
    asked for (the backend list or the source's default), --no-bundle-nvidia-tools, --cuda-tools-from host."""
    import platform

    from tritonbuild.resolve.backends import split_list

    asked = split_list(";".join(source.default_backends) if s.backends is None else s.backends)
    nvidia = "nvidia" in source.backend_names and ({"nvidia", "all"} & set(asked)
                                                   or "nvidia" in source.required_backends)
    if not nvidia or not s.bundle_nvidia_tools or s.cuda_tools_from == "host":
        return None
    house = absolute(str(s.wheelhouse), cwd) if s.wheelhouse else None
    return nvidia_discover.ToolLookup(s.cuda_tools_from, s.pypi_index, house, s.offline, platform.machine())


def source_root(s: Settings, cwd: Path, cache: Path, warn: Callable[[str], None]) -> Path:
    """The checkout to build: --source (a path, or a git URL cloned into ``cache``), else ``cwd`` when it is a Triton
    tree (``s``: the request's settings, whose origins the messages name; ``warn``: where a fallback is said,
    the request's ``warn``)."""
    given = s.source
    if given is None:
        if looks_like_triton(cwd):
            return cwd
        raise UserError(
            f"No --source given and the current directory {cwd} is not a Triton source tree. Pass --source with "
            "a Triton checkout (or a git URL and --ref), or run tritonbuild from the top of a checkout; "
            "`tritonbuild example DIR` writes a small Triton-shaped tree to try it on."
        )
    text = given
    if git.is_git_url(text) and not Path(text).exists():
        return _source_url(s, text, cwd, cache, warn)
    if s.ref and not (s.origin('ref').startswith("recipe") and not s.origin('source').startswith("recipe")):
        # a recipe's ref belongs to the recipe's source URL; it does not apply to a path given on top of it
        raise UserError("--ref only applies when --source is a git URL; check out the ref in your tree instead.")
    return absolute(text, cwd)


def _source_url(s: Settings, url: str, cwd: Path, cache: Path,
                warn: Callable[[str], None]) -> Path:
    """The checkout of a source URL. Offline nothing is cloned: a cached clone at the ref, else, for a recipe's
    URL run inside a Triton checkout, that checkout (said through ``warn``), else the offline error."""
    try:
        return git.checkout_url(url, s.ref, cache, offline=s.offline)
    except git.OfflineMissing:
        if not (s.origin("source").startswith("recipe") and looks_like_triton(cwd)):
            raise
    warn(f"offline, and the recipe's source {url} is not in the source cache: building the Triton checkout in the "
         f"current directory {cwd} instead (pass --source to choose another).")
    return cwd


def clone_git_plugins(s: Settings, env: Mapping[str, str], cache_dir: str | None) -> Settings:
    """Replace ``git+URL@REF`` plugin specs with their checkouts in the source cache (clone once; offline only
    a cached clone at the ref is used). Every spec is checked before any git runs. The settings
    returned have the checkouts as ``plugin_dirs`` (their origin the same)."""
    specs = s.plugin_dirs
    if not any(p.startswith("git+") for p in specs):
        return s
    cache = cacheroot.cache_root(env, cache_dir)
    wanted = [_plugin_url(spec) if spec.startswith("git+") else None for spec in specs]
    for item in wanted:
        if item:
            safegit.check_url(item[0], "The plugin URL")
            if item[1]:
                safegit.check_ref(item[1], f"The ref of the plugin {item[0]}:")
    out = tuple(str(git.checkout_url(item[0], item[1], cache, offline=s.offline, given_as="--plugin-dir"))
                if item else spec for spec, item in zip(specs, wanted, strict=True))
    return replace(s, plugin_dirs=out)


def _path_kind(given: str | None, cwd: Path) -> str | None:
    """What a local path is (links followed): "dir", "other" (a file, a FIFO, ...), None when nothing is there."""
    try:
        return None if not given or not (cwd / given).exists() else "dir" if (cwd / given).is_dir() else "other"
    except OSError:  # a name too long for the file system is no path
        return None


def _plugin_url(spec: str) -> tuple[str, str | None]:
    """``git+URL@REF`` as (URL, REF); the ``@`` of user@host:path is not a ref's (a ref has no ':')."""
    text = spec[4:]
    url, _, ref = text.rpartition("@") if "@" in text.split("/")[-1] else (text, "", "")
    return (url, ref or None) if url and ":" not in ref else (text, None)


def gather(s: Settings, env: Mapping[str, str], cwd: Path, cache_dir: str | None = None,
           python: str | None = None, *, warn: Callable[[str], None]) -> Facts:
    """Every fact the plan of these settings needs (``warn``: where a warning is said)."""
    cache = cacheroot.cache_root(env, cache_dir)
    checkout = source_root(s, cwd, cache, warn)
    if not checkout.exists():
        raise UserError(f"The source {checkout} (from {s.origin('source')}) does not exist. Check --source.")
    source_given, plugin_given = split_patches(s, cwd)
    root, applied, subs = patched_source(s, source_given, checkout, cwd, cache, warn)
    copies = patched_plugins(s, plugin_given, cwd, cache)
    source = inspect_source(root, git.git_state(checkout))
    explicit = None
    if s.llvm not in STRATEGIES:
        explicit = probe(absolute(s.llvm, cwd), found_by=s.origin("llvm"))
    system = () if explicit else tuple(probe(Path(p), found_by=how) for p, how in system_prefixes())
    pin = source.pin
    at_pin = [e for e in llvm_cache.entries(cache) if llvm_cache.read_marker(e).get("llvm_hash") == pin.llvm_hash]
    stale = tuple((str(e), why) for e in at_pin if (why := llvm_cache.pin_conflict(e, dict(pin.sha256))))
    cached = tuple(probe(e, found_by="tritonbuild cache") for e in at_pin
                   if str(e) not in dict(stale)) if not explicit else ()
    plugin_git = plugin_git_states(s.plugin_dirs, cwd, copies)
    plugin_paths = [p for p in (copies[raw][0] if raw in copies else absolute(raw, cwd) for raw in s.plugin_dirs)
                    if has_backend(p)]  # the others are
    # refused by the plan's check of plugin_files; none of them is walked (--plugin-dir / would walk the disk)
    api = compat_facts(root, source, plugin_paths, plugin_git, cache / "apicheck")
    decls, supplied = deps.gather(root, plugin_paths, s.deps, cwd, cache, s.offline)
    json_prefix = "/usr" if Path("/usr/include/nlohmann/json.hpp").is_file() else None
    nv = nvidia_discover.gather(root, s, env, cache, source.nvidia_missing_headers,
                                tool_lookup(s, source, cwd), log=warn)
    llvms = [*([explicit] if explicit else []), *system, *cached]
    known_source, known_llvm = known_issue_facts(root, llvms)
    pin_file = paths.data_dir() / "llvm-hash.txt"
    default_pin = pin_file.read_text().strip() if pin_file.is_file() else None
    return Facts(
        source=source,
        host=host.gather(python, bindings=source.bindings),
        llvm_explicit=explicit,
        llvm_system=system,
        llvm_cached=cached,
        llvm_stale=stale if not explicit else (),
        plugin_git=plugin_git,
        cwd=str(cwd),
        cmake_dir=str(paths.cmake_dir()),
        cache_root=str(cache),
        json_prefix=json_prefix,
        default_pin=default_pin,
        nvidia=nv,
        api=api,
        fetch_decls=tuple(decls),
        deps_supplied=supplied,
        known_source=known_source,
        known_llvm=known_llvm,
        plugin_files={raw: read_files(str(copies[raw][0]) if raw in copies else raw, cwd) for raw in s.plugin_dirs},
        llvm_src_kind=_path_kind(s.llvm_src, cwd),
        includes=includes.gather(root, plugin_paths, [i.prefix for i in llvms if i.runs], cache / "apicheck"),
        patches=applied, checkout=str(checkout.resolve()) if root != checkout else None, submodules=subs,
        plugin_patches={str(copy): (str(given), infos) for copy, given, infos in copies.values()},
        **environment_facts(env, source),
    )


def environment_facts(env: Mapping[str, str], source: SourceInfo) -> dict[str, Any]:
    """``Facts``' part of the environment that no setting declares, read here so that resolvers take none: sccache's
    configuration (its SCCACHE_* variables but the port and base dirs, which the plan gives) and the proton dir
    variables the tree's setup.py reads (set and not empty)."""
    config = tuple(sorted((k, v) for k, v in env.items() if k.startswith(compilercache.SCCACHE_ENV_PREFIX)
                          and k not in ("SCCACHE_SERVER_PORT", "SCCACHE_BASEDIRS")))
    proton = {name: env[name] for _, name, _ in source.proton_dirs if env.get(name)}
    return {"sccache_config": config, "proton_env": proton}


def split_patches(s: Settings, cwd: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The patch files for the Triton source, and by plugin name those for a plugin's dir (``NAME=FILE``,
    ``settings.model.split_patch``), in the order given. An entry spelled ``NAME=FILE`` that is also the name of an
    existing file (relative to the current directory) is refused as ambiguous."""
    source: list[str] = []
    plugin: dict[str, list[str]] = {}
    for entry in s.patches:
        target, file = split_patch(entry)
        try:
            exists = os.path.lexists(cwd / entry)
        except (OSError, ValueError):
            exists = False
        if target is None:
            _not_misnamed(entry, s, cwd, exists)
            source.append(file)
            continue
        if exists:
            raise UserError(f"The patch {show(entry)} (from {s.origin('patches')}) is ambiguous: it reads as a "
                            f"patch for the plugin {target!r} (NAME=FILE), and a file of that whole name exists in "
                            f"{cwd}. Write ./{show(entry)[1:-1]} for that file as a patch for the Triton source, or "
                            "rename it; nothing was changed.")
        plugin.setdefault(target, []).append(file)
    return source, plugin


def _not_misnamed(entry: str, s: Settings, cwd: Path, exists: bool) -> None:
    """Refuse a source patch spelled ``X=FILE`` whose X is a selected plugin's backend name once ``-`` and ``.`` are
    ``_`` (``my-plug=FILE`` for the plugin ``my_plug``), or, when no file of that whole name exists, the name of a
    plugin dir: it was meant for the plugin, and NAME must be the backend name (a plugin dir that is no plugin, such
    as ``1plug``, whose name is no identifier, is refused then as the plan would refuse it; ``exists``: whether a
    file of that whole name does)."""
    before, eq, file = entry.partition("=")
    if not eq or not before or "/" in before:
        return
    for raw in s.plugin_dirs:
        path = absolute(raw, cwd)
        try:
            name = read_plugin(path, plugin_origin(s)).name
        except UserError:
            if not exists and before == path.name:
                raise  # meant for this plugin (1plug=FILE): its own refusal says what is wrong with it
            continue  # refused later, as the plan refuses it
        if before.replace("-", "_").replace(".", "_") == name or (not exists and before == path.name):
            also = f" (write ./{show(entry)[1:-1]} for the file of that whole name)" if exists else ""
            raise UserError(f"The patch {show(entry)} (from {s.origin('patches')}) reads as a patch file for the "
                            f"Triton source{' that does not exist' if not exists else ''}, but {show(before)} "
                            f"names the plugin {name!r} ({path}): NAME must be the plugin's backend name "
                            f"(`{name}`): write --patch {show(name + '=' + file)[1:-1]}{also}. Nothing was "
                            "changed.")


def patched_plugins(s: Settings, given: Mapping[str, list[str]], cwd: Path, cache: Path
                    ) -> dict[str, tuple[Path, Path, tuple[PatchInfo, ...]]]:
    """By plugin dir as given, the patched copy of each plugin a ``NAME=FILE`` patch targets, the dir it was made
    from and its patches (``gather.patches``, as the source's). A NAME no selected plugin has is refused, naming
    the plugins there are; a plugin dir that is no plugin is refused as the plan's own check would refuse it."""
    if not given:
        return {}
    origin = s.origin("patches")
    dirs = s.plugin_dirs
    found = {read_plugin(absolute(raw, cwd), plugin_origin(s)).name: raw for raw in dirs}
    unknown = [name for name in given if name not in found]
    if unknown:
        have = ", ".join(f"{n!r} ({absolute(r, cwd)})" for n, r in found.items()) or "none (no --plugin-dir given)"
        raise UserError(f"The patch {show(unknown[0] + '=' + given[unknown[0]][0])} (from {origin}) is for the "
                        f"plugin {unknown[0]!r}, but no selected plugin has that name; the plugins are: {have}. "
                        "NAME=FILE patches the plugin whose backend name (its backend/name.conf, else its dir's "
                        "name) is NAME; give that plugin with --plugin-dir, fix the NAME, or write FILE alone for "
                        "a patch to the Triton source. Nothing was changed.")
    out: dict[str, tuple[Path, Path, tuple[PatchInfo, ...]]] = {}
    for name, files in given.items():
        raw = found[name]
        plugin_dir = absolute(raw, cwd)
        copy, infos = patches.prepare(plugin_dir, files, f"{origin}, for the plugin {name}", cwd, cache,
                                      what=f"the plugin dir {name}", check=_keeps_name(plugin_dir, name, origin))
        out[raw] = (copy, plugin_dir, infos)
    return out


def _keeps_name(plugin_dir: Path, name: str, origin: str) -> Callable[[Sequence[PatchInfo]], None]:
    """A refusal of a patch to the plugin ``name`` that touches the file its name is read from (backend/name.conf,
    or the file of the plugin dir that a link there leads to): the name is what ``NAME=`` selected the plugin by,
    read before the patches, so a patch may not change it."""
    conf = plugin_dir / "backend" / "name.conf"
    frozen = {"backend/name.conf"}
    if conf.is_symlink():
        real, base = os.path.realpath(conf), os.path.realpath(plugin_dir)
        if real.startswith(base + os.sep):
            frozen.add(Path(real).relative_to(base).as_posix())

    def check(infos: Sequence[PatchInfo]) -> None:
        for info in infos:
            touched = sorted(frozen.intersection(info.files))
            if touched:
                raise UserError(f"The patch {show(name + '=' + info.path)} (from {origin}) changes {touched[0]!r} "
                                f"of the plugin dir {plugin_dir}, the file the plugin's name {name!r} is read from: "
                                f"NAME= selects a plugin by that name, so a patch may not change it. Drop that "
                                "part of the patch (rename the plugin in its dir instead, and give that name); "
                                "nothing was changed.")
    return check


def patched_source(s: Settings, given: list[str], checkout: Path, cwd: Path, cache: Path, warn: Callable[[str], None]
                   ) -> tuple[Path, tuple[PatchInfo, ...], tuple[tuple[str, str], ...]]:
    """The tree every later fact is read from: the checkout itself, or with ``--patch`` or ``--submodule``
    tritonbuild's copy of it (``gather.patches``, ``gather.submodules``; a checkout that is no Triton tree is
    refused first, as itself); the patches applied and the submodules supplied (path, commit). ``given``: the
    patch files for the source (``split_patches``)."""
    if not given and not s.submodules:
        return checkout, (), ()
    if not looks_like_triton(checkout):
        inspect_source(checkout)  # its own refusal, naming the checkout, before anything is copied
    subs = submodules.supply(checkout, s.submodules, s.origin("submodules"), cwd, cache, warn)
    if not given and not subs:
        return checkout, (), ()
    root, applied = patches.prepare(checkout, list(given), s.origin("patches"), cwd, cache,
                                    check=submodules.patch_check(subs), submodules=subs)
    return root, applied, tuple((p, c) for p, (c, _) in sorted(subs.items()))


def known_issue_facts(root: Path, llvms: list[LLVMInstall]) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """Which known source/LLVM incompatibilities (tritonbuild.resolve.knownissues) the source and each LLVM show."""
    def texts(base: Path, names: set[str]) -> dict[str, str | None]:
        return {n: read_text(base / n) if (base / n).is_file() else None for n in names}

    source = knownissues.source_markers(texts(root, {i.source_file for i in knownissues.ISSUES}))
    headers = {i.llvm_header for i in knownissues.ISSUES}
    return source, {str(inst.prefix): knownissues.llvm_markers(texts(Path(inst.prefix) / "include", headers))
                    for inst in llvms}


def compat_facts(root: Path, source: SourceInfo, plugin_dirs: list[Path],
                 plugin_git: Mapping[str, GitState | None], cache: Path | None = None) -> dict[str, BackendApi]:
    """The compatibility check of every in-tree backend and every plugin that can be read (a plugin that cannot
    is reported by the plan's own validation)."""
    plugins = []
    for path in plugin_dirs:
        try:
            plugin = submodule_pin(read_plugin(path, "plugin"), plugin_git.get(str(path)))
        except UserError:
            continue
        plugins.append((plugin.name, path, plugin.triton_pin))
    commit = source.git.commit if source.git else None
    return compat.gather(root, commit, [(b.name, Path(b.path)) for b in source.backends], plugins, cache)


def plugin_git_states(dirs: Sequence[str], cwd: Path, copies: Mapping[str, tuple[Path, Path, object]] | None = None
                      ) -> dict[str, GitState | None]:
    """Git facts of each plugin dir (its commit, and the ``triton`` submodule that older plugins pin), by its path
    in the plan; a patched plugin's (``copies``, by the dir as given) are its own dir's, under its copy's path."""
    copies = copies or {}
    out: dict[str, GitState | None] = {}
    for raw in dirs:
        path = absolute(raw, cwd)
        out[str(copies[raw][0]) if raw in copies else str(path)] = git.git_state(path) if path.is_dir() else None
    return out
