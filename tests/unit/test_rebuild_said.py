"""What ``rebuild`` says after its build, decided in ``wheel.rebuild_rules``: the values taken from the provenance
and from this machine, and what differs between the subject wheel and the rebuilt one (real zip files)."""

from __future__ import annotations

import dataclasses
import zipfile
from pathlib import Path

from tritonbuild.gather.request import flag_settings
from tritonbuild.settings.model import Settings
from tritonbuild.system.fileutil import sha256_of
from tritonbuild.wheel import attestation, rebuild_rules

CLAIM = attestation.Claim(wheel="triton-3.6.0-cp312-cp312-linux_x86_64.whl", sha256="a" * 64,
                          settings={"cmake_args": ["-DX=1"], "jobs": 3}, origins={}, python="/evil/python",
                          abi="cp312", source="/src", commit="c" * 40, fingerprint="f")


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_trusted_values_the_source_and_the_interpreter_are_each_said() -> None:
    kw = {"source": "/src", "cmake_args": ("-DX=1",), "patches": (), "backends": "nvidia"}
    trusted = rebuild_rules.sources_said(CLAIM, kw, source_given=False, python_given=False, interpreter="/py",
                                         trust=True)
    assert trusted == ["taken from the provenance: cmake_args = ['-DX=1']",
                       f"source: /src (from the provenance), commit {'c' * 40}",
                       "from this machine: python = /py (cp312; the provenance's /evil/python is never run)"]
    given = rebuild_rules.sources_said(CLAIM, kw, source_given=True, python_given=True, interpreter="/py",
                                       trust=False)
    assert given == [f"source: /src (--source), commit {'c' * 40}",
                     "from this machine: python = /py (--python; the provenance's /evil/python is never run)"]


def test_machine_settings_at_their_default_are_named_once_and_a_differing_one_is_said_unused() -> None:
    flags = flag_settings()
    names = attestation.taken_from_machine(flags)
    assert "jobs" in names
    settings = dataclasses.replace(Settings(), jobs=8).with_origin(["jobs"], "cli -j")
    lines = rebuild_rules.machine_said(CLAIM, settings, flags)
    assert lines[0] == "from this machine: jobs = 8 (cli -j); the provenance's 3 is not used"
    assert lines[-1].startswith("from this machine, at their defaults as in the provenance: ")
    assert "jobs" not in lines[-1].split(": ", 1)[1].split(", ") and len(lines) == 2


def test_the_wheels_members_are_compared_by_size_and_crc_the_dist_info_version_aside(tmp_path: Path) -> None:
    subject = _zip(tmp_path / "a.whl", {"triton-3.6.0.dist-info/RECORD": b"r", "triton/x.so": b"12",
                                        "triton/only_a.py": b""})
    (tmp_path / "b").mkdir()
    rebuilt = _zip(tmp_path / "b" / "a.whl",
                   {"triton-3.6.1.dist-info/RECORD": b"r", "triton/x.so": b"123", "triton/only_b.py": b""})
    found = rebuild_rules._wheel_differences(subject, sha256_of(subject), rebuilt)
    assert found == {"build info": [], "members": ["triton/only_a.py: only in the subject",
                                                   "triton/only_b.py: only in the rebuild",
                                                   "triton/x.so: differs (2 bytes in the subject, 3 rebuilt)"]}
    assert rebuild_rules._wheel_differences(tmp_path / "gone.whl", "0" * 64, rebuilt) == {
        "subject": [f"{tmp_path / 'gone.whl'} is not here: only the sha256s are compared (pass --wheel)"]}
    assert rebuild_rules._wheel_differences(subject, "0" * 64, rebuilt) == {
        "subject": [f"{subject} is not the provenance's wheel (another sha256): not compared"]}


def test_a_long_member_list_is_cut_with_a_count(tmp_path: Path) -> None:
    a = _zip(tmp_path / "a.zip", {f"m{i:03}": b"" for i in range(45)})
    b = _zip(tmp_path / "b.zip", {})
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        lines = rebuild_rules._member_differences(za, zb)
    assert len(lines) == 41 and lines[-1] == "... and 5 more" and lines[0] == "m000: only in the subject"
