from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import cuda_stub, flat, git_commit, plan_json, run_cli
from tritonbuild import example


def snapshot(root: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in root.rglob("*")}


@pytest.mark.parametrize("gen", ["G1", "G2", "G3", "G4"])
def test_plan_json_on_each_generation(tree, plugin, tmp_path: Path, gen: str) -> None:
    root = tree(generation=gen)
    plug = plugin("triton-shared", "triton_shared")
    before = snapshot(tmp_path)
    data = plan_json("--source", str(root), "--backends", "nvidia;amd", "--plugin-dir", "triton-shared",
                     "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path,
                     env={"TRITON_LLVM_SYSTEM_SUFFIX": "ubuntu-x64"})
    assert snapshot(tmp_path) == before, "plan must not change anything on disk"
    assert data["schema"] == 2 and data["tritonbuild_version"]
    assert data["source"]["generation"] == {"G4": "G3"}.get(gen, gen)  # the layout is G3's; nanobind etc. on top
    assert data["source"]["tuple_limit"] == (4 if gen == "G1" else 5)
    names = [b["name"] for b in data["backends"]]
    assert names == ["nvidia", "amd", "triton_shared"]
    assert data["backends"][2] | {"path": str(plug)} == data["backends"][2]
    assert data["backends"][2]["origin"] == "plugin"
    expected_tuple = ["nvidia", "amd", "triton_shared"] if gen == "G1" else ["nvidia", "amd", "proton",
                                                                            "triton_shared"]
    assert data["backends_tuple"] == expected_tuple
    if gen in ("G3", "G4"):  # llvm-info.json pins a sha256: auto prefers the verified prebuilt download
        assert data["llvm"]["strategy"] == "download"
        assert data["llvm"]["prefix"] == str(tmp_path / "cache" / "llvm" / "llvm-2eb709b9-ubuntu-x64-1")
    else:  # llvm-hash.txt pins no checksum: the system LLVM, with a warning
        assert data["llvm"]["strategy"] == "system" and data["llvm"]["prefix"] == "/usr/lib/llvm-22"
        assert any("not the pinned commit" in w for w in data["warnings"])
    assert data["llvm"]["pin_file"].endswith("llvm-hash.txt" if gen in ("G1", "G2") else "llvm-info.json")
    defines = dict(data["cmake"]["defines"])
    # setup.py's in-tree defaults, read from its get_proton_cmake_args, as CMake sees the checkout (stable paths)
    seen = Path(data["cmake"]["build_dir"]) / "src" / "third_party"
    assert data["cmake"]["views"][0] == [str(seen.parent), str(root)]
    assert defines["ROCTRACER_INCLUDE_DIR"] == str(seen / "amd" / "backend" / "include")
    # mid-2026 proton also requires ROCM_INCLUDE_DIR, with the same in-tree default, and Intel's XPUPTI's
    assert defines.get("ROCM_INCLUDE_DIR") == (None if gen in ("G1", "G2") else defines["ROCTRACER_INCLUDE_DIR"])
    xpupti = str(seen / "intel" / "backend" / "proton" / "include")
    assert defines.get("XPUPTI_INCLUDE_DIR") == (xpupti if gen == "G4" else None)
    # mid-2026 configure downloads NVIDIA's parts into the source tree for each TRITON_*_PATH left empty: the plan
    # gives what it provides and makes that step offline (nlohmann/json and LLVM are given: it needs nothing else)
    assert defines.get("TRITON_OFFLINE_BUILD") == ("ON" if gen == "G4" else None)
    assert ("download_and_copy_dependencies" in " ".join(data["notes"])) == (gen == "G4")
    assert data["cmake"]["build_dir"].startswith(str(tmp_path / "cache" / "build"))
    assert data["key"] == Path(data["cmake"]["build_dir"]).name
    assert data["settings"]["plugin_dirs"]["origin"] == "cli --plugin-dir"


def test_plan_env_variables_and_settings_origins(tree, tmp_path: Path) -> None:
    root = tree()
    env = {"TRITON_CODEGEN_BACKENDS": "cpu", "MAX_JOBS": "1", "TRITON_BUILD_WITH_CCACHE": "0",
           "LLVM_SYSPATH": "/usr/lib/llvm-22", "TRITON_APPEND_CMAKE_ARGS": "-DFOO=1"}
    data = plan_json("--source", str(root), "--cache-dir", str(tmp_path / "c"), cwd=tmp_path, env=env)
    assert [b["name"] for b in data["backends"]] == ["cpu", "nvidia", "amd"]
    assert any("added back nvidia, amd" in n for n in data["notes"])
    assert data["toolchain"]["jobs"] == 1 and data["toolchain"]["ccache"] is None
    assert data["llvm"]["strategy"] == "prefix" and data["llvm"]["found_by"] == "env LLVM_SYSPATH"
    assert data["cmake"]["extra_args"] == ["-DFOO=1"]
    assert data["settings"]["jobs"]["origin"] == "env MAX_JOBS"


def test_plan_text_output(tree, tmp_path: Path) -> None:
    out = run_cli("plan", "--source", str(tree()), "--settings", "--cache-dir", str(tmp_path / "c"),
                  cwd=tmp_path).stdout
    assert "nvidia, amd, proton" in out and "settings" in out and "not the pinned commit" in out


@pytest.mark.parametrize(
    ("args", "env", "fragment"),
    [
        (["--backends", "nvidai"], {}, "Did you mean 'nvidia'?"),
        (["--backends", "cpu", "--strict"], {}, "--strict is set"),
        (["--plugin-dir", "nope"], {}, "does not exist"),
        ([], {"MAX_JOBS": "lots"}, "MAX_JOBS='lots'"),
        (["--llvm", "/nonexistent/llvm"], {}, "cannot build this plan"),
        (["--recipe", "nightlyy"], {}, "no recipe named 'nightlyy'"),
    ],
)
def test_bad_input_exits_2_with_one_paragraph(tree, tmp_path: Path, args: list[str], env: dict[str, str],
                                               fragment: str) -> None:
    root = tree()
    proc = run_cli("plan", "--source", str(root), *args, cwd=tmp_path, env=env, check=False)
    assert proc.returncode == 2, proc.stderr
    assert fragment in flat(proc.stderr)
    assert "Traceback" not in proc.stderr


def test_no_source_outside_a_tree(tmp_path: Path) -> None:
    proc = run_cli("plan", cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert "is not a Triton source tree" in flat(proc.stderr)


def test_current_directory_is_used_when_it_is_a_tree(tree) -> None:
    root = tree()
    data = plan_json("--cache-dir", str(root.parent / "c"), cwd=root)
    assert data["source"]["root"] == str(root)


def test_source_from_git_url_is_cloned_once_and_reused(tree, tmp_path: Path) -> None:
    import subprocess

    root = tree("upstream")
    git_commit(root)
    subprocess.run(["git", "tag", "v1"], cwd=root, check=True)
    url = f"file://{root}"
    cache = tmp_path / "cache"
    data = plan_json("--source", url, "--ref", "v1", "--cache-dir", str(cache), cwd=tmp_path)
    clone = Path(data["source"]["root"])
    assert clone.parent == cache / "sources" and data["source"]["commit"] is not None
    marker = clone / ".git" / "tritonbuild-marker"
    marker.write_text("same clone")
    again = plan_json("--source", url, "--ref", "v1", "--cache-dir", str(cache), cwd=tmp_path)
    assert again["source"]["root"] == str(clone) and marker.exists()


def test_plugin_pinned_by_its_triton_submodule(tree, plugin, tmp_path: Path) -> None:
    """triton-shared before 2025 had no triton-hash.txt: its git submodule ``triton`` is the pin."""
    import subprocess

    source_commit = git_commit(tree())
    plug = plugin("triton-shared", "triton_shared")
    (plug / "CMakeLists.txt").write_text("# plugin\n")
    (plug / "triton").mkdir()  # an uninitialised submodule is an empty directory

    def pin_to(commit: str) -> dict:
        subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"160000,{commit},triton"], cwd=plug,
                       check=True)
        git_commit(plug, f"pin {commit[:8]}", init=False)
        return plan_json("--source", str(tmp_path / "triton"), "--backends", "nvidia;amd", "--plugin-dir",
                         str(plug), "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path)

    git_commit(plug)
    data = pin_to(source_commit)
    entry = data["backends"][2]
    assert (entry["triton_pin"], entry["triton_pin_from"], entry["pin_matches_source"]) == \
        (source_commit, "its triton submodule", True)
    assert not any("pins Triton" in w for w in data["warnings"])
    other = "0123456789abcdef0123456789abcdef01234567"
    data = pin_to(other)
    assert data["backends"][2]["pin_matches_source"] is False
    assert any(f"pins Triton {other[:12]} (its triton submodule) but the source is at {source_commit[:12]}" in w
               for w in data["warnings"])
    (plug / "triton-hash.txt").write_text(source_commit + "\n")  # the newer file wins over the submodule
    git_commit(plug, "add triton-hash.txt", init=False)
    entry = plan_json("--source", str(tmp_path / "triton"), "--plugin-dir", str(plug), "--cache-dir",
                      str(tmp_path / "cache"), cwd=tmp_path)["backends"][-1]
    assert (entry["triton_pin_from"], entry["pin_matches_source"]) == ("triton-hash.txt", True)


def test_backends_command(tree, plugin, tmp_path: Path) -> None:
    root = tree()
    plugin("x")
    data = json.loads(run_cli("backends", "--source", str(root), "--plugin-dir", "x", "--json",
                              cwd=tmp_path).stdout)
    rows = {b["name"]: b for b in data["backends"]}
    assert set(rows) == {"amd", "cpu", "nvidia", "spirv", "x"}
    assert "required" in rows["nvidia"]["flags"] and "default" in rows["amd"]["flags"]
    assert rows["x"]["origin"] == "plugin"
    assert data["proton_in_tuple"] == "always"


def test_doctor(tmp_path: Path) -> None:
    out = run_cli("doctor", cwd=tmp_path).stdout
    assert "/usr/lib/llvm-22" in out and "cmake" in out and "cores" in out


def test_help_is_fast_to_import() -> None:
    import subprocess
    import sys

    code = "import sys, tritonbuild.cli.main; print(sorted(m for m in ('rich', 'git') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ})
    assert out.stdout.strip() == "[]", "rich and gitpython must be imported lazily"


def test_clean_finds_the_build_dir_from_the_options_build_takes(tree, tmp_path: Path) -> None:
    args = ["--source", str(tree()), "--llvm", "/usr/lib/llvm-22", "-j", "1", "--zip-level", "0", "--no-proton",
            "--cache-dir", str(tmp_path / "cache")]
    build_dir = Path(plan_json(*args, cwd=tmp_path)["cmake"]["build_dir"])
    build_dir.mkdir(parents=True)
    (build_dir / "plan.json").write_text(json.dumps({"key": build_dir.name}))  # a build dir clean may remove
    found = run_cli("clean", "--dry-run", *args, cwd=tmp_path)
    assert "1 build dir(s), would free" in flat(found.stdout)
    assert build_dir.exists()
    other = run_cli("clean", "--dry-run", *args, "--proton", cwd=tmp_path, check=False)
    assert "0 build dir(s)" in flat(other.stdout)  # another plan, another dir: not this one


def test_test_refuses_an_unknown_option_before_the_separator(tree, tmp_path: Path) -> None:
    proc = run_cli("test", "lit", "--source", str(tree()), "--bakends", "nvidia", cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert "No such option '--bakends'. Did you mean '--backends'?" in proc.stderr


def test_zero_is_a_zip_level_from_flag_env_and_recipe(tree, tmp_path: Path) -> None:
    args = ["--source", str(tree()), "--cache-dir", str(tmp_path / "cache")]
    assert plan_json(*args, "--zip-level", "0", cwd=tmp_path)["wheel"]["zip_level"] == 0
    assert plan_json(*args, cwd=tmp_path, env={"TRITONBUILD_ZIP_LEVEL": "0"})["wheel"]["zip_level"] == 0
    recipe = tmp_path / "r.toml"
    recipe.write_text("zip_level = 0\n")
    assert plan_json(*args, "--recipe", str(recipe), cwd=tmp_path)["wheel"]["zip_level"] == 0
    proc = run_cli("plan", *args, cwd=tmp_path, env={"TRITONBUILD_ZIP_LEVEL": "10"}, check=False)
    assert proc.returncode == 2 and "zip_level = 10 (env TRITONBUILD_ZIP_LEVEL) must be a whole number 0-9" in \
        flat(proc.stderr)


def test_proton_header_dirs_from_env_or_cmake_arg_when_the_tree_has_no_default(tree, tmp_path: Path) -> None:
    """A mid-2026 tree without the amd backend's headers: the plan names TRITON_ROCM_INCLUDE_PATH and
    --cmake-arg -DROCM_INCLUDE_DIR=..., and each of them works (issue: the old advice did not)."""
    root = tree(generation="G3", backends=("nvidia",), required=False)
    args = ["--source", str(root), "--backends", "nvidia", "--llvm", "/usr/lib/llvm-22", "--proton",
            "--cache-dir", str(tmp_path / "cache")]
    refused = run_cli("plan", *args, cwd=tmp_path, check=False)
    err = flat(refused.stderr)
    assert refused.returncode == 2, refused.stdout
    assert "ROCM_INCLUDE_DIR: set TRITON_ROCM_INCLUDE_PATH or --cmake-arg -DROCM_INCLUDE_DIR=DIR" in err
    by_env = plan_json(*args, cwd=tmp_path, env={"TRITON_ROCM_INCLUDE_PATH": "/opt/rocm/include",
                                                 "TRITON_ROCTRACER_INCLUDE_PATH": "/opt/rocm/include"})
    assert dict(by_env["cmake"]["defines"])["ROCM_INCLUDE_DIR"] == "/opt/rocm/include"
    by_arg = plan_json(*args, "--cmake-arg", "-DROCM_INCLUDE_DIR=/r", "--cmake-arg", "-DROCTRACER_INCLUDE_DIR=/r",
                       cwd=tmp_path)
    assert by_arg["cmake"]["extra_args"] == ["-DROCM_INCLUDE_DIR=/r", "-DROCTRACER_INCLUDE_DIR=/r"]


def test_an_interpreter_without_build_packages_is_refused_only_offline_without_a_wheelhouse(tree,
                                                                                       tmp_path: Path) -> None:
    import subprocess

    bare = tmp_path / "bare"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(bare)], check=True)
    args = ["plan", "--source", str(tree()), "--python", str(bare / "bin" / "python"), "--cache-dir",
            str(tmp_path / "cache")]
    planned = run_cli(*args, cwd=tmp_path)
    assert "lacks scikit-build-core>=0.10, pybind11>=2.13.1: the build runs scikit-build-core in an isolated" in \
        flat(planned.stdout)  # the pybind11 pin is the example tree's pyproject.toml's
    proc = run_cli(*args, "--offline", cwd=tmp_path, check=False)
    err = flat(proc.stderr)
    assert proc.returncode == 2
    assert "lacks the build requirements" in err and "--wheelhouse DIR" in err


def test_test_python_without_pytest_says_what_the_host_lacks_before_running(tree, tmp_path: Path) -> None:
    # the review of issue 45: in a venv without pytest, `test python` printed the runner's bare "No module named
    # pytest" and exited 1, which reads as failed tests; the host lacks a tool: exit 3, one paragraph, nothing run
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    args = ["--source", str(tree()), "--python", str(bare / "bin" / "python"), "--cache-dir", str(tmp_path / "c")]
    dev = Path(plan_json(*args, cwd=tmp_path)["cmake"]["build_dir"]) / "dev"
    dev.mkdir(parents=True)
    (dev / "build.ninja").write_text("")  # what develop leaves: `test` runs against it
    proc = run_cli("test", "python", *args, "--", "-q", cwd=tmp_path, check=False)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    said = flat(proc.stderr)
    assert f"pytest is not installed in {bare}, the environment of {bare / 'bin' / 'python'}" in said, said
    assert f"{bare / 'bin' / 'python'} -m pip install pytest" in said and "Traceback" not in said
    assert "-m pytest" not in proc.stdout + proc.stderr  # checked before the runner starts


def test_plan_imports_only_what_it_uses(tmp_path: Path) -> None:
    # issue 45: a warm plan took 0.53 s, 0.9 s more with the SBOM check's jsonschema (its format checkers build
    # ~40 grammars at import) and the index reader's urllib/http.client/email; a plan that reads no page and
    # validates no SBOM imports neither (`python -X importtime`, not a timing)
    tree = example.write_tree(tmp_path / "triton")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "tritonbuild", "plan", "--offline", "--source",
                           str(tree), "--cache-dir", str(tmp_path / "cache")], cwd=tmp_path, capture_output=True,
                          text=True, env={**os.environ, "CUDA_HOME": cuda_stub()})
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "tritonbuild.gather.request" in imported  # the listing is what it seems
    for heavy in ("jsonschema", "rfc3987_syntax", "lark", "cyclonedx.validation.json", "http.client", "urllib.request",
                  "tritonbuild.system.http"):
        assert heavy not in imported, heavy
