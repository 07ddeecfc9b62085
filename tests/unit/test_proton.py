"""Proton's header dirs as setup.py passes them, and the check before configuring (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.gather.source import proton_include_defaults
from tritonbuild.resolve import proton

MID_2026 = ("CUPTI_INCLUDE_DIR", "ROCM_INCLUDE_DIR", "XPUPTI_INCLUDE_DIR", "JSON_INCLUDE_DIR")
# get_proton_cmake_args as upstream 23ca0e48a2 writes it (ROCTRACER gone, ROCprofiler-SDK optional)
UPSTREAM_SETUP = '''
class CMakeBuild(build_ext):
    def get_nanobind_cmake_args(self):
        return []

    def get_proton_cmake_args(self):
        cmake_args = self.get_nanobind_cmake_args()
        cupti_include_dir = get_env_with_keys(["TRITON_CUPTI_INCLUDE_PATH"])
        if cupti_include_dir == "":
            cupti_include_dir = os.path.join(get_base_dir(), "third_party", "nvidia", "backend", "include")
        cmake_args += ["-DCUPTI_INCLUDE_DIR=" + cupti_include_dir]
        rocm_include_dir = get_env_with_keys(["TRITON_ROCM_INCLUDE_PATH"])
        if rocm_include_dir == "":
            rocm_include_dir = os.path.join(get_base_dir(), "third_party", "amd", "backend", "include")
        cmake_args += ["-DROCM_INCLUDE_DIR=" + rocm_include_dir]
        rocprofiler_sdk_include_dir = get_env_with_keys(["TRITON_ROCPROFILER_SDK_INCLUDE_PATH"])
        if rocprofiler_sdk_include_dir:
            cmake_args += ["-DROCPROFILER_SDK_INCLUDE_DIR=" + rocprofiler_sdk_include_dir]
        return cmake_args

    def build_extension(self, ext):
        cmake_args = ["-DROCTRACER_INCLUDE_DIR=" + roctracer]
'''


def test_setup_py_says_what_proton_gets() -> None:
    # CUPTI comes from the toolkit or the staged NVIDIA parts; what another method passes is not proton's
    assert proton.setup_dirs(UPSTREAM_SETUP) == (
        ("ROCM_INCLUDE_DIR", "TRITON_ROCM_INCLUDE_PATH", "third_party/amd/backend/include"),
        ("ROCPROFILER_SDK_INCLUDE_DIR", "TRITON_ROCPROFILER_SDK_INCLUDE_PATH", ""))
    assert proton.setup_dirs("setup(name='triton')") == ()


def test_every_example_generation_is_read_from_its_setup_py(tmp_path: Path) -> None:
    for gen, expected in (("G1", {"ROCTRACER_INCLUDE_DIR"}), ("G3", {"ROCM_INCLUDE_DIR", "ROCTRACER_INCLUDE_DIR"}),
                          ("G4", {"ROCM_INCLUDE_DIR", "ROCTRACER_INCLUDE_DIR", "XPUPTI_INCLUDE_DIR",
                                  "ROCPROFILER_SDK_INCLUDE_DIR"})):
        tree = example.write_tree(tmp_path / gen, generation=gen)
        setup = tree / ("python/setup.py" if gen == "G1" else "setup.py")
        assert {d[0] for d in proton.setup_dirs(setup.read_text())} == expected, gen


def test_in_tree_defaults_and_the_environment(tmp_path: Path) -> None:
    (tmp_path / "third_party" / "amd" / "backend" / "include").mkdir(parents=True)
    amd = str(tmp_path / "third_party" / "amd" / "backend" / "include")
    dirs = proton.setup_dirs(UPSTREAM_SETUP)
    present = proton_include_defaults(tmp_path, dirs)  # the gather step
    assert present == ("third_party/amd/backend/include",)
    assert proton.include_dirs({}, str(tmp_path), dirs, present) == {"ROCM_INCLUDE_DIR": amd}
    # an environment variable setup.py reads wins, also one tritonbuild has no setting for
    got = proton.include_dirs({"TRITON_ROCM_INCLUDE_PATH": "/opt/rocm/include",
                               "TRITON_ROCPROFILER_SDK_INCLUDE_PATH": "/sdk"}, str(tmp_path), dirs, present)
    assert got == {"ROCM_INCLUDE_DIR": "/opt/rocm/include", "ROCPROFILER_SDK_INCLUDE_DIR": "/sdk"}


def test_a_cmake_arg_define_satisfies_the_check_and_the_advice_works() -> None:
    defines = {"CUPTI_INCLUDE_DIR": "/c", "ROCTRACER_INCLUDE_DIR": "/r", "JSON_INCLUDE_DIR": "/j"}
    dirs = (("ROCM_INCLUDE_DIR", "TRITON_ROCM_INCLUDE_PATH", "third_party/amd/backend/include"),
            ("XPUPTI_INCLUDE_DIR", "TRITON_XPUPTI_INCLUDE_PATH", "third_party/intel/backend/proton/include"))
    with pytest.raises(UserError) as err:
        proton.preflight(MID_2026, defines, (), dirs)
    text = str(err.value)
    assert "ROCM_INCLUDE_DIR: set TRITON_ROCM_INCLUDE_PATH or --cmake-arg -DROCM_INCLUDE_DIR=DIR" in text
    assert "XPUPTI_INCLUDE_DIR: set TRITON_XPUPTI_INCLUDE_PATH" in text
    proton.preflight(MID_2026, defines, ["-DROCM_INCLUDE_DIR=/opt/rocm/include", "-DXPUPTI_INCLUDE_DIR:PATH=/x"], dirs)
