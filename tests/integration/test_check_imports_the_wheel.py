"""The build-time checks import the wheel, not an editable install (#45): a ``develop`` into the same venv leaves a
``.pth`` whose meta-path finder maps ``triton`` to the checkout. A build for that venv then compile-checked the
checkout (on d8da7c998: every kernel failed on the checkout's stale ``_C/libtriton.so`` link, "Cannot find
ptxas"). The smoke import and the compile check's child keep only the interpreter's own finders and require triton
from the unpacked wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tritonbuild.wheel import corpus_kernels
from tritonbuild.wheel.checks.importing import SMOKE

FINDER = '''import importlib.machinery, importlib.util, sys
class Editable:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname == "triton":
            return importlib.util.spec_from_file_location(
                "triton", {init!r}, submodule_search_locations=[{pkg!r}])
        return None
sys.meta_path.insert(0, Editable)
'''


def _package(root: Path, says: str) -> Path:
    pkg = root / "triton"
    (pkg / "_C").mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"WHO = {says!r}\n")
    (pkg / "_C" / "__init__.py").write_text("")
    (pkg / "_C" / "libtriton.py").write_text("")
    return pkg


@pytest.fixture(scope="module")
def venv_with_editable(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("editable")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base / "venv")], check=True)
    checkout = _package(base / "checkout", "checkout")
    site = next((base / "venv" / "lib").glob("python3*/site-packages"))
    (site / "editable_finder.py").write_text(FINDER.format(init=str(checkout / "__init__.py"), pkg=str(checkout)))
    (site / "editable.pth").write_text("import editable_finder\n")
    python = base / "venv" / "bin" / "python"
    who = subprocess.run([str(python), "-c", "import triton; print(triton.WHO)"], capture_output=True, text=True,
                         env={"PYTHONPATH": str(_package(base / "other", "other").parent)}, check=True)
    assert who.stdout.strip() == "checkout"  # the finder wins over PYTHONPATH: what the checks ran into
    return python, base


def test_the_smoke_import_takes_the_unpacked_wheel_over_an_editable_install(venv_with_editable, tmp_path) -> None:
    python, _ = venv_with_editable
    wheel_root = _package(tmp_path / "wheel", "wheel").parent
    out = subprocess.run([str(python), "-c", SMOKE + "; print(triton.WHO)"], capture_output=True, text=True,
                         env={"PYTHONPATH": str(wheel_root)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "wheel"


def test_the_compile_checks_child_refuses_a_triton_from_elsewhere(venv_with_editable, tmp_path) -> None:
    python, base = venv_with_editable
    wheel_root = _package(tmp_path / "wheel", "wheel").parent
    (wheel_root / "triton" / "language.py").write_text("")
    env = {"PYTHONPATH": str(wheel_root), "TRITONBUILD_CHECKED_ROOT": str(wheel_root)}
    ok = subprocess.run([str(python), corpus_kernels.__file__, "[]"], capture_output=True, text=True, env=env)
    ready = json.loads(ok.stdout.splitlines()[0])  # the stand-in has no kernels to define: what matters is which
    assert ready.get("file") == str(wheel_root / "triton" / "__init__.py") or "imports from" not in ok.stdout, ok.stdout
    env["TRITONBUILD_CHECKED_ROOT"] = str(base / "elsewhere")
    bad = subprocess.run([str(python), corpus_kernels.__file__, "[]"], capture_output=True, text=True, env=env)
    assert f"triton imports from {os.path.realpath(wheel_root / 'triton' / '__init__.py')}" in bad.stdout, bad.stdout
