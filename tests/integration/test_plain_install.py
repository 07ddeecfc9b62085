"""tritonbuild as `pip install tritonbuild` gives it: its own wheel, no extras, not editable, in a bare venv, run
with a minimal environment. A dependency that only an extra brings, or a data file left out of the wheel, fails
here (CI's own venv has the test extras)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import shared_ccache

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_installed_without_extras_runs_selftest(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
                   check=True, capture_output=True)
    [wheel] = wheels.glob("tritonbuild-*.whl")
    venv = tmp_path / "bare"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True)
    extras = subprocess.run([str(venv / "bin" / "python"), "-c", "import auditwheel"], capture_output=True)
    assert extras.returncode != 0, "the bare venv must not have the test extras"
    minimal = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8",
               "TMPDIR": os.environ.get("TMPDIR", "/tmp"), "CCACHE_DIR": shared_ccache()}
    (tmp_path / "home").mkdir()
    proc = subprocess.run([str(venv / "bin" / "tritonbuild"), "selftest"], cwd=tmp_path, env=minimal,
                          capture_output=True, text=True, timeout=900)
    out = " ".join(proc.stdout.split())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "self-test passed" in out and "compile check" in out
    [built] = (tmp_path / "dist").glob("triton-*.whl")
    assert built.stat().st_size > 0
    # README's main job: a kernel lowered to SPIR-V that spirv-val accepts, the spirv backend's configure-time
    # download from the self-test's local checkout (--dep)
    assert "spirv: ttir,llir,spv:" in out and "bytes of SPIR-V, spirv-val: valid" in out, out[-2000:]
    assert "spirv-kernel-abi" in out and "(at the pin)" in out
