"""A plan is a function of the request and the inputs, never of what the cache holds (#45): for each provider that
fills the cache when a build runs, the plan resolved before it ran and the one resolved after have the same key,
build dir and identity (what decides whether the kept wheel is republished or reused)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from tests.helpers import facts, llvm, nvidia_facts
from tritonbuild.plan import Plan, identity, identity_dict
from tritonbuild.resolve.facts import Facts
from tritonbuild.resolve.nvidia_parts import Source, ToolOffer
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.settings.model import resolve_settings

H = "2eb709b95d8f521aa15401e159fac0729d56a677"
PTXAS = (("ptxas", "/opt/cuda/bin/ptxas", "/usr/local/cuda/bin/ptxas"),)


def _plan(f: Facts, cli: dict[str, object] | None = None) -> Plan:
    return resolve_plan(resolve_settings(cli or {}, {}), f)


def _same(before: Plan, after: Plan) -> None:
    assert before.to_json() != after.to_json()  # the provider's run shows in the plan (else the test proves nothing)
    assert (before.key, before.cmake.build_dir, before.fingerprint) == (after.key, after.cmake.build_dir,
                                                                       after.fingerprint)
    assert before.cmake.defines == after.cmake.defines and before.wheel == after.wheel
    assert identity_dict(before) == identity_dict(after)
    assert identity(before) == identity(after)


def _tools_facts(root: Path, offer: ToolOffer) -> Facts:
    nv = nvidia_facts(root, "/usr/local/cuda/include", PTXAS, ptxas_version="13.0.88",
                      tool_offers={"cuobjdump": offer, "nvdisasm": replace(offer, tool="nvdisasm")})
    return facts(root, nvidia=nv)


def test_nvidia_tool_wheels_from_the_index_or_the_wheelhouse_then_cached(tree, tmp_path: Path) -> None:
    root = tree()
    entries = str(tmp_path / "cache" / "nvidia")
    for where in ({"index": ("13.0.85", "13.2.51")}, {"wheelhouse": (("13.2.51", "/wh/x.whl"),)}):
        before = _plan(_tools_facts(root, ToolOffer("cuobjdump", entries, **where)))  # type: ignore[arg-type]
        after = _plan(_tools_facts(root, ToolOffer("cuobjdump", entries, cached=("13.2.51",),
                                                   **where)))  # type: ignore[arg-type]
        assert [p.wheels for p in before.nvidia if p.dest == "bin"] == [("nvidia-cuda-cuobjdump==13.2.51",),
                                                                       ("nvidia-cuda-nvdisasm==13.2.51",)]
        assert all(not p.wheels for p in after.nvidia)
        assert "cuobjdump=" in (after.cmake.define("TRITONBUILD_NVIDIA_TOOLS") or "")
        _same(before, after)
    other = _plan(_tools_facts(root, ToolOffer("cuobjdump", entries, cached=("13.0.85",))))
    assert identity(other) != identity(after)  # another version of the tool is another plan


def test_nvidia_header_wheels_to_download_then_unpacked(tree, tmp_path: Path) -> None:
    root = tree()
    unpacked = str(tmp_path / "cache" / "nvidia" / "nvidia-cuda-runtime-13.0.88" / "nvidia" / "cu13" / "include")
    spec = "nvidia-cuda-runtime==13.0.88"

    def nv(cached: bool) -> Facts:
        src = {c: Source(c, (unpacked,), f"PyPI {spec}", wheel=spec, cached=cached) for c in ("cudart", "cupti")}
        made = nvidia_facts(root, "/unused", PTXAS, sources=src)
        files = made.header_files if cached else None
        return facts(root, nvidia=replace(made, header_files=files and tuple((unpacked, h) for _, h in files),
                                          cupti_header_files=((unpacked, "cupti.h"),) if cached else None,
                                          cupti_lib_files=None))

    before, after = _plan(nv(False)), _plan(nv(True))
    assert before.nvidia[0].wheels == (spec,) and not before.nvidia[0].files
    assert after.nvidia[0].files and not after.nvidia[0].wheels
    _same(before, after)


def g3_with_sha(tree) -> Path:  # type: ignore[no-untyped-def]
    root = tree("g3", generation="G3")
    info = root / "cmake" / "llvm-info.json"
    info.write_text(json.dumps({"llvm_hash": H, "build_number": 4, "sha256sum": {"ubuntu-x64": "ab" * 32}}))
    return root


def test_llvm_downloaded_by_the_build_then_found_in_the_cache(tree) -> None:
    root = g3_with_sha(tree)
    before = _plan(facts(root))
    assert before.llvm.strategy == "download" and before.llvm.prefix
    probed = llvm(before.llvm.prefix, revision=H, found_by="tritonbuild cache", link_dylib=False, static_libs=True,
                  version="21.0.0git", targets_built=("AMDGPU", "NVPTX", "X86"))
    after = _plan(replace(facts(root), llvm_cached=(probed,)))
    assert after.llvm.strategy == "cached" and after.llvm.version == "21.0.0git"
    _same(before, after)
    system = _plan(facts(root), {"llvm": "system"})
    assert system.key != after.key and identity(system) != identity(after)  # another LLVM is another plan


def test_llvm_built_from_source_then_in_the_cache(tree) -> None:
    root = g3_with_sha(tree)
    before = _plan(facts(root), {"llvm": "source"})
    assert before.llvm.strategy == "source" and before.llvm.prefix
    built = llvm(before.llvm.prefix, revision=H, found_by="tritonbuild cache", link_dylib=False, static_libs=True)
    after = _plan(replace(facts(root), llvm_cached=(built,)), {"llvm": "source"})
    assert identity(before) == identity(after) and before.key == after.key


def test_identity_still_tells_what_the_wheel_is_made_from(tree) -> None:
    root = tree()
    base = _plan(facts(root))
    assert identity(base) == identity(_plan(facts(root)))
    assert identity(base) != identity(_plan(facts(root), {"backends": "nvidia"}))
    assert identity(base) != identity(_plan(facts(root), {"version_suffix": "+local1"}))
    moved = replace(base, notes=("downloaded when the build runs",), warnings=("w",))
    assert identity(moved) == identity(base)
