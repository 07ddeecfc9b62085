"""Which NVIDIA tool binaries a wheel gets (setup.py's backends/nvidia/bin), found on disk."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tritonbuild.nvidia.discover import find_tools as find_nvidia_tools
from tritonbuild.settings.model import Settings, resolve_settings


def _tool(path: Path, elf: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF\x02\x01\x01" if elf else b'#!/bin/sh\nexec /usr/local/cuda-13.0/bin/ptxas "$@"\n')
    path.chmod(0o755)
    return path


def test_real_binaries_are_found_and_wrapper_scripts_skipped(tmp_path: Path) -> None:
    wrapper = _tool(tmp_path / "usr-local-bin" / "ptxas", elf=False)  # like /usr/local/bin/ptxas here
    real = _tool(tmp_path / "cuda-13.0" / "bin" / "ptxas", elf=True)
    (tmp_path / "cuda").symlink_to(tmp_path / "cuda-13.0")
    env = {"PATH": str(wrapper.parent)}
    assert find_nvidia_tools(env, [str(tmp_path / "cuda")]) == (
        ("ptxas", str(real), str(tmp_path / "cuda" / "bin" / "ptxas")),)  # the link resolved to the file
    assert find_nvidia_tools(env, []) == ()  # only the wrapper: nothing to bundle


def test_tritons_own_variables_win_through_the_settings_only(tmp_path: Path) -> None:
    _tool(tmp_path / "cuda" / "bin" / "ptxas", elf=True)
    mine = _tool(tmp_path / "mine" / "ptxas-12.8", elf=True)
    dis = _tool(tmp_path / "cuda" / "bin" / "nvdisasm", elf=True)
    given = {"TRITON_PTXAS_PATH": str(mine), "TRITON_CUOBJDUMP_PATH": str(tmp_path / "missing")}
    settings = resolve_settings({}, given)
    # a variable is taken as given, even naming nothing: the plan refuses it (choose.input_problem), never skips it
    assert find_nvidia_tools({"PATH": ""}, [str(tmp_path / "cuda")], settings) == (
        ("ptxas", str(mine), "env TRITON_PTXAS_PATH"),
        ("cuobjdump", str(tmp_path / "missing"), "env TRITON_CUOBJDUMP_PATH"), ("nvdisasm", str(dis), str(dis)))
    # the variables themselves are the settings model's to read: in ``env`` they are not looked at again
    env = {"PATH": "", "TRITON_NVDISASM_PATH": str(mine), "TRITON_CUOBJDUMP_PATH": str(mine)}
    assert find_nvidia_tools(env, [str(tmp_path / "cuda")]) == (
        ("ptxas", str(tmp_path / "cuda" / "bin" / "ptxas"), str(tmp_path / "cuda" / "bin" / "ptxas")),
        ("nvdisasm", str(dis), str(dis)))


def test_ptxas_blackwell_from_the_variable_or_a_second_toolkit(tmp_path: Path) -> None:
    from tritonbuild.nvidia.discover import ptxas_blackwell

    first = _tool(tmp_path / "cuda-12.8" / "bin" / "ptxas", elf=True)
    second = _tool(tmp_path / "cuda-13.0" / "bin" / "ptxas", elf=True)
    roots = [str(tmp_path / "cuda-13.0"), str(tmp_path / "cuda-12.8")]
    # bin/ptxas comes from 12.8: the other toolkit's ptxas is the blackwell one
    assert ptxas_blackwell(Settings(), roots, str(first)) == (str(second), f"a second CUDA toolkit ({roots[0]})")
    assert ptxas_blackwell(Settings(), [roots[1]], str(first)) is None  # one toolkit: nothing to add
    mine = _tool(tmp_path / "mine" / "ptxas-bw", elf=True)
    assert ptxas_blackwell(resolve_settings({}, {"TRITON_PTXAS_BLACKWELL_PATH": str(mine)}), roots, str(first)) == (
        str(mine), "env TRITON_PTXAS_BLACKWELL_PATH")


def test_only_trees_that_look_for_ptxas_blackwell_get_one(tree) -> None:
    from tests.helpers import nvidia_facts, plan_for

    root = tree()
    tools = (("ptxas", "/cuda-12.8/bin/ptxas", "toolkit"), ("ptxas-blackwell", "/cuda-13.0/bin/ptxas", "a second"))
    p = plan_for(root, nvidia=nvidia_facts(root, "/usr/local/cuda/include", tools, wants_ptxas_blackwell=True))
    bundled = "ptxas=/cuda-12.8/bin/ptxas;ptxas-blackwell=/cuda-13.0/bin/ptxas"
    assert p.cmake.define("TRITONBUILD_NVIDIA_TOOLS") == bundled
    alone = plan_for(root, nvidia=nvidia_facts(root, "/usr/local/cuda/include", tools[:1], wants_ptxas_blackwell=True))
    assert any("looks for bin/ptxas-blackwell" in n for n in alone.notes)


def test_the_tool_wheels_version_follows_ptxas() -> None:
    from tritonbuild.resolve.nvidia import pick_tool_version as pick

    offered = ("13.0.20", "13.1.80", "13.2.51", "13.3.29", "14.0.1", "12.9.1", "junk", "13.x")
    assert pick(offered, ptxas="13.0.88", pin="13.1.80")[0] == "13.1.80"  # the tree's pin, when there
    assert pick(offered, ptxas="13.0.88", pin="13.1.99")[0] == "13.1.80"  # else the lowest >= ptxas
    assert pick(offered, ptxas="13.1.80", pin=None)[0] == "13.1.80"  # >= includes equal
    assert pick(offered, ptxas="13.9.0", pin="13.1.99") == (
        "13.3.29", "the tree's pin 13.1.99 is not available, none is >= ptxas 13.9.0: the newest of CUDA 13")
    assert pick(offered, ptxas="14.0.0", pin="13.1.80")[0] == "14.0.1"  # another major's pin is not taken
    assert pick(offered, ptxas="15.0.0", pin=None) == (None, "no CUDA 15 version is available for ptxas 15.0.0")
    assert pick(offered, ptxas=None, pin=None)[0] == "14.0.1"  # nothing to go by: the newest
    assert pick((), ptxas=None, pin="13.1.80") == (None, "no version of it is available")


@given(offered=st.lists(st.tuples(st.integers(12, 15), st.integers(0, 9), st.integers(0, 99)), max_size=8),
       ptxas=st.tuples(st.integers(12, 15), st.integers(0, 9), st.integers(0, 99)),
       pin=st.one_of(st.none(), st.tuples(st.integers(12, 15), st.integers(0, 9), st.integers(0, 99))))
def test_the_picked_version_is_offered_of_ptxas_major_and_by_the_rules(
        offered: list[tuple[int, int, int]], ptxas: tuple[int, int, int], pin: tuple[int, int, int] | None) -> None:
    from tritonbuild.resolve.nvidia import pick_tool_version

    def text(v: tuple[int, int, int]) -> str:
        return ".".join(map(str, v))

    same = [v for v in offered if v[0] == ptxas[0]]
    picked, why = pick_tool_version([text(v) for v in offered], ptxas=text(ptxas), pin=text(pin) if pin else None)
    if not same:
        assert picked is None and f"CUDA {ptxas[0]}" in why
        return
    assert picked is not None
    got = tuple(int(x) for x in picked.split("."))
    assert got in same  # never another major's, never one not offered
    if pin in same:
        assert got == pin
    elif any(v >= ptxas for v in same):
        assert got == min(v for v in same if v >= ptxas)
    else:
        assert got == max(same)
