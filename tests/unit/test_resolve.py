from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import HOST, facts, llvm, plan_for
from tritonbuild.errors import UserError
from tritonbuild.execute.staging import pyproject
from tritonbuild.gather.source import inspect_source
from tritonbuild.resolve.pathviews import to_real
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.resolve.source import GitState
from tritonbuild.resolve.toolchain import default_jobs, default_link_jobs
from tritonbuild.settings.model import resolve_settings

H = "2eb709b95d8f521aa15401e159fac0729d56a677"


def test_default_plan(tree) -> None:
    p = plan_for(tree())
    assert p.backend_names == ("nvidia", "amd")
    assert p.backends_tuple == ("nvidia", "amd", "proton")
    assert p.llvm.prefix == "/usr/lib/llvm-22" and p.llvm.strategy == "system"
    assert p.llvm.required_targets == ("NVPTX", "AMDGPU", "X86")
    assert p.cmake.define("TRITON_CODEGEN_BACKENDS") == "nvidia;amd"
    assert p.cmake.define("LLVM_SYSPATH") == "/usr/lib/llvm-22"
    assert p.cmake.define("TRITONBUILD_LLVM_DYLIB_FIX") == "ON"
    assert p.cmake.build_targets == ("triton",)
    assert p.settings.origin("backends") == "default"


def test_plugin_spirv_and_tuple(tree, plugin) -> None:
    root = tree()
    plug = plugin("triton-shared", "triton_shared")
    p = plan_for(root, {"backends": "nvidia;amd;spirv", "plugin_dirs": (str(plug),)})
    assert p.backends_tuple == ("nvidia", "amd", "spirv", "proton", "triton_shared")
    assert p.llvm.required_targets == ("NVPTX", "AMDGPU", "X86", "SPIRV")
    # CMake sees the plugin through its link in the build dir (stable paths)
    assert p.cmake.define("TRITON_PLUGIN_DIRS") == str(Path(p.cmake.build_dir) / "plugins" / "triton_shared")
    assert to_real(p.cmake.define("TRITON_PLUGIN_DIRS"), p.cmake.views) == str(plug)
    assert dict(p.wheel.entry_points) == {n: f"triton.backends.{n}" for n in ("nvidia", "amd", "spirv",
                                                                               "triton_shared")}


def test_tuple_limit_error_names_entries_and_limit(tree, plugin) -> None:
    root = tree()
    a, b = plugin("a"), plugin("b")
    with pytest.raises(UserError) as err:
        plan_for(root, {"backends": "nvidia;amd;cpu", "plugin_dirs": (str(a), str(b))})
    msg = str(err.value)
    assert "6 entries (nvidia, amd, cpu, proton, a, b)" in msg and "at most 5" in msg
    assert "always part of it" in msg


def test_proton_always_counts_even_when_off(tree, plugin) -> None:
    root = tree()
    a, b = plugin("a"), plugin("b")
    with pytest.raises(UserError, match="6 entries"):
        plan_for(root, {"backends": "nvidia;amd;cpu", "plugin_dirs": (str(a), str(b)), "proton": False})


def test_g1_limit_is_four_and_proton_not_in_tuple(tree, plugin) -> None:
    root = tree(generation="G1")
    p = plan_for(root, {"backends": "nvidia;amd;cpu", "plugin_dirs": (str(plugin("a")),)})
    assert p.backends_tuple == ("nvidia", "amd", "cpu", "a")
    with pytest.raises(UserError, match="at most 4"):
        plan_for(root, {"backends": "all", "plugin_dirs": (str(plugin("b")),)})


def test_codegen_backends_from_env(tree) -> None:
    p = plan_for(tree(), env={"TRITON_CODEGEN_BACKENDS": "amd,nvidia,cpu"})
    assert p.backend_names == ("amd", "nvidia", "cpu")
    assert p.settings.origin("backends") == "env TRITON_CODEGEN_BACKENDS"


def test_system_llvm_missing_target_is_rejected_with_reason(tree) -> None:
    no_spirv = llvm(targets_built=("AMDGPU", "NVPTX", "X86"))
    p = plan_for(tree(), {"backends": "spirv"}, system=(no_spirv,))
    assert p.llvm.prefix is None
    why = dict(p.llvm.rejected)
    assert "SPIRV" in why["/usr/lib/llvm-22"] and "LLVMInitializeSPIRV" in why["/usr/lib/llvm-22"]
    assert "only the host, NVPTX and AMDGPU" in why["prebuilt download"]
    assert "llvm-22-dev" in (p.llvm.problem or "")
    assert p.llvm.problem in p.warnings


def test_second_system_llvm_is_used_when_first_lacks_mlir(tree) -> None:
    p = plan_for(tree(), system=(llvm("/usr/lib/llvm-14", has_mlir=False), llvm()))
    assert p.llvm.prefix == "/usr/lib/llvm-22"
    assert "/usr/lib/llvm-14" in dict(p.llvm.rejected)


def test_lld_is_needed_only_by_backends_that_find_it(tree, plugin) -> None:
    # Real trees: only third_party/amd runs find_package(LLD); a 2024 triton-cpu tree never does.
    no_lld = llvm("/usr/lib/llvm-19", has_lld=False, version="19.1.7")
    root = tree(backends=("nvidia", "amd", "cpu"), required=False)
    cpu = plan_for(root, {"backends": "cpu;nvidia"}, system=(no_lld,))
    assert cpu.llvm.prefix == "/usr/lib/llvm-19" and cpu.llvm.needs_lld is False
    amd = plan_for(root, {"backends": "amd"}, system=(no_lld, llvm()))
    assert amd.llvm.prefix == "/usr/lib/llvm-22" and amd.llvm.needs_lld is True
    assert "liblld-NN-dev" in dict(amd.llvm.rejected)["/usr/lib/llvm-19"]
    with pytest.raises(UserError, match=r"no LLD CMake package.*with MLIR and LLD"):
        plan_for(root, {"backends": "amd"}, env={"LLVM_SYSPATH": "/usr/lib/llvm-19"}, explicit=no_lld)
    finder = plugin("lld-plugin")
    cmake = finder / "CMakeLists.txt"
    cmake.write_text("find_package(LLD REQUIRED CONFIG)\n" + cmake.read_text())
    with_plugin = plan_for(root, {"backends": "cpu;nvidia", "plugin_dirs": [str(finder)]}, system=(no_lld, llvm()))
    assert with_plugin.llvm.needs_lld is True and with_plugin.llvm.prefix == "/usr/lib/llvm-22"


def test_missing_mlir_names_the_debian_conflict(tree) -> None:
    p = plan_for(tree(), system=(llvm("/usr/lib/llvm-19", has_mlir=False),))
    assert "cannot be installed together" in dict(p.llvm.rejected)["/usr/lib/llvm-19"]


def test_cuda_headers_of_a_2024_tree_come_from_the_toolkit(tree) -> None:
    g1 = tree("g1", generation="G1")
    p = plan_for(g1, {"backends": "nvidia", "proton": False})
    assert p.cmake.define("TRITONBUILD_NVIDIA_STAGE") == "ON"  # compiled against the staged copy
    assert p.cmake.define("TRITONBUILD_CUDA_HEADERS") == "cuda.h"
    part = next(n for n in p.nvidia if n.name == "cuda-headers")
    assert part.dest == "include" and part.files == (("/usr/local/cuda/include", "cuda.h"),)
    assert any("cuda-headers: 1 files from CUDA toolkit /usr/local/cuda into backends/nvidia/include" in n
               for n in p.notes)
    no_nvidia = plan_for(tree("g1n", generation="G1", required=False), {"backends": "amd", "proton": False})
    assert no_nvidia.cmake.define("TRITONBUILD_CUDA_HEADERS") is None and no_nvidia.nvidia == ()
    with pytest.raises(UserError, match=r"includes cuda\.h from backend/include, which Triton's setup\.py downloads"):
        plan_for(g1, {"backends": "nvidia", "proton": False}, cuda_include=None)


def test_explicit_broken_llvm_is_an_error(tree) -> None:
    broken = llvm("/opt/llvm", runs=False, error="llvm-config does not run: GLIBCXX_3.4.32 not found",
                  found_by="env LLVM_SYSPATH")
    with pytest.raises(UserError, match=r"GLIBCXX_3\.4\.32"):
        plan_for(tree(), env={"LLVM_SYSPATH": "/opt/llvm"}, explicit=broken)


def test_pinned_llvm_needs_no_deprecation_waiver(tree) -> None:
    p = plan_for(tree(), system=(llvm(revision=H, link_dylib=False),))
    assert p.llvm.is_pinned is True
    assert p.cmake.define("TRITONBUILD_DEPRECATED_NOT_ERROR") is None
    assert p.cmake.define("TRITONBUILD_LLVM_DYLIB_FIX") == "ON"  # CMake applies it only to dylib LLVMs
    p = plan_for(tree("other"))
    assert p.llvm.is_pinned is None
    assert p.cmake.define("TRITONBUILD_DEPRECATED_NOT_ERROR") == "ON"
    assert p.cmake.define("CMAKE_CXX_FLAGS") is None  # a user's CXXFLAGS still count
    assert any("not the pinned commit" in w for w in p.warnings)


def test_clang_missing_is_an_error_and_present_sets_lld(tree) -> None:
    with pytest.raises(UserError, match="clang\\+lld was asked for \\(env TRITON_BUILD_WITH_CLANG_LLD\\)"):
        plan_for(tree(), env={"TRITON_BUILD_WITH_CLANG_LLD": "1"})
    host = dataclasses.replace(HOST, tools={**HOST.tools, "clang": "/usr/bin/clang-22",
                                            "clang++": "/usr/bin/clang++-22", "ld.lld": "/usr/bin/ld.lld-22"})
    p = plan_for(tree("t2"), {"clang": True}, host=host)
    assert p.cmake.define("CMAKE_CXX_COMPILER") == "/usr/bin/clang++-22"
    assert p.cmake.define("CMAKE_SHARED_LINKER_FLAGS") == "-fuse-ld=lld"


def test_ccache_forced_but_missing(tree) -> None:
    host = dataclasses.replace(HOST, tools={**HOST.tools, "ccache": None})
    with pytest.raises(UserError, match="ccache was asked for"):
        plan_for(tree(), {"ccache": True}, host=host)
    p = plan_for(tree("t2"), host=host)
    assert p.toolchain.ccache is None and p.cmake.define("CMAKE_CXX_COMPILER_LAUNCHER") is None


def test_ccache_launcher_and_basedir(tree) -> None:
    root = tree()
    p = plan_for(root)
    assert p.cmake.define("CMAKE_CXX_COMPILER_LAUNCHER") == "/usr/bin/ccache"
    assert p.cmake.define("TRITON_BUILD_WITH_CCACHE") == "OFF"
    # the checkout is seen through the build dir's links: the cache root is the base dir
    assert dict(p.cmake.env)["CCACHE_BASEDIR"] == p.cache_root and p.cmake.source_dir.startswith(p.cache_root)
    plain = plan_for(root, {"stable_paths": False})
    assert dict(plain.cmake.env)["CCACHE_BASEDIR"] == str(root.parent) and plain.cmake.source_dir == str(root)
    # a configured build dir cannot change its source dir: the two get their own (and gcc keeps the links' names)
    assert plain.cmake.build_dir != p.cmake.build_dir
    assert p.cmake.define("TRITONBUILD_STABLE_PATHS") == "ON" and plain.cmake.define("TRITONBUILD_STABLE_PATHS") is None


def test_jobs_rule() -> None:
    small = dataclasses.replace(HOST, cpus=16, mem_total_gib=8.0, mem_available_gib=1.0)
    assert default_jobs(small) == 3  # 8 GiB / 2.5, whatever is available right now
    assert default_link_jobs(small, 3) == 1
    assert default_jobs(HOST) == 8 and default_link_jobs(HOST, 8) == 4
    tiny = dataclasses.replace(HOST, mem_total_gib=1.0, mem_available_gib=0.2)
    assert default_jobs(tiny) == 1 and default_link_jobs(tiny, 1) == 1


def test_jobs_and_link_jobs_from_env(tree) -> None:
    p = plan_for(tree(), env={"MAX_JOBS": "3", "TRITON_PARALLEL_LINK_JOBS": "1"})
    assert (p.toolchain.jobs, p.toolchain.link_jobs) == (3, 1)
    assert p.cmake.define("TRITON_PARALLEL_LINK_JOBS") == "1"


def test_debug_info_lever(tree) -> None:
    root = tree()
    p = plan_for(root)  # setup.py's build type compiles with -g: line tables by default (bench_levers: 1.43x)
    assert p.toolchain.debug_info == "lines" and p.cmake.define("TRITONBUILD_DEBUG_FLAG") == "-g1"
    assert plan_for(root, {"debug_info": "full"}).cmake.define("TRITONBUILD_DEBUG_FLAG") == "-g"
    assert plan_for(root, env={"TRITONBUILD_DEBUG_INFO": "none"}).cmake.define("TRITONBUILD_DEBUG_FLAG") == "-g0"
    assert plan_for(root, {"debug_info": "tree"}).cmake.define("TRITONBUILD_DEBUG_FLAG") is None
    release = plan_for(root, {"build_type": "Release"})  # no -g in its flags: left alone
    assert release.toolchain.debug_info == "tree" and release.cmake.define("TRITONBUILD_DEBUG_FLAG") is None
    assert p.key != plan_for(root, {"debug_info": "full"}).key  # other objects, another build dir
    with pytest.raises(UserError, match=r"debug_info = 'some' \(cli --debug-info\) must be one of: auto, lines"):
        plan_for(root, {"debug_info": "some"})


def test_linker_lever_prefers_lld_then_gold(tree) -> None:
    root = tree()
    assert plan_for(root).cmake.define("CMAKE_SHARED_LINKER_FLAGS") is None  # neither installed: the default
    gold = dataclasses.replace(HOST, tools={**HOST.tools, "ld.gold": "/usr/bin/ld.gold"})
    assert plan_for(root, host=gold).cmake.define("CMAKE_SHARED_LINKER_FLAGS") == "-fuse-ld=gold"
    lld = dataclasses.replace(gold, tools={**gold.tools, "ld.lld": "/usr/bin/ld.lld-22"},
                              lld_dir="/usr/lib/llvm-22/bin")
    p = plan_for(root, host=lld)  # bench_levers on d8da7c998's libtriton: bfd 26.6 s, gold 12.4 s, lld 3.0 s
    assert p.toolchain.linker == "lld" and p.toolchain.cxx_compiler == "/usr/bin/g++"
    assert {p.cmake.define(f"CMAKE_{k}_LINKER_FLAGS") for k in ("EXE", "MODULE", "SHARED")} == {
        "-fuse-ld=lld -B/usr/lib/llvm-22/bin"}  # gcc looks for an unversioned ld.lld
    assert plan_for(root, {"linker": "bfd"}, host=lld).cmake.define("CMAKE_SHARED_LINKER_FLAGS") == "-fuse-ld=bfd"
    assert plan_for(root, {"linker": "default"}, host=lld).cmake.define("CMAKE_SHARED_LINKER_FLAGS") is None
    with pytest.raises(UserError, match=r"no ld\.lld is installed"):
        plan_for(root, env={"TRITONBUILD_LINKER": "lld"}, host=gold)
    with pytest.raises(UserError, match=r"linker = 'mold' \(cli --linker\) must be one of: auto, lld, gold"):
        plan_for(root, {"linker": "mold"})


def test_proton_auto_off_without_cupti(tree) -> None:
    root = tree()
    p = plan_for(root, cuda_include=None)
    assert p.toolchain.proton is False and p.cmake.define("TRITON_BUILD_PROTON") == "OFF"
    assert any("no CUPTI headers" in n for n in p.notes)
    on = plan_for(root)  # a toolkit with cupti.h: on by default, like setup.py and official wheels
    assert on.toolchain.proton is True and on.cmake.define("CUPTI_INCLUDE_DIR") == "/usr/local/cuda/include"
    roctracer = to_real(on.cmake.define("ROCTRACER_INCLUDE_DIR") or "", on.cmake.views)
    assert roctracer == str(root / "third_party/amd/backend/include")
    assert on.cmake.define("JSON_INCLUDE_DIR") == "/usr/include"
    with pytest.raises(UserError, match="no third_party/proton"):
        plan_for(tree("noproton", proton=False), {"proton": True})


def test_key_is_stable_and_changes_with_the_backend_set(tree) -> None:
    root = tree()
    a, b = plan_for(root), plan_for(root)
    assert a.key == b.key and a.to_json() == b.to_json()
    c = plan_for(root, {"backends": "nvidia;amd;cpu"})
    assert c.key != a.key and c.cmake.build_dir != a.cmake.build_dir
    jobs = plan_for(root, {"jobs": 1})
    assert jobs.key == a.key  # parallelism does not make a different build dir


def test_plugin_without_name_conf_gets_a_shim(tree, plugin) -> None:
    root = tree()
    plug = plugin("triton-dash-plugin", name_conf=False)
    p = plan_for(root, {"plugin_dirs": (str(plug),)})
    shim, real = p.cmake.plugin_shims[0]
    assert to_real(real, p.cmake.views) == str(plug) and Path(shim).name.startswith("triton_dash_plugin-")
    assert p.cmake.define("TRITON_PLUGIN_DIRS") == shim


def test_version_from_git_like_setup_py(tree) -> None:
    git = GitState(commit=H, dirty=True, branch="main", commit_time=1)
    p = plan_for(tree(), git=git, env={"TRITON_WHEEL_VERSION_SUFFIX": "+ci"})
    assert p.wheel.version == "3.6.0+git2eb709b9-ci"
    assert any("uncommitted changes" in w for w in p.warnings)
    p = plan_for(tree("rel"), git=dataclasses.replace(git, branch="release/3.6.x"))
    assert p.wheel.version == "3.6.0"


def test_g3_defines_cache_path_and_version(tree) -> None:
    p = plan_for(tree(generation="G3"))
    assert p.cmake.define("TRITON_CACHE_PATH", ).endswith("triton-cache")  # type: ignore[union-attr]
    assert p.cmake.define("TRITON_VERSION") == "3.6.0"
    assert p.llvm.build_number == 1 and p.llvm.archive == "llvm-2eb709b9-ubuntu-x64-1.tar.gz"


def test_a_g2_tree_that_declares_the_cache_path_gets_it(tree) -> None:
    # upstream from early 2026 (triton-cpu 5066a56e9): cmake/llvm-hash.txt still, but its configure stops with
    # "TRITON_CACHE_PATH must be set or derivable from TRITON_HOME/HOME/..." when setup.py's variable is missing
    root = tree("g2cache")
    assert p_define(plan_for(root), "TRITON_CACHE_PATH") is None
    top = root / "CMakeLists.txt"
    top.write_text(top.read_text() + '\nset(TRITON_CACHE_PATH "" CACHE PATH "Path to triton cache")\n')
    p = plan_for(root)
    assert str(p_define(p, "TRITON_CACHE_PATH")).endswith("triton-cache") and p_define(p, "TRITON_VERSION") is None


def p_define(p, name: str) -> str | None:
    return dict(p.cmake.defines).get(name)


def test_staging_pyproject(tree, plugin) -> None:
    p = plan_for(tree(), {"backends": "nvidia;amd;spirv", "plugin_dirs": (str(plugin("x")),)})
    data = tomllib.loads(pyproject(p))
    assert data["project"]["entry-points"]["triton.backends"]["x"] == "triton.backends.x"
    sk = data["tool"]["scikit-build"]
    assert sk["build"]["targets"] == ["triton"] and sk["install"]["components"] == ["tritonbuild"]
    assert sk["wheel"]["packages"] == [] and sk["minimum-version"] == "0.10"
    assert sk["cmake"]["define"] == dict(p.cmake.defines)
    assert data["project"]["scripts"]["proton"] == "triton.profiler.proton:main"
    assert sk["install"]["strip"] is False  # explicit: scikit-build-core would strip by default
    stripped = plan_for(tree("t2"), {"strip": True})
    assert tomllib.loads(pyproject(stripped))["tool"]["scikit-build"]["install"]["strip"] is True


def g3_with_sha(tree, name: str = "g3") -> Path:
    import json

    root = tree(name, generation="G3")
    info = root / "cmake" / "llvm-info.json"
    info.write_text(json.dumps({"llvm_hash": H, "build_number": 4, "sha256sum": {"ubuntu-x64": "ab" * 32}}))
    return root


def test_auto_prefers_a_verified_download_over_the_system_llvm(tree) -> None:
    p = plan_for(g3_with_sha(tree))
    assert p.llvm.strategy == "download" and p.llvm.is_pinned is True
    assert p.llvm.prefix is not None and p.llvm.prefix.endswith("/llvm/llvm-2eb709b9-ubuntu-x64-4")
    assert p.cmake.define("LLVM_SYSPATH") == p.llvm.prefix
    assert p.cmake.define("CMAKE_CXX_FLAGS") is None  # the pinned LLVM needs no deprecation waiver


def test_auto_skips_the_download_offline_or_unverifiable(tree) -> None:
    offline = plan_for(g3_with_sha(tree), env={"TRITON_OFFLINE_BUILD": "1"})
    assert offline.llvm.strategy == "system"
    assert "offline" in dict(offline.llvm.rejected)["prebuilt download"]
    unpinned = plan_for(tree("g2"))
    assert unpinned.llvm.strategy == "system"
    assert "--allow-unpinned" in dict(unpinned.llvm.rejected)["prebuilt download"]
    allowed = plan_for(tree("g2b"), {}, env={"TRITONBUILD_ALLOW_UNPINNED": "1"})
    assert allowed.llvm.strategy == "download" and allowed.llvm.prefix.endswith("llvm-2eb709b9-ubuntu-x64")


def test_auto_prefers_a_cached_pinned_llvm(tree) -> None:
    root = g3_with_sha(tree)
    cached = llvm("/cache/llvm/llvm-2eb709b9-ubuntu-x64-4", revision=H, found_by="tritonbuild cache",
                  link_dylib=False)
    p = resolve_plan(resolve_settings({}, {}), dataclasses.replace(facts(root), llvm_cached=(cached,)))
    assert p.llvm.strategy == "cached" and p.llvm.is_pinned is True and p.llvm.prefix == cached.prefix


def test_explicit_download_that_cannot_work_is_an_error(tree) -> None:
    root = tree()
    with pytest.raises(UserError) as err:
        plan_for(root, {"llvm": "download", "backends": "nvidia;amd;spirv"})
    msg = str(err.value)  # which backend needs what the prebuilt lacks, and what to run instead (not --llvm system)
    assert "and spirv also needs SPIRV" in msg and "--llvm system" not in msg
    assert f"`tritonbuild llvm fetch --source {root} --backends 'nvidia;amd'`" in msg
    assert f"`tritonbuild llvm build --source {root} --backends 'nvidia;amd;spirv'`" in msg
    with pytest.raises(UserError, match="--llvm download cannot supply"):
        plan_for(tree("off"), {"llvm": "download", "offline": True})


def test_source_strategy_keys_the_cache_by_hash_targets_and_type(tree) -> None:
    p = plan_for(tree(), {"llvm": "source", "backends": "nvidia;amd;spirv"})
    assert p.llvm.strategy == "source"
    assert p.llvm.prefix.endswith(f"/llvm/src-{H[:12]}-AMDGPU_NVPTX_SPIRV_X86-Release")


def test_version_schemes(tree) -> None:
    git = GitState(commit=H, dirty=False, branch="main", commit_time=1767225600)  # 2026-01-01
    root = tree()
    versions = {scheme: plan_for(root, {"version_scheme": scheme}, git=git).wheel.version
                for scheme in ("setup", "git", "date", "date+git", "none")}
    assert versions == {"setup": "3.6.0+git2eb709b9", "git": "3.6.0+git2eb709b9", "date": "3.6.0.dev20260101",
                        "date+git": "3.6.0.dev20260101+git2eb709b9", "none": "3.6.0"}
    dated = plan_for(root, {"version_scheme": "date"}, env={"SOURCE_DATE_EPOCH": "1780000000"}, git=git)
    assert dated.wheel.version == "3.6.0.dev20260528"
    with pytest.raises(UserError, match="needs a date"):
        plan_for(tree("nogit"), {"version_scheme": "date"})


@pytest.mark.parametrize("given", ["99999999999999999999", "253402300800", "\u00b2", "-1", "1e9", " ", "0x10"])
def test_an_epoch_out_of_range_or_not_ascii_digits_is_refused_in_words(tree, given: str) -> None:
    """Found by a hostile review: 20 digits (or a checkout's commit date that far ahead) raised OverflowError from
    time.gmtime, and '\u00b2' passed str.isdigit; the last second of 9999 is the limit."""
    with pytest.raises(UserError, match=r"SOURCE_DATE_EPOCH=.*at most 253402300799"):
        plan_for(tree(), {"version_scheme": "date"}, env={"SOURCE_DATE_EPOCH": given})
    assert plan_for(tree("ok"), {"version_scheme": "date"},
                    env={"SOURCE_DATE_EPOCH": "253402300799"}).wheel.version == "3.6.0.dev99991231"


@given(st.text(max_size=30))
def test_parse_epoch_gives_an_int_in_range_or_none(text: str) -> None:
    from tritonbuild.settings.model import MAX_EPOCH, parse_epoch

    value = parse_epoch(text)
    assert value is None or ((0 <= value <= MAX_EPOCH and str(value) == text.strip().lstrip("0")) or value == 0)


def test_reproducible_needs_an_epoch_and_sets_it(tree) -> None:
    with pytest.raises(UserError, match="SOURCE_DATE_EPOCH"):
        plan_for(tree(), {"reproducible": True})
    git = GitState(commit=H, dirty=False, branch="main", commit_time=1767225600)
    p = plan_for(tree("r"), {"reproducible": True}, git=git)
    assert dict(p.cmake.env)["SOURCE_DATE_EPOCH"] == "1767225600"
    assert p.cmake.define("TRITONBUILD_REPRODUCIBLE") == "ON" and p.reproducible


def test_fingerprint_ignores_where_the_tree_lives(tree) -> None:
    a, b = plan_for(tree("a")), plan_for(tree("b"))
    assert a.key != b.key and a.fingerprint == b.fingerprint
    assert plan_for(tree("c"), {"backends": "nvidia;amd;cpu"}).fingerprint != a.fingerprint


def test_ccache_remote(tree) -> None:
    p = plan_for(tree(), {"ccache_remote": "redis://127.0.0.1:6379"})
    assert dict(p.cmake.env)["CCACHE_REMOTE_STORAGE"] == "redis://127.0.0.1:6379"
    with pytest.raises(UserError, match="needs ccache"):
        plan_for(tree("b"), {"ccache_remote": "redis://x", "ccache": False})


def test_default_recipe_pin_is_compared(tree) -> None:
    root = tree(llvm_hash="1" * 40)
    f = dataclasses.replace(facts(root), default_pin=H)
    p = resolve_plan(resolve_settings({}, {}), f)
    assert any("default recipe pins 2eb709b9" in n for n in p.notes)


def test_clang_auto(tree) -> None:
    p = plan_for(tree(), {"clang": "auto"})
    assert p.toolchain.linker == "default" and any("clang=auto" in n for n in p.notes)


def test_selected_backend_needing_a_missing_submodule_is_an_error(tree) -> None:
    root = tree()
    (root / ".gitmodules").write_text('[submodule "sleef"]\n\tpath = third_party/sleef\n')
    cml = root / "third_party" / "cpu" / "CMakeLists.txt"
    cml.write_text(cml.read_text() + 'add_subdirectory("${CMAKE_SOURCE_DIR}/third_party/sleef" sleef)\n')
    with pytest.raises(UserError, match="submodule update --init third_party/sleef"):
        plan_for(root, {"backends": "cpu"})
    p = plan_for(root, {"backends": "nvidia;amd"})
    assert any("third_party/sleef is not checked out" in n for n in p.notes)


def test_not_pinned_warning_says_how_to_get_the_pinned_llvm(tree) -> None:
    spirv = plan_for(tree("s"), {"backends": "spirv"})
    warning = next(w for w in spirv.warnings if "not the pinned commit" in w)
    assert "No prebuilt LLVM has all these targets" in warning and "tritonbuild llvm build" in warning
    g2 = next(w for w in plan_for(tree("g")).warnings if "not the pinned commit" in w)
    assert "--allow-unpinned" in g2
    offline = next(w for w in plan_for(tree("o"), env={"TRITON_OFFLINE_BUILD": "1"}).warnings
                   if "not the pinned commit" in w)
    assert "tritonbuild llvm fetch` on a connected machine" in offline


def test_extra_targets_are_built_in_the_same_build_dir(tree) -> None:
    root = tree()
    plain = plan_for(root)
    more = plan_for(root, {"targets": ("triton-opt", "triton", "triton-shared-opt", "triton-opt")})
    assert more.cmake.build_targets == ("triton", "triton-opt", "triton-shared-opt")
    assert more.key == plain.key and more.cmake.build_dir == plain.cmake.build_dir
    with pytest.raises(UserError, match=r"The CMake target 'triton-opt triton-shared-opt' \(from cli --target\)"):
        plan_for(root, {"targets": ("triton-opt triton-shared-opt",)})


def test_nvidia_tools_are_bundled_like_setup_py(tree) -> None:
    root = tree()
    tools = (("ptxas", "/opt/cuda-13.0/bin/ptxas", "/usr/local/cuda/bin/ptxas"),
             ("nvdisasm", "/opt/nvdisasm", "env TRITON_NVDISASM_PATH"))
    p = plan_for(root, nvidia_tools=tools)
    assert p.cmake.define("TRITONBUILD_NVIDIA_TOOLS") == "ptxas=/opt/cuda-13.0/bin/ptxas;nvdisasm=/opt/nvdisasm"
    note = next(n for n in p.notes if "backends/nvidia/bin" in n)
    assert "ptxas from /opt/cuda-13.0/bin/ptxas, nvdisasm from /opt/nvdisasm (env TRITON_NVDISASM_PATH)" in note
    off = plan_for(root, {"bundle_nvidia_tools": False}, nvidia_tools=tools)
    assert off.cmake.define("TRITONBUILD_NVIDIA_TOOLS") is None and not any("nvidia/bin" in n for n in off.notes)
    cpu_only = plan_for(tree(name="cpu-only", required=False, backends=("cpu",), proton=False),
                        {"backends": "cpu"}, nvidia_tools=tools)
    assert cpu_only.cmake.define("TRITONBUILD_NVIDIA_TOOLS") is None
    none = plan_for(root)
    assert any("no ptxas binary found to bundle" in n for n in none.notes)


def test_proton_variables_the_tree_requires_are_checked_before_configuring(tree) -> None:
    root = tree("no-amd", backends=("nvidia",), required=False)  # no in-tree roctracer headers to default to
    assert inspect_source(root).proton_requires == ("CUPTI_INCLUDE_DIR", "ROCTRACER_INCLUDE_DIR", "JSON_INCLUDE_DIR")
    with pytest.raises(UserError) as err:
        plan_for(root, {"backends": "nvidia"})
    assert "stops configuring without ROCTRACER_INCLUDE_DIR" in str(err.value)
    assert "TRITON_ROCTRACER_INCLUDE_PATH" in str(err.value) and "--no-proton" in str(err.value)
    ok = plan_for(root, {"backends": "nvidia"}, env={"TRITON_ROCTRACER_INCLUDE_PATH": "/opt/rocm/include"})
    assert ok.cmake.define("ROCTRACER_INCLUDE_DIR") == "/opt/rocm/include"
    assert plan_for(root, {"backends": "nvidia", "proton": False}).toolchain.proton is False


@pytest.mark.parametrize(("abi", "py_api", "define", "tag"), [
    ("cp311", None, "OFF", "cp311-cp311"), ("cp312", "cp312", "ON", "cp312-abi3"),
    ("cp314", "cp312", "ON", "cp312-abi3"), ("cp314t", None, "OFF", "cp314-cp314t")])
def test_a_stable_abi_tree_makes_one_abi3_wheel_for_312_and_later_but_never_free_threaded(
        tree, abi: str, py_api: str | None, define: str, tag: str) -> None:
    p = plan_for(tree(generation="G4"), host=replace(HOST, python_abi=abi))
    assert (p.wheel.py_api, dict(p.cmake.defines)["TRITON_STABLE_ABI"], p.wheel.tag) == (py_api, define, tag)
    assert p.source.bindings == "nanobind" and p.source.stable_abi
    assert "TRITON_STABLE_ABI" not in dict(plan_for(tree(generation="G3"), host=replace(HOST, python_abi=abi))
                                           .cmake.defines)


def test_stable_abi_and_extension_headers_follow_their_settings_and_the_tree(tree) -> None:
    g4, g2 = tree("g4", generation="G4"), tree("g2", generation="G2")
    host = replace(HOST, python_abi="cp313")
    off = plan_for(g4, {"stable_abi": False}, host=host)
    assert off.wheel.py_api is None and dict(off.cmake.defines)["TRITON_STABLE_ABI"] == "OFF"
    with pytest.raises(UserError, match=r"no TRITON_STABLE_ABI option .*Drop --stable-abi"):
        plan_for(g2, {"stable_abi": True}, host=host)
    defines = dict(plan_for(g4, host=host).cmake.defines)
    assert (defines["TRITONBUILD_EXT_HEADERS"], defines["TRITON_EXT_ENABLED"]) == ("ON", "ON")  # on by default
    defines = dict(plan_for(g2, env={"TRITON_EXT_ENABLED": "0"}, host=host).cmake.defines)
    assert defines["TRITONBUILD_EXT_HEADERS"] == "OFF" and "TRITON_EXT_ENABLED" not in defines  # G2 has no option
