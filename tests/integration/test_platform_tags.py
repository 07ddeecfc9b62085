"""True platform tags (#46): the lowest manylinux policy a wheel's ELF files meet, from auditwheel's policy data,
held to the wheel's tag by ``verify``; ``--repair --plat`` refusing a wheel that needs a newer glibc; ``plan``
warning when this host's glibc is newer than the policy asked for. Small shared objects made with the system gcc
(one calls ``pthread_create``, GLIBC_2.34 on glibc 2.34+, one only ``strlen``), packed into hand-made wheels: no
build of the example tree."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import make_wheel, plan_for
from tests.integration.conftest import flat, run_cli, verify
from tritonbuild import manylinux
from tritonbuild.errors import BuildFailed
from tritonbuild.wheel import repair
from tritonbuild.wheel import verify as verify_mod
from tritonbuild.wheel.checks.base import Finding

NEW = ("#include <pthread.h>\nstatic void *f(void *a) { return a; }\n"
       "int go(void) { pthread_t t; return pthread_create(&t, 0, f, 0); }\n")
OLD = "#include <string.h>\nint old(const char *a) { return (int)strlen(a); }\n"
GLIBC = tuple(int(p) for p in os.confstr("CS_GNU_LIBC_VERSION").split()[1].split(".")[:2])  # type: ignore[union-attr]
pytestmark = [pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc to make the ELF files"),
              pytest.mark.skipif(GLIBC < (2, 34), reason="pthread_create is GLIBC_2.34 from glibc 2.34 on")]
PACKAGE = {"triton/__init__.py": b"", "triton/backends/nvidia/compiler.py": b""}


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    out = {}
    root = tmp_path_factory.mktemp("elves")
    needy = ["-L", str(root), "-Wl,--no-as-needed", "-lplatdep"]  # a library on no allow-list
    for name, code, extra in (("new", NEW, []), ("old", OLD, []), ("needy", OLD, needy)):
        if name == "needy":
            subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(root / "libplatdep.so"), "-x", "c", "-"],
                           input=OLD.encode(), check=True)
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(root / f"lib{name}.so"), "-x", "c", "-", *extra],
                       input=code.encode(), check=True)
        out[name] = (root / f"lib{name}.so").read_bytes()
    return out


def wheel_with(tmp_path: Path, tag: str, **elves: bytes) -> Path:
    files = {**PACKAGE, **{f"triton/_C/lib{name}.so": data for name, data in elves.items()}}
    return make_wheel(tmp_path / f"triton-3.6.0-cp311-cp311-{tag}.whl", files)


def platform_row(wheel: Path) -> Finding:
    found = [f for f in verify_mod.verify(wheel, import_test=False) if f.check == "platform"]
    assert len(found) == 1, found
    return found[0]


def test_a_plain_tag_is_a_note_naming_the_policy_it_could_be_repaired_to(libs, tmp_path: Path) -> None:
    row = platform_row(wheel_with(tmp_path, "linux_x86_64", new=libs["new"], old=libs["old"]))
    assert row == Finding("platform", "note", "the ELF files need manylinux_2_34_x86_64 at least "
                          "(pthread_create@GLIBC_2.34 (triton/_C/libnew.so)); the tag linux_x86_64 cannot go to a "
                          "package index: build with --repair --plat manylinux_2_34_x86_64")
    # auditwheel's own analysis of the same (trusted) wheel agrees on the level
    from auditwheel.wheel_abi import analyze_wheel_abi
    abi = analyze_wheel_abi(None, None, tmp_path / "triton-3.6.0-cp311-cp311-linux_x86_64.whl", frozenset(),
                            disable_isa_ext_check=True, allow_graft=True)
    assert abi.sym_policy.name == "manylinux_2_34_x86_64"


def test_a_tag_that_claims_an_older_glibc_than_the_symbols_need_fails(libs, tmp_path: Path) -> None:
    wheel = wheel_with(tmp_path, "manylinux_2_17_x86_64.manylinux2014_x86_64", new=libs["new"])
    row = platform_row(wheel)
    assert row.status == "fail", row
    assert row.text.startswith("the ELF files need manylinux_2_34_x86_64 at least (pthread_create@GLIBC_2.34 "
                               "(triton/_C/libnew.so)); the tag claims manylinux_2_17_x86_64, older than that")


def test_old_symbols_meet_the_oldest_policy_and_an_honest_tag_is_ok(libs, tmp_path: Path) -> None:
    row = platform_row(wheel_with(tmp_path, "manylinux_2_17_x86_64.manylinux2014_x86_64", old=libs["old"]))
    assert row == Finding("platform", "ok", "the ELF files need manylinux_2_5_x86_64 at least (the oldest policy "
                          "auditwheel knows); the tag claims manylinux_2_17_x86_64")
    assert platform_row(wheel_with(tmp_path, "manylinux_2_34_x86_64", new=libs["new"])).status == "ok"


def test_a_library_from_outside_every_allow_list_meets_no_policy(libs, tmp_path: Path) -> None:
    row = platform_row(wheel_with(tmp_path, "linux_x86_64", needy=libs["needy"]))
    assert row.status == "note" and row.text.startswith(
        "the ELF files meet no manylinux or musllinux policy (libplatdep.so (triton/_C/libneedy.so; not on "
        "manylinux_2_41_x86_64's allow-list)); the tag linux_x86_64 cannot go to a package index"), row
    assert platform_row(wheel_with(tmp_path, "manylinux_2_28_x86_64", needy=libs["needy"])).status == "fail"


def test_verify_through_the_cli_exits_1_on_an_over_claiming_tag(libs, tmp_path: Path) -> None:
    wheel = wheel_with(tmp_path, "manylinux_2_28_x86_64", new=libs["new"])
    proc = verify(str(wheel), "--no-import", cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 1 and "FAIL platform: the ELF files need manylinux_2_34_x86_64 at least" in out, out
    assert "glibc their symbols need is verify's platform check" in out  # the libraries row says what it is not


def _with_verneed_count(data: bytes, count: int) -> bytes:
    """``data`` with the .gnu.version_r section header's sh_info (its number of entries) set to ``count``."""
    from elftools.elf.elffile import ELFFile

    elffile = ELFFile(io.BytesIO(data))
    index = next(i for i, s in enumerate(elffile.iter_sections()) if s.name == ".gnu.version_r")
    at = elffile["e_shoff"] + index * elffile["e_shentsize"] + 44  # Elf64_Shdr.sh_info
    return data[:at] + count.to_bytes(4, "little") + data[at + 4:]


def test_a_version_table_that_loops_is_a_fail_row_in_bounded_time(libs, tmp_path: Path) -> None:
    start = time.monotonic()
    row = platform_row(wheel_with(tmp_path, "linux_x86_64", new=_with_verneed_count(libs["new"], 0xFFFFFFFF)))
    assert row.status == "fail" and "4294967295 version-need entries" in row.text, row
    assert time.monotonic() - start < 30


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, 15335), st.integers(0, 255)), min_size=1, max_size=40))
def test_damaged_elf_files_give_a_row_never_a_traceback(libs, tmp_path: Path, flips: list[tuple[int, int]]) -> None:
    data = bytearray(libs["new"])
    for at, value in flips:
        data[at % len(data)] = value
    start = time.monotonic()
    found = verify_mod.verify(wheel_with(tmp_path, "linux_x86_64", new=bytes(data)), import_test=False)
    assert all(isinstance(f, Finding) for f in found) and time.monotonic() - start < 30


def test_repair_to_an_older_policy_is_refused_naming_the_symbols(libs, tree, tmp_path: Path) -> None:
    wheel = wheel_with(tmp_path, "linux_x86_64", new=libs["new"], old=libs["old"])
    plan = replace(plan_for(tree()), repair=("libcuda.so.1",), repair_plat="manylinux_2_28_x86_64")
    with pytest.raises(BuildFailed) as err:
        repair.repair(plan, wheel, io.StringIO(), tmp_path / "log")
    text = str(err.value)
    assert text.startswith("The wheel cannot be repaired to manylinux_2_28_x86_64: its ELF files need "
                           "pthread_create@GLIBC_2.34 (triton/_C/libnew.so). They were built against glibc "), text
    assert "with glibc 2.28 or older" in text and "leave --plat out for the lowest policy the wheel meets " \
        "(manylinux_2_34_x86_64)" in text
    assert not (tmp_path / "repaired").exists()  # refused before auditwheel ran
    old = wheel_with(tmp_path, "linux_x86_64", old=libs["old"])
    repaired, facts = repair.repair(plan, old, io.StringIO(), tmp_path / "log")  # meets it: auditwheel --plat runs
    assert "manylinux_2_28_x86_64" in facts["platform"].split(".")
    assert repaired.name.endswith(f"{facts['platform']}.whl")


def test_plan_warns_when_the_host_glibc_is_newer_than_the_asked_policy(tree) -> None:
    root = tree()
    warned = plan_for(root, {"repair": True, "plat": "manylinux_2_28_x86_64"}).warnings  # HOST: glibc 2.36
    assert any(w.startswith("this host's glibc 2.36 is newer than manylinux_2_28_x86_64's 2.28") for w in warned)
    assert plan_for(root, {"repair": True, "plat": "manylinux_2_28_x86_64"}).repair_plat == "manylinux_2_28_x86_64"
    assert not any("glibc" in w for w in plan_for(root, {"repair": True, "plat": "manylinux_2_36_x86_64"}).warnings)
    alias = plan_for(root, {"repair": True}, env={"TRITONBUILD_PLAT": "manylinux2014_x86_64"})
    assert any("newer than manylinux2014_x86_64's 2.17" in w for w in alias.warnings)
    assert any(w.startswith("--plat manylinux_2_28_x86_64 (cli --plat) has no effect without --repair")
               for w in plan_for(root, {"plat": "manylinux_2_28_x86_64"}).warnings)
    assert manylinux.glibc_of("musllinux_1_2_x86_64") is None


@pytest.mark.parametrize("value", ["manylinux_2_29_x86_64", "linux_x86_64", "manylinux_2_28_x86_64\n", "x" * 5000])
def test_a_bad_plat_is_refused_by_plan_with_exit_2(tree, tmp_path: Path, value: str) -> None:
    proc = run_cli("plan", "--source", str(tree()), "--llvm", "/usr/lib/llvm-22", "--offline", "--cache-dir",
                   str(tmp_path / "cache"), cwd=tmp_path, env={"TRITONBUILD_PLAT": value}, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    text = flat(proc.stderr)
    assert text.startswith("error: The setting plat = ") and "(env TRITONBUILD_PLAT)" in text, text
