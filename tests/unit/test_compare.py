"""tritonbuild compare on small synthetic wheels: every difference class and the allow-list."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import WHEEL_FILES as BASE
from tests.helpers import wheel
from tritonbuild.errors import UserError
from tritonbuild.wheel.compare import compare, read_allow
from tritonbuild.wheel.zipguard import BadWheel


def test_identical_wheels_have_no_differences(tmp_path: Path) -> None:
    a = wheel(tmp_path / "a.whl", BASE)
    b = wheel(tmp_path / "b.whl", BASE, version="3.6.0")
    r = compare(a, b)
    assert r["differences"] == [] and r["unaccepted"] == 0
    assert r["big_files"] == [{"file": "triton/_C/big.bin", "a": 2 << 20, "b": 2 << 20}]


def test_every_difference_class(tmp_path: Path) -> None:
    a = wheel(tmp_path / "a.whl", {**BASE, "triton/_build_info.json": b"{}", "triton/backends/cpu/compiler.py": b""},
              version="3.6.0+git1234abcd")
    b = wheel(tmp_path / "b.whl", {**BASE, "triton/backends/nvidia/include/cuda.h": b"",
                                   "triton/backends/nvidia/include/crt/host_defines.h": b""},
              requires_python=">=3.10,<3.15", requires=("importlib-metadata",),
              eps="[triton.backends]\nnvidia = triton.backends.nvidia\n[console_scripts]\nproton = x:main\n")
    r = compare(a, b)
    kinds = {(d["kind"], d["key"]) for d in r["differences"]}
    assert ("only-a", "triton/_build_info.json") in kinds and ("only-a", "triton/backends/cpu/compiler.py") in kinds
    assert ("only-b", "triton/backends/nvidia/include/cuda.h") in kinds
    assert {("metadata", "Version"), ("metadata", "Requires-Python"), ("metadata", "Requires-Dist")} <= kinds
    assert ("entry-point", "console_scripts:proton") in kinds and ("backend", "cpu") in kinds
    assert r["only_b_by_dir"] == {"triton/backends/nvidia/include": 1, "triton/backends/nvidia/include/crt": 1}
    assert r["backends"] == {"a": ["cpu", "nvidia"], "b": ["nvidia"]}
    assert r["unaccepted"] == len(r["differences"])


def test_allow_list_accepts_with_reasons_and_leaves_the_rest(tmp_path: Path) -> None:
    a = wheel(tmp_path / "a.whl", {**BASE, "triton/_build_info.json": b"{}"}, version="3.6.0+git1234abcd")
    b = wheel(tmp_path / "b.whl", {**BASE, "triton/backends/nvidia/lib/cupti/libcupti_static.a": b"",
                                   "triton/FileCheck": b""})
    allow = tmp_path / "allow"
    allow.write_text("# accepted\nmetadata Version  # +git suffix\nonly-a triton/_build_info.json\n\n"
                     "only-b triton/backends/nvidia/lib/cupti/*_static.a  # not loaded at run time\n")
    r = compare(a, b, rules=read_allow(allow))
    by_key = {d["key"]: d["allowed_by"] for d in r["differences"]}
    assert by_key["Version"] == "metadata Version (+git suffix)"
    assert by_key["triton/_build_info.json"] == "only-a triton/_build_info.json"
    assert by_key["triton/backends/nvidia/lib/cupti/libcupti_static.a"].endswith("(not loaded at run time)")
    assert by_key["triton/FileCheck"] is None and r["unaccepted"] == 1


def test_bad_allow_rules_and_files_are_clear_errors(tmp_path: Path) -> None:
    allow = tmp_path / "allow"
    allow.write_text("only-c triton/x\n")
    with pytest.raises(UserError, match=r"allow:1: 'only-c triton/x' is not an allow rule"):
        read_allow(allow)
    (tmp_path / "not.whl").write_text("nope")
    with pytest.raises(BadWheel, match="is not a readable wheel"):  # a finding about the file (exit 1), #35
        compare(tmp_path / "not.whl", tmp_path / "not.whl")
