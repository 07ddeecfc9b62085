"""The toolchain of a plan (pure): compilers, linker, compiler cache and distcc, jobs, debug info, proton."""

from __future__ import annotations

from tritonbuild.errors import UserError
from tritonbuild.plan import ToolchainPlan
from tritonbuild.resolve import compilercache, debuginfo, linker, nvidia
from tritonbuild.resolve.facts import Facts, HostFacts
from tritonbuild.settings.model import MAX_JOBS, Settings

GIB_PER_COMPILE_JOB = 2.5
GIB_PER_LINK_JOB = 8.0


def default_jobs(host: HostFacts) -> int:
    """min(cores, total memory / 2.5 GiB), at least 1: a Triton C++ file needs up to ~2.5 GiB to compile.

    Total (not available) memory keeps the default the same from run to run on one machine.
    """
    return max(1, min(host.cpus, int(host.mem_total_gib / GIB_PER_COMPILE_JOB)))


def default_link_jobs(host: HostFacts, jobs: int) -> int:
    """min(jobs, total memory / 8 GiB), at least 1: a static LLVM link of libtriton needs several GiB."""
    return max(1, min(jobs, int(host.mem_total_gib / GIB_PER_LINK_JOB)))


def _compilers(s: Settings, host: HostFacts, notes: list[str]) -> tuple[str, str, bool]:
    """C and C++ compilers, and whether they are clang (with lld)."""
    clang = s.clang
    if clang == "auto":
        clang = bool(host.tool("clang") and host.tool("clang++") and host.tool("ld.lld"))
        notes.append(f"clang=auto: using {'clang+lld' if clang else 'the default compiler (clang/lld not found)'}")
    if clang:
        cc, cxx, lld = host.tool("clang"), host.tool("clang++"), host.tool("ld.lld")
        if not (cc and cxx and lld):
            raise UserError(
                f"clang+lld was asked for ({s.origin('clang')}) but clang, clang++ or ld.lld is not installed "
                "(looked on PATH and in /usr/lib/llvm-*/bin). Install them (Debian: clang-22 lld-22) or drop "
                "--clang / TRITON_BUILD_WITH_CLANG_LLD."
            )
        return cc, cxx, True
    cc, cxx = host.tool("gcc") or host.tool("cc"), host.tool("g++") or host.tool("c++")
    if not (cc and cxx):
        raise UserError("No C/C++ compiler found (gcc/g++ or cc/c++). Install one (Debian: g++) or use --clang.")
    return cc, cxx, False


def _compiler_cache(s: Settings, host: HostFacts,
                    notes: list[str]) -> tuple[str, str | None, str | None, str | None]:
    """The compiler cache (kind and tool) and distcc (tool and hosts)."""
    origin = s.origin("compiler_cache") if s.compiler_cache else s.origin("ccache")
    cache, cache_tool = compilercache.choose(s.compiler_cache, s.ccache, origin, host.tool, notes)
    hosts = s.distcc
    distcc = host.tool("distcc") if hosts else None
    compilercache.check(cache, s.ccache_remote, s.origin("ccache_remote"), hosts)
    if hosts and not distcc:
        raise UserError(f"--distcc ({s.origin('distcc')}) needs distcc, which is not installed. Install it "
                        "(Debian: distcc) or drop --distcc.")
    return cache, cache_tool, distcc, hosts


def _proton(s: Settings, facts: Facts, notes: list[str]) -> bool:
    """Whether proton is built: as asked, else when the source has it and CUPTI headers are available."""
    proton, src = s.proton, facts.source
    if proton and not src.has_proton:
        raise UserError(
            f"Proton was asked for ({s.origin('proton')}) but this source has no third_party/proton. Drop "
            "--proton / TRITON_BUILD_PROTON."
        )
    if proton is None:
        proton = src.has_proton and nvidia.cupti_available(facts.nvidia, s.offline)
        if src.has_proton and not proton:
            cupti = facts.nvidia.sources.get("cupti")
            why = f"{cupti.wheel} from PyPI is not cached and the build is offline" if cupti else "none found"
            notes.append(f"proton is off: no CUPTI headers ({why}; set TRITON_CUPTI_INCLUDE_PATH or CUDA_HOME, or "
                         "build once online)")
    return bool(proton)


def resolve_toolchain(s: Settings, facts: Facts) -> tuple[ToolchainPlan, list[str]]:
    """The toolchain from the settings ``s`` (their origins are the ones its messages name)."""
    host, notes = facts.host, list[str]()
    cc, cxx, clang = _compilers(s, host, notes)
    link_with, lld_dir = linker.choose(s.linker, s.origin("linker"), clang, host)
    cache, cache_tool, distcc, hosts = _compiler_cache(s, host, notes)
    jobs = s.jobs or min(compilercache.fleet_jobs(hosts) if hosts else default_jobs(host), MAX_JOBS)
    link_jobs = s.link_jobs or default_link_jobs(host, jobs)
    build_type = s.build_type
    return ToolchainPlan(
        c_compiler=cc, cxx_compiler=cxx, linker=link_with, lld_dir=lld_dir,
        ccache=cache_tool if cache == "ccache" else None, compiler_cache=cache,
        sccache=cache_tool if cache == "sccache" else None, distcc=distcc, distcc_hosts=hosts,
        jobs=jobs, link_jobs=link_jobs, build_type=build_type, debug_info=debuginfo.choose(s.debug_info, build_type),
        unity_batch=s.unity_build, unity_exclude=s.unity_exclude,
        proton=_proton(s, facts, notes), offline=s.offline, mem_total_gib=host.mem_total_gib,
    ), notes


def ninja_args(tc: ToolchainPlan) -> tuple[str, ...]:
    """Ninja's options: the jobs, and under --unity-build ``-k 0``: every unit that can compile does, so one
    failed round shows every target that clashes when joined (``tritonbuild.execute.unity`` learns them)."""
    return (f"-j{tc.jobs}", *(("-k", "0") if tc.unity_batch else ()))
