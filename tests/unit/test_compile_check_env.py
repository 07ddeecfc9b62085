"""The compile check's child finds a ptxas for sm_100+ under both names Triton has read it by (#47: triton-shared's
Triton acd810499 failed 23 sm_100a kernels with "Cannot find ptxas-blackwell" after an hour of build, because its
knobs.py reads TRITON_PTXAS-BLACKWELL_PATH and only TRITON_PTXAS_BLACKWELL_PATH was set)."""

from __future__ import annotations

from pathlib import Path

from tritonbuild.wheel.compilecheck_run import child_env


def knob_key(binary: str, fixed: bool) -> str:
    """The variable Triton's ``env_nvidia_tool`` reads: before late 2025 ``TRITON_{binary.upper()}_PATH``, then with
    the hyphen replaced (knobs.py's "Convert ptxas-blackwell to PTXAS_BLACKWELL, not PTXAS-BLACKWELL")."""
    return f"TRITON_{binary.upper().replace('-', '_') if fixed else binary.upper()}_PATH"


def test_a_toolkit_ptxas_stands_in_for_ptxas_blackwell_under_both_spellings(tmp_path: Path) -> None:
    cuda = tmp_path / "cuda"
    (cuda / "bin").mkdir(parents=True)
    (cuda / "bin" / "ptxas").write_text("#!/bin/sh\n")
    (cuda / "bin" / "ptxas").chmod(0o755)
    wheel = tmp_path / "wheel"
    (wheel / "triton/backends/nvidia/bin").mkdir(parents=True)
    env = child_env({"CUDA_HOME": str(cuda), "TRITON_INTERPRET": "1"}, wheel, True, tmp_path / "kcache")
    for fixed in (False, True):
        assert env[knob_key("ptxas-blackwell", fixed)] == str(cuda / "bin" / "ptxas")
    assert "TRITON_INTERPRET" not in env  # the user's other knobs still do not change what is checked


def test_a_bundled_ptxas_blackwell_is_left_to_the_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "wheel"
    (wheel / "triton/backends/nvidia/bin").mkdir(parents=True)
    for name in ("ptxas", "ptxas-blackwell"):
        (wheel / "triton/backends/nvidia/bin" / name).write_text("#!/bin/sh\n")
        (wheel / "triton/backends/nvidia/bin" / name).chmod(0o755)
    env = child_env({"CUDA_HOME": str(tmp_path)}, wheel, True, tmp_path / "kcache")
    assert not any(k.startswith("TRITON_PTXAS") for k in env)
