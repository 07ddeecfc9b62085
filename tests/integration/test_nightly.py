"""Issue 6 acceptance: recipes, versions, reproducible wheels, manifests, verify, and a shared ccache."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.helpers import NO_CANARY, one_of
from tests.integration.conftest import flat, git_commit, run_cli
from tritonbuild import example

DATE = "2026-01-29T21:43:54+00:00"


def git_tree(path: Path) -> Path:
    """The example tree as a git checkout with a fixed commit (same hash wherever it is made)."""
    root = example.write_tree(path)
    git_commit(root, env={"GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE})
    return root


# Two checkouts of one commit whose directory names and depths differ (CI runners check out anywhere): with
# ccache's base_dir the compiler sees paths relative to the build dir, which differ between them too.
SIDES = ("A", "second-checkout/work/B")


def build_twice(base: Path, *args: str, ccache: Path | None = None) -> list[dict]:
    """Each side with its own cold compiler cache (two CI runners), or both with ``ccache``; without the canary
    (its -fsyntax-only compiles put nothing in the wheel, and the build tests keep it)."""
    results = []
    for side in SIDES:
        root = base / side
        tree = git_tree(root / "triton")
        proc = run_cli("build", *args, "--source", str(tree), "--json", "--cache-dir", str(root / "cache"),
                       "--out", str(root / "dist"), cwd=root,
                       env={"CCACHE_DIR": str(ccache or root / "ccache"), **NO_CANARY})
        results.append(one_of(proc.stdout, "wheels"))
    return results


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("nightly")
    # Debian's LLVM is not the example's pin: the nightly recipe refuses that unless told it is accepted
    return {"base": base, "results": build_twice(base, "--recipe", "nightly", "--no-require-pinned-llvm")}


def test_reproducible_with_default_settings_from_two_directories(tmp_path: Path) -> None:
    """--reproducible alone: line-table debug info (-g1) stays in libtriton, so every path must be mapped. The two
    sides share one compiler cache (the nightly pair below compiles cold on both): the second side links the
    first side's objects, so a path of either checkout left in one would be in both wheels, and is looked for."""
    one, two = (Path(r["wheel"]) for r in build_twice(tmp_path, "--reproducible", "--backends", "nvidia",
                                                      ccache=tmp_path / "ccache"))
    assert one.read_bytes() == two.read_bytes()
    with zipfile.ZipFile(one) as zf:
        lib = next(n for n in zf.namelist() if n.startswith("triton/_C/libtriton"))
        data = zf.read(lib)
    assert b".debug_line" in data  # the debug info that held the paths is there, and identical
    assert str(tmp_path).encode() not in data and b"second-checkout" not in data


def test_nightly_refuses_an_llvm_that_is_not_the_pin(tmp_path: Path) -> None:
    tree = git_tree(tmp_path / "src" / "triton")
    proc = run_cli("plan", "--recipe", "nightly", "--source", str(tree), "--cache-dir", str(tmp_path / "cache"),
                   cwd=tmp_path, check=False)
    err = flat(proc.stderr)
    assert proc.returncode == 2
    assert "is not the source's pinned commit 2eb709b95d8f" in err and "(recipe nightly)" in err
    assert "--no-require-pinned-llvm" in err


def test_nightly_wheel_is_versioned(nightly: dict) -> None:
    wheel = Path(nightly["results"][0]["wheel"])
    assert wheel.name.startswith("triton-3.6.0.dev20260129+git")
    assert nightly["results"][0]["backends"] == ["nvidia", "amd"]


def test_two_directories_give_byte_identical_wheels(nightly: dict) -> None:
    one, two = (Path(r["wheel"]) for r in nightly["results"])
    assert one.parent != two.parent and one.name == two.name
    assert nightly["results"][0]["build_dir"] != nightly["results"][1]["build_dir"]
    assert one.read_bytes() == two.read_bytes()
    # the nightly recipe builds with clang + lld when installed (CI installs clang-22), as upstream's wheels do
    plan = json.loads((Path(nightly["results"][0]["build_dir"]) / "plan.json").read_text())
    assert plan["toolchain"]["cxx_compiler"].endswith("clang++-22") and plan["toolchain"]["linker"] == "lld"
    assert plan["toolchain"]["unity_batch"] == 8  # and the clean build is joined: the identical bytes above say
    # the unity files (which name the build dir) leave no path in the wheel
    assert list((Path(nightly["results"][0]["build_dir"]) / "cmake").rglob("unity_*_cxx.cxx"))
    with zipfile.ZipFile(one) as zf:
        info = json.loads(zf.read("triton/_build_info.json"))
        stamps = {i.date_time for i in zf.infolist()}
    assert info["source"]["root"] == "<source>" and info["plan_key"] is None
    assert stamps == {(2026, 1, 29, 21, 43, 54)}


def test_sha256sums_and_manifest(nightly: dict) -> None:
    result = nightly["results"][0]
    wheel = Path(result["wheel"])
    sums = (wheel.parent / "SHA256SUMS").read_text().splitlines()
    assert sums[0] == f"{result['sha256']}  {wheel.name}" and sums[1].endswith(f"  {wheel.name}.provenance.json")
    manifest = json.loads((wheel.parent / (wheel.name[:-4] + ".manifest.json")).read_text())
    assert manifest["sha256"] == result["sha256"] and manifest["size"] == wheel.stat().st_size
    assert manifest["plan"]["settings"]["version_scheme"] == {"value": "date+git", "origin": "recipe nightly"}
    assert set(manifest["timings"]) >= {"configure", "compile"} and "hits" in manifest["ccache"]
    assert manifest["provenance"]["backends_tuple"] == ["nvidia", "amd", "proton"]
    # what the official nightly ships: the profiler package and proton's library (the recipe builds proton)
    assert manifest["plan"]["toolchain"]["proton"] is True
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert "triton/profiler/__init__.py" in names and any(n.startswith("triton/_C/libproton") for n in names), names


def test_verify_passes_on_the_wheel_and_fails_when_tampered(nightly: dict, tmp_path: Path) -> None:
    wheel = Path(nightly["results"][0]["wheel"])
    ok = run_cli("verify", str(wheel), cwd=tmp_path)
    assert "ok   import: fresh venv" in ok.stdout and "discovers amd, nvidia" in ok.stdout
    assert "ok   reproducible: yes" in ok.stdout
    tampered = tmp_path / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tampered, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "triton/backends/nvidia/driver.py":
                data += b"\nprint('tampered')\n"
            dst.writestr(item, data)
    bad = run_cli("verify", str(tampered), "--no-import", cwd=tmp_path, check=False)
    assert bad.returncode == 1
    assert "triton/backends/nvidia/driver.py does not match its RECORD hash" in flat(bad.stdout)
    missing = tmp_path / "missing" / wheel.name
    missing.parent.mkdir()
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(missing, "w") as dst:
        for item in src.infolist():
            if not item.filename.startswith("triton/backends/amd/"):
                dst.writestr(item, src.read(item))
    bad = run_cli("verify", str(missing), "--no-import", cwd=tmp_path, check=False)
    assert bad.returncode == 1 and "backend dirs ['nvidia'] differ" in flat(bad.stdout)


def test_recipe_errors_exit_2(tmp_path: Path) -> None:
    recipe = tmp_path / "r.toml"
    recipe.write_text('backend = "nvidia"\n')
    proc = run_cli("plan", "--recipe", str(recipe), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Did you mean 'backends'" in flat(proc.stderr)
    listing = run_cli("recipes", "list", cwd=tmp_path).stdout
    assert all(name in listing for name in ("default", "dev", "nightly", "cpu", "spirv"))
    assert "version_scheme" in run_cli("recipes", "show", "nightly", cwd=tmp_path).stdout
