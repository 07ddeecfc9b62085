"""Proton's header dirs as setup.py passes them, and the check before configuring (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.gather.source import proton_include_defaults
from tritonbuild.resolve import proton

MID_2026 = ("CUPTI_INCLUDE_DIR", "ROCTRACER_INCLUDE_DIR", "ROCM_INCLUDE_DIR", "XPUPTI_INCLUDE_DIR", "JSON_INCLUDE_DIR")


def test_in_tree_defaults_for_what_the_tree_requires(tmp_path: Path) -> None:
    (tmp_path / "third_party" / "amd" / "backend" / "include").mkdir(parents=True)
    amd = str(tmp_path / "third_party" / "amd" / "backend" / "include")
    present = proton_include_defaults(tmp_path)  # the gather step
    assert present == ("third_party/amd/backend/include",)
    got = proton.include_dirs({}, str(tmp_path), MID_2026, present)
    assert got == {"ROCTRACER_INCLUDE_DIR": amd, "ROCM_INCLUDE_DIR": amd}  # no Intel headers in this tree
    assert proton.include_dirs({"xpupti_include": "/x"}, str(tmp_path), MID_2026, present)["XPUPTI_INCLUDE_DIR"] \
        == "/x"
    assert "ROCM_INCLUDE_DIR" not in proton.include_dirs({}, str(tmp_path), ("ROCTRACER_INCLUDE_DIR",), present)


def test_a_cmake_arg_define_satisfies_the_check_and_the_advice_works() -> None:
    defines = {"CUPTI_INCLUDE_DIR": "/c", "ROCTRACER_INCLUDE_DIR": "/r", "JSON_INCLUDE_DIR": "/j"}
    with pytest.raises(UserError) as err:
        proton.preflight(MID_2026, defines)
    text = str(err.value)
    assert "ROCM_INCLUDE_DIR: set TRITON_ROCM_INCLUDE_PATH or --cmake-arg -DROCM_INCLUDE_DIR=DIR" in text
    assert "XPUPTI_INCLUDE_DIR: set TRITON_XPUPTI_INCLUDE_PATH" in text
    proton.preflight(MID_2026, defines, ["-DROCM_INCLUDE_DIR=/opt/rocm/include", "-DXPUPTI_INCLUDE_DIR:PATH=/x"])
