"""The build's acceptance runs the registry's build-time checks (#37): RECORD and the ELF libraries' needs now
too, before the import and the compile check; the first failure is the build's error and the checks after it
do not run. Real wheels (zip files, a real ELF library made with gcc), a real plan of the example tree, real
imports."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import BACKENDS_INIT, WHEEL_ONLY, PlainReporter, one_of, running
from tests.integration.conftest import run_cli
from tritonbuild import example
from tritonbuild.errors import BuildFailed
from tritonbuild.gather.request import Request, make_plan
from tritonbuild.plan import Plan
from tritonbuild.reporter import silent
from tritonbuild.wheel import acceptance, verify
from tritonbuild.wheel.checks import registry
from tritonbuild.wheel.checks.base import Context, Finding
from tritonbuild.wheel.checks.registry import BOTH

DIST = "triton-3.6.0.dist-info"
NAME = "triton-3.6.0-py3-none-any.whl"
# imports as triton and triton._C.libtriton, and leaves a mark in the build dir (<build>/smoke/wheel/triton/) that
# it was imported: the checks after a failure must not run
INIT = b"import pathlib\npathlib.Path(__file__).parents[3].joinpath('IMPORTED').touch()\n"
PACKAGE = {"triton/__init__.py": INIT, "triton/_C/__init__.py": b"", "triton/_C/libtriton.py": b"",
           "triton/backends/__init__.py": BACKENDS_INIT, "triton/backends/nvidia/__init__.py": b"",
           "triton/backends/nvidia/compiler.py": b""}


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel_of(path: Path, files: dict[str, bytes], *, tamper: str | None = None) -> Path:
    """A wheel with a RECORD that matches, except for the member ``tamper`` (changed after RECORD was written)."""
    members = {**files, f"{DIST}/METADATA": b"Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n",
               f"{DIST}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
               f"{DIST}/entry_points.txt": b"[triton.backends]\nnvidia = triton.backends.nvidia\n"}
    record = "".join(f"{n},{_digest(d)},{len(d)}\n" for n, d in members.items()) + f"{DIST}/RECORD,,\n"
    if tamper:
        members[tamper] += b"# changed after RECORD\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(f"{DIST}/RECORD", record)
    return path


def needy_library(tmp: Path) -> bytes:
    """A real shared library that needs libtbdep.so, which no wheel here carries."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp / "dep.c").write_text("int dep(void) { return 1; }\n")
    (tmp / "needy.c").write_text("int dep(void);\nint needy(void) { return dep(); }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp / "libtbdep.so"), str(tmp / "dep.c")], check=True)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp / "libneedy.so"), str(tmp / "needy.c"), "-L", str(tmp),
                    "-ltbdep"], check=True)
    return (tmp / "libneedy.so").read_bytes()


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Plan]:
    base = tmp_path_factory.mktemp("checks")
    tree = example.write_tree(base / "triton")
    kw: dict[str, Any] = {"source": str(tree), "cache_dir": str(base / "cache"), "llvm": "/usr/lib/llvm-22",
                          "compile_check": False, "python": sys.executable}
    request = Request.from_cli(kw, os.environ, base, warn=silent)
    return {"bundled": make_plan(request), "unbundled": make_plan(request.with_flags(bundle_libs=False))}


def accept(plan: Plan, wheel: Path) -> tuple[dict[str, Any], str]:
    """The build's acceptance of ``wheel`` under ``plan``: the compile report and what went into the log."""
    (Path(plan.cmake.build_dir) / "IMPORTED").unlink(missing_ok=True)
    log = io.StringIO()
    report = acceptance.smoke_test(plan, wheel, log, PlainReporter(io.StringIO()))
    return report, log.getvalue()


def imported(plan: Plan) -> bool:
    mark = Path(plan.cmake.build_dir) / "IMPORTED"
    found = mark.exists()
    mark.unlink(missing_ok=True)
    return found


def test_a_good_wheel_passes_record_libraries_and_import_and_the_log_says_so(plans: dict[str, Plan],
                                                                             tmp_path: Path) -> None:
    plan = plans["bundled"]
    wheel = wheel_of(tmp_path / NAME, PACKAGE)
    report, log = accept(plan, wheel)
    assert report == {"enabled": False, "why": "cli --compile-check/--no-compile-check"}
    assert "tritonbuild check RECORD: ok: 10 entries match" in log
    assert ("tritonbuild check libraries: ok: 0 ELF files need no library from outside the wheel but the manylinux "
            "allow-list's (libraries only; the glibc their symbols need is verify's platform check)") in log
    assert f"tritonbuild check import: ok: {plan.python} imports triton" in log and "smoke ok" in log
    assert imported(plan)
    assert not (Path(plan.cmake.build_dir) / "smoke").exists()  # the unpacked wheel and scratch are removed


def test_a_wheel_whose_record_does_not_match_is_refused_before_it_is_imported(plans: dict[str, Plan],
                                                                              tmp_path: Path) -> None:
    plan = plans["bundled"]
    wheel = wheel_of(tmp_path / NAME, PACKAGE, tamper="triton/backends/nvidia/compiler.py")
    with pytest.raises(BuildFailed) as err:
        accept(plan, wheel)
    assert str(err.value) == (f"The built wheel {NAME} fails the RECORD check: triton/backends/nvidia/compiler.py "
                              "does not match its RECORD hash. The wheel was not written to the output dir.")
    assert not imported(plan)


def test_a_library_needed_from_the_build_machine_is_refused_unless_the_plan_keeps_them(plans: dict[str, Plan],
                                                                                      tmp_path: Path) -> None:
    wheel = wheel_of(tmp_path / NAME, {**PACKAGE, "triton/_C/libneedy.so": needy_library(tmp_path)})
    with pytest.raises(BuildFailed) as err:
        accept(plans["bundled"], wheel)
    assert str(err.value) == (f"The built wheel {NAME} fails the libraries check: needed from outside the wheel "
                              "and the manylinux allow-list: triton/_C/libneedy.so needs libtbdep.so (build with "
                              "--bundle-libs). The wheel was not written to the output dir.")
    assert not imported(plans["bundled"])
    _, log = accept(plans["unbundled"], wheel)  # --no-bundle-libs: the build machine's libraries by choice
    assert "check libraries" not in log and imported(plans["unbundled"])
    found = verify.verify(wheel, import_test=False)  # verify still says what the wheel needs
    assert Finding("libraries", "fail", "needed from outside the wheel and the manylinux allow-list: "
                   "triton/_C/libneedy.so needs libtbdep.so (build with --bundle-libs)") in found


def test_a_wheel_that_does_not_import_gives_the_error_it_gave_before(plans: dict[str, Plan], tmp_path: Path) -> None:
    plan = plans["bundled"]
    wheel = wheel_of(tmp_path / NAME, {**PACKAGE, "triton/_C/libtriton.py": b"raise SystemError('aborted')\n"})
    with pytest.raises(BuildFailed) as err:
        accept(plan, wheel)
    assert str(err.value) == (f"The built wheel does not import with {plan.python} (exit code 1). The wheel was "
                              "not written to the output dir.")
    assert "SystemError: aborted" in err.value.tail


class Marker:
    """A check a newcomer adds: one class in one module, one registry line."""

    name = "marker"

    def applies(self, ctx: Context) -> bool:
        return True

    def run(self, ctx: Context) -> list[Finding]:
        return [Finding(self.name, "fail", f"{ctx.wheel.name} has {len(ctx.zf.namelist())} members")]


def test_one_registry_line_runs_a_new_check_at_build_time_and_in_verify(plans: dict[str, Plan], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "REGISTRY", ((Marker(), BOTH), *registry.REGISTRY))
    wheel = wheel_of(tmp_path / NAME, PACKAGE)
    assert verify.verify(wheel, import_test=False)[0] == Finding("marker", "fail", f"{NAME} has 10 members")
    with pytest.raises(BuildFailed) as err:
        accept(plans["bundled"], wheel)
    assert str(err.value) == (f"The built wheel {NAME} fails the marker check: {NAME} has 10 members. The wheel "
                              "was not written to the output dir.")
    assert not imported(plans["bundled"])


def test_a_real_build_and_its_quick_rebuild_run_every_build_time_check(tmp_path: Path) -> None:
    """The example tree built through the CLI: its build.log names each build-time check and its result; an edit
    is rebuilt from the kept install prefix (the quick strategy) and checked the same way."""
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia",), proton=False)
    args = ["build", "--json", "--source", str(tree), "--backends", "nvidia", "--no-proton", "--cache-dir",
            str(tmp_path / "cache"), "--out", str(tmp_path / "dist")]
    env = {**WHEEL_ONLY}
    first = one_of(run_cli(*args, cwd=tmp_path, env=env).stdout, "wheels")
    core = tree / "lib" / "Core.cpp"
    core.write_text(core.read_text() + '\nextern "C" const char* tb_checks_marker() { return "x"; }\n')
    again = one_of(run_cli(*args, cwd=tmp_path, env=env).stdout, "wheels")
    assert again["strategy"] == "quick"
    for result in (first, again):
        log = Path(result["log"]).read_text()
        checks = re.findall(r"^tritonbuild check (\S+): (\w+): ", log, re.MULTILINE)
        assert checks == [("RECORD", "ok"), ("libraries", "ok"), ("import", "ok"), ("compile", "ok")], checks
        assert result["compile_check"]["enabled"] is True and Path(result["wheel"]).is_file()


def test_what_the_wheels_import_starts_is_stopped_when_the_build_time_import_check_ends(plans: dict[str, Plan],
                                                                                       tmp_path: Path) -> None:
    """Review 51: a wheel whose import starts a detached process and a plain child left both running after the
    build's import check (verify's import already ran under the reaper). Now the build's import runs under it too."""
    spawn = (b"import subprocess\n"
             b"subprocess.Popen(['sleep', '63.25'], start_new_session=True)\n"
             b"subprocess.Popen(['sleep', '63.5'])\n")
    wheel = wheel_of(tmp_path / NAME, {**PACKAGE, "triton/__init__.py": INIT + spawn})
    begin = time.monotonic()
    _, log = accept(plans["bundled"], wheel)
    assert "tritonbuild check import: ok" in log
    assert time.monotonic() - begin < 30  # not sat through the children (one held the output pipe)
    assert running("sleep 63.25") == [] and running("sleep 63.5") == []


def test_what_the_wheels_import_starts_is_stopped_when_the_compile_checks_child_ends(tmp_path: Path) -> None:
    """Review 51: each of the compile check's children imports the wheel, whose import here starts a detached
    process and a plain child; both outlived the check (build and ``verify --compile``). The children now run under
    the reaper, their output still read as it comes."""
    from tritonbuild.plan import Case, CompileCheckPlan
    from tritonbuild.resolve import compilecheck
    from tritonbuild.wheel import compilecheck_run

    (tmp_path / "triton").mkdir()
    (tmp_path / "triton" / "__init__.py").write_text(
        "import subprocess\nsubprocess.Popen(['sleep', '64.25'], start_new_session=True)\n"
        "subprocess.Popen(['sleep', '64.5'])\n")
    target = compilecheck.GPU_TARGETS["nvidia"][0]
    plan = CompileCheckPlan(True, 60, (Case(f"softmax@{target.label}", "softmax", "nvidia", dict(target.spec)),))
    begin = time.monotonic()
    try:
        found = compilecheck_run.run_check(sys.executable, tmp_path, plan, log=silent)
    except RuntimeError as exc:  # this triton cannot compile: what it says, not how, is the point
        found = [{"status": "failed", "error": str(exc)}]
    assert found and found[0]["status"] != "ok", found
    assert time.monotonic() - begin < 30
    assert running("sleep 64.25") == [] and running("sleep 64.5") == []
