"""Which NVIDIA tool binaries a wheel gets (setup.py's backends/nvidia/bin), found on disk."""

from __future__ import annotations

from pathlib import Path

from tritonbuild.nvidia.discover import find_tools as find_nvidia_tools


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


def test_tritons_own_variables_win(tmp_path: Path) -> None:
    _tool(tmp_path / "cuda" / "bin" / "ptxas", elf=True)
    mine = _tool(tmp_path / "mine" / "ptxas-12.8", elf=True)
    dis = _tool(tmp_path / "cuda" / "bin" / "nvdisasm", elf=True)
    env = {"PATH": "", "TRITON_PTXAS_PATH": str(mine), "TRITON_CUOBJDUMP_PATH": str(tmp_path / "missing")}
    assert find_nvidia_tools(env, [str(tmp_path / "cuda")]) == (
        ("ptxas", str(mine), "env TRITON_PTXAS_PATH"), ("nvdisasm", str(dis), str(dis)))
