"""#37: the ptxas_blackwell setting is the value the plan bundles (nvidia.discover no longer reads its variable)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import one_of
from tests.integration.conftest import LLVM, run_cli
from tritonbuild import example


def _tree_that_wants_ptxas_blackwell(base: Path) -> Path:
    root = example.write_tree(base / "triton")
    compiler = root / "third_party" / "nvidia" / "backend" / "compiler.py"
    compiler.write_text(compiler.read_text() + "\n# knobs: ptxas-blackwell\n")
    return root


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(shutil.which("true") or "/bin/true", path)  # a small real ELF executable stands in for ptxas
    return path


def test_ptxas_blackwell_from_the_environment_is_what_the_plan_bundles(tmp_path: Path) -> None:
    root = _tree_that_wants_ptxas_blackwell(tmp_path)
    ptxas, bw = _executable(tmp_path / "cuda-12" / "ptxas"), _executable(tmp_path / "cuda-13" / "ptxas")
    env = {"TRITON_PTXAS_PATH": str(ptxas), "TRITON_PTXAS_BLACKWELL_PATH": str(bw)}
    proc = run_cli("plan", "--json", "--source", str(root), "--llvm", str(LLVM), "--offline", "--cache-dir",
                   str(tmp_path / "cache"), cwd=tmp_path, env=env)
    data = one_of(proc.stdout, "plans")
    assert data["settings"]["ptxas_blackwell"] == {"value": str(bw), "origin": "env TRITON_PTXAS_BLACKWELL_PATH"}
    tools = dict(map(tuple, data["cmake"]["defines"]))["TRITONBUILD_NVIDIA_TOOLS"]
    assert tools == f"ptxas={ptxas};ptxas-blackwell={bw}"


def test_ptxas_blackwell_given_where_it_may_not_be_is_refused(tmp_path: Path) -> None:
    """It is a machine path: no flag and no recipe key sets it (a recipe travels between machines)."""
    root = _tree_that_wants_ptxas_blackwell(tmp_path)
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'ptxas_blackwell = "{tmp_path}/bw"\n')
    proc = run_cli("plan", "--recipe", str(recipe), "--source", str(root), "--llvm", str(LLVM), "--offline",
                   cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "ptxas_blackwell" in proc.stderr
    flag = run_cli("plan", "--ptxas-blackwell", str(tmp_path), "--source", str(root), cwd=tmp_path, check=False)
    assert flag.returncode == 2 and "No such option" in flag.stderr
