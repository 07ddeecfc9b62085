"""Issue 3 acceptance: real wheels from the example tree with real cmake, ninja, gcc, ccache and LLVM 22."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import one_of
from tests.integration.conftest import flat, git_commit, plan_json, run_cli
from tritonbuild import example
from tritonbuild.system import elf

BACKENDS = "nvidia;amd;spirv"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("build")
    tree = example.write_tree(base / "src" / "triton")
    plug = example.write_plugin(base / "src" / "triton-dash-plugin", "triton_dash_plugin", name_conf=False)
    ptxas = base / "cuda" / "bin" / "ptxas"  # a small real binary stands in for CUDA's 38 MB ptxas
    ptxas.parent.mkdir(parents=True)
    shutil.copy(shutil.which("true") or "/bin/true", ptxas)
    cuda = example.write_cuda_stub(base / "cuda-toolkit")  # a toolkit's shape: the wheel takes what it needs
    abi = example.write_spirv_abi(base / "src" / "spirv-kernel-abi")  # spirv's configure-time download
    env = {"CCACHE_DIR": str(base / "ccache"), "TRITON_BUILD_WITH_CCACHE": "1", "TRITON_PTXAS_PATH": str(ptxas),
           "CUDA_HOME": str(cuda)}
    args = ["--source", str(tree), "--backends", BACKENDS, "--plugin-dir", str(plug),
            "--dep", f"spirv-kernel-abi={abi}"]
    return {"base": base, "tree": tree, "plugin": plug, "env": env, "args": args, "abi": abi}


def build(work: dict, *extra: str, out: str = "dist", check: bool = True):
    proc = run_cli("build", "--json", *work["args"], "--cache-dir", str(work["base"] / "cacheA"),
                   "--out", str(work["base"] / out), *extra, cwd=work["base"], env=work["env"], check=check)
    return proc, (one_of(proc.stdout, "wheels") if proc.returncode == 0 else None)


@pytest.fixture(scope="module")
def first(work: dict) -> dict:
    """The module's one shared build (cacheA, dist): tests read it and never build into its cache or output dir,
    nor edit its sources, so no test's result depends on which tests ran before it. It links compile_commands.json
    into the checkout and the plugin (``--compile-commands``); no other build here does (#45)."""
    return build(work, "--compile-commands")[1]


@pytest.fixture
def own(work: dict, first: dict, tmp_path: Path) -> dict:
    """This test's own checkout and plugin (copies: a build links compile_commands.json into both, and a test may
    edit them), cache dir and output dir, so that what it builds, edits or deletes is no other test's. It asks for
    ``first`` only so that the compiler cache is warm: its builds hit it instead of compiling."""
    assert first["wheel"]
    tree, plug = tmp_path / "src" / "triton", tmp_path / "src" / work["plugin"].name
    skip = shutil.ignore_patterns("compile_commands.json")
    shutil.copytree(work["tree"], tree, symlinks=True, ignore=skip)
    shutil.copytree(work["plugin"], plug, symlinks=True, ignore=skip)
    mine = {str(work["tree"]): str(tree), str(work["plugin"]): str(plug)}
    return {**work, "base": tmp_path, "tree": tree, "plugin": plug, "args": [mine.get(a, a) for a in work["args"]]}


def sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def record(wheel: str) -> dict[str, str]:
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        rows = csv.reader(io.StringIO(zf.read(name).decode()))
        return {r[0]: r[1] for r in rows if r and not r[0].endswith("RECORD")}


def test_wheel_layout(first: dict) -> None:
    files = set(record(first["wheel"]))
    for name in ("nvidia", "amd", "spirv", "triton_dash_plugin"):
        assert f"triton/backends/{name}/compiler.py" in files
        assert f"triton/backends/{name}/driver.py" in files
    assert "triton/backends/cpu/compiler.py" not in files
    assert {"triton/_C/libtriton.so", "triton/FileCheck", "triton/_build_info.json",
            "triton/language/extra/cuda/__init__.py", "triton/language/extra/hip/__init__.py",
            "triton/language/extra/triton_dash_plugin/__init__.py", "triton/tools/extra/spirvdis/__init__.py",
            "triton/profiler/__init__.py", "triton/profiler/hooks/__init__.py", "triton/_C/libproton.so"} <= files
    assert not any("TritonCPURuntime" in f or "tbmath" in f for f in files)  # cpu not selected
    assert not any("-opt" in f for f in files)  # the plugin's C++ tool (its sources, its binary) stays out
    with zipfile.ZipFile(first["wheel"]) as zf:  # ptxas where the nvidia backend looks, executable, as setup.py
        assert zf.getinfo("triton/backends/nvidia/bin/ptxas").external_attr >> 16 & 0o111 == 0o111
    # what setup.py downloads into backends/nvidia, taken from the toolkit: the headers the driver compiles
    # against (and what they include), CUPTI's headers and libraries, nothing else of the toolkit
    nv = "triton/backends/nvidia/"
    assert {f"{nv}include/cuda.h", f"{nv}include/crt/host_defines.h", f"{nv}include/cupti.h",
            f"{nv}include/cupti_version.h", f"{nv}lib/cupti/libcupti.so", f"{nv}lib/cupti/libcupti.so.12",
            f"{nv}lib/cupti/libnvperf_host.so"} <= files
    assert not any("cublas" in f for f in files)
    assert "triton/instrumentation/libTBInstrumentation.so" in files  # the tree puts it into the package
    assert first["backends_tuple"] == ["nvidia", "amd", "spirv", "proton", "triton_dash_plugin"]
    with zipfile.ZipFile(first["wheel"]) as zf:  # setup.py's install_requires become Requires-Dist
        meta = next(zf.read(n).decode() for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    assert "Requires-Dist: importlib-metadata; python_version < \"3.10\"" in meta.splitlines(), meta
    # extension headers (on by default): Triton's headers and .td files, and what the build generated
    assert {"triton/include/triton/Core.h", "triton/include/triton/CoreOps.td",
            "triton/include/triton/CoreOps.h.inc"} <= files


def test_the_manifest_says_where_the_time_went(first: dict) -> None:
    went = first["where_time_went"]
    path = [e["output"] for e in went["critical_path"]]
    assert path[-1].endswith(".so") or "install" in path[-1] or path[-1].endswith("triton")  # a link, at the end
    assert 0 < went["critical_path_seconds"] <= went["wall_seconds"] + 0.01
    assert went["edges"] >= len(path) and len(went["slowest"]) == min(5, went["edges"])
    assert any(e["output"].endswith(".o") for e in went["slowest"])


def test_libraries_keep_their_symbols_without_strip(first: dict, tmp_path: Path) -> None:
    with zipfile.ZipFile(first["wheel"]) as zf:
        zf.extractall(tmp_path, ["triton/_C/libtriton.so", "triton/_C/libproton.so"])
    for lib in ("libtriton.so", "libproton.so"):
        sections = subprocess.run(["readelf", "-S", str(tmp_path / "triton" / "_C" / lib)], capture_output=True,
                                  text=True, check=True).stdout
        assert ".symtab" in sections, lib  # --strip is off by default (scikit-build-core strips unless told)


def installed(wheel: str, tmp_path: Path) -> tuple[Path, str]:
    """A fresh venv with the wheel installed (no index, no dependencies): the venv and its python."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", wheel], check=True)
    return venv, py


def test_wheel_installs_and_imports_in_a_fresh_venv(work: dict, first: dict, tmp_path: Path) -> None:
    venv, py = installed(first["wheel"], tmp_path)
    code = """
import json, importlib.metadata as md, triton
from triton.backends import backends
from triton._C import libtriton
eps = sorted(ep.name for ep in md.entry_points(group="triton.backends"))
subs = sorted(n for n in dir(libtriton) if not n.startswith("_"))
info = {n: b.compiler(None).native_info() for n, b in backends.items()}
import triton.profiler
print(json.dumps({"file": triton.__file__, "eps": eps, "subs": subs, "info": info,
                  "core": libtriton.ir.core_value(), "dialects": libtriton.ir.available_dialects(),
                  "proton": json.loads(triton.profiler.runtime_info())}))
"""
    out = subprocess.run([py, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["file"].startswith(str(venv))
    assert data["eps"] == ["amd", "nvidia", "spirv", "triton_dash_plugin"]
    assert data["subs"] == ["amd", "ir", "nvidia", "proton", "spirv", "triton_dash_plugin"]
    assert data["info"]["nvidia"] == "NVIDIA PTX 64-bit"
    assert data["info"]["amd"] == "AMD GCN GPUs"
    assert "SPIR-V" in data["info"]["spirv"]
    assert data["info"]["triton_dash_plugin"] == "triton_dash_plugin:1"
    assert data["core"] == 42 and data["dialects"] >= 1
    assert data["proton"] == {"cupti": 4242, "roctracer": 4}  # libproton.so, built against the toolkit's CUPTI
    # the nvidia driver compiles its launcher against backends/nvidia/include when a kernel first runs
    nvidia = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / \
        "triton" / "backends" / "nvidia"
    obj = tmp_path / "driver.o"
    subprocess.run(["gcc", "-c", str(nvidia / "driver.c"), "-I", str(nvidia / "include"), "-o", str(obj)],
                   check=True)
    assert obj.is_file()


def test_spirv_backend_emits_spirv_that_spirv_val_accepts(work: dict, first: dict, tmp_path: Path) -> None:
    _, py = installed(first["wheel"], tmp_path)
    code = """
import sys
from triton.backends import backends
compiler = backends["spirv"].compiler(None)
stages, metadata, src = {}, {}, "vector_add:fp32"
compiler.add_stages(stages, {}, "ttir")
print(",".join(stages))
for stage in stages.values():
    src = stage(src, metadata)
open(sys.argv[1], "wb").write(src)
"""
    spv = tmp_path / "add_kernel.spv"
    out = subprocess.run([py, "-c", code, str(spv)], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ttir,llir,spv"
    assert spv.read_bytes()[:4] == b"\x03\x02\x23\x07"  # the SPIR-V magic number, little-endian
    subprocess.run(["spirv-val", str(spv)], check=True)
    dis = subprocess.run(["spirv-dis", str(spv)], capture_output=True, text=True, check=True).stdout
    assert 'OpEntryPoint Kernel %add_kernel "add_kernel"' in dis and "OpFAdd %float" in dis


def test_supplied_dependency_is_patched_in_the_build_dir_not_in_the_checkout(work: dict, first: dict) -> None:
    # the tree fetches spirv-kernel-abi into a SOURCE_DIR of its own and `git apply`s a patch there
    status = subprocess.run(["git", "-C", str(work["abi"]), "status", "--porcelain"], capture_output=True,
                            text=True, check=True).stdout
    assert status == ""
    [copy] = Path(first["build_dir"]).glob("cmake/third_party/spirv/lib/SPIRVKernelABI/include/spirv_kernel_abi.h")
    assert "#define TB_SPIRV_ABI_PATCHED 1" in copy.read_text()
    plan = plan_json(*work["args"], "--offline", cwd=work["base"], env=work["env"])
    [dep] = [d for d in plan["deps"] if d["name"] == "spirv-kernel-abi"]
    assert dep["needed"] and dep["supplied"] == str(work["abi"]) and dep["tag_matches"] is True
    assert dep["tag"] == example.SPIRV_ABI_TAG


def test_provenance_matches_the_plan(work: dict, first: dict) -> None:
    plan = plan_json(*work["args"], "--cache-dir", str(work["base"] / "cacheA"), cwd=work["base"],
                     env=work["env"])
    with zipfile.ZipFile(first["wheel"]) as zf:
        info = json.loads(zf.read("triton/_build_info.json"))
    assert info["plan_key"] == plan["key"] == first["plan_key"]
    assert [b["name"] for b in info["backends"]] == [b["name"] for b in plan["backends"]]
    assert [b["origin"] for b in info["backends"]] == ["in-tree", "in-tree", "in-tree", "plugin"]
    assert info["llvm"]["prefix"] == plan["llvm"]["prefix"] and info["llvm"]["shared_libllvm"] is True
    assert info["toolchain"]["compiler"].startswith("g++")


def test_compile_commands_are_linked_into_source_and_plugin_when_asked(work: dict, first: dict) -> None:
    for root in (work["tree"], work["plugin"]):
        link = root / "compile_commands.json"
        assert link.is_symlink()
        entries = json.loads(link.read_text())
    files = {e["file"] for e in entries}
    assert any("triton-dash-plugin/lib/Plugin.cpp" in f for f in files)
    # the debug-info lever: line tables after the build type's -O2 -g (the last -g level wins)
    core = next(e["command"].split() for e in entries if e["file"].endswith("lib/Core.cpp"))
    assert "-g" in core and "-g1" in core and core.index("-g1") > core.index("-g"), core


def test_extra_targets_are_built_in_the_build_dir_not_the_wheel(own: dict) -> None:
    # like `--target triton-shared-opt`: a plugin's tool that its CPU backend runs, outside the wheel
    _, first = build(own)
    tool = "triton_dash_plugin-opt"
    proc = run_cli("build", "--json", *own["args"], "--cache-dir", str(own["base"] / "cacheA"), "--out",
                   str(own["base"] / "dist"), "--target", tool, "--target", "triton-opt", "--target", tool,
                   cwd=own["base"], env={**own["env"], "COLUMNS": "80"})
    result = one_of(proc.stdout, "wheels")
    assert result["build_dir"] == first["build_dir"], "extra targets reuse the configured build dir"
    assert sorted(result["targets"]) == ["triton-opt", tool]  # each once (the manifest sorts keys)
    cmake_dir = Path(first["build_dir"]) / "cmake"
    plugin_bin = cmake_dir / "third_party" / "triton_dash_plugin"  # the plugin's binary dir (here via its shim)
    assert result["targets"][tool].startswith(f"{plugin_bin}/") and result["targets"][tool].endswith(f"/{tool}/{tool}")
    assert result["targets"]["triton-opt"] == str(cmake_dir / "bin" / "triton-opt")
    summary = re.sub(r"[\s\u2502]", "", proc.stderr)  # an 80-column summary folds long paths, never cuts them
    assert result["targets"][tool] in summary and result["wheel"] in summary
    out = subprocess.run([result["targets"][tool]], capture_output=True, text=True, check=True).stdout
    assert out == f"{tool} 42\n"
    # the tool links the `MLIR` target (Debian's libMLIR.so) beside TritonCore's MLIR archives, as triton-shared-opt
    # does: one copy of MLIR only, or every module it reads is rejected (#47)
    needed = elf.read(Path(result["targets"][tool]))
    assert needed is not None and not any(n.startswith(("libMLIR", "libLLVM")) for n in needed.needed), needed
    assert record(result["wheel"]) == record(first["wheel"])
    proc, _ = build(own, "--target", "no-such-tool", check=False)
    err = " ".join(proc.stderr.split())  # rich wraps the message
    assert proc.returncode == 1
    assert "'no-such-tool' (from --target or the recipe's targets) is not a target" in err


def test_same_plan_again_is_a_noop_with_an_equivalent_wheel(own: dict) -> None:
    _, first = build(own)
    _, again = build(own)
    assert again["ninja_no_work"] is True
    assert again["build_dir"] == first["build_dir"]
    assert record(again["wheel"]) == record(first["wheel"])


def git_status(root: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=root,
                          capture_output=True, text=True, check=True).stdout


def test_unchanged_inputs_republish_the_last_wheel_and_an_edit_does_not(own: dict) -> None:
    git_commit(own["tree"])  # a checkout without Triton's .gitignore: whatever a build wrote there would show
    git_commit(own["plugin"])
    checkout = (git_status(own["tree"]), git_status(own["plugin"]))
    _, first = build(own)
    provenance = Path(first["wheel"] + ".provenance.json")
    made = (provenance.read_bytes(), provenance.stat().st_mtime_ns)
    _, again = build(own)
    _, same = build(own)
    # a republished wheel keeps the provenance of the build that made it (a new startedOn would change its hash)
    assert (provenance.read_bytes(), provenance.stat().st_mtime_ns) == made
    edited = json.loads(provenance.read_text())
    edited["predicate"]["buildDefinition"]["buildType"] = "https://example.com/not-tritonbuild"
    provenance.write_text(json.dumps(edited))  # the right subject, but no statement tritonbuild reads back
    _, fixed = build(own)
    assert fixed["republished"] is True and "not-tritonbuild" not in provenance.read_text()
    # `build` writes nothing into the checkout or the plugin (no compile_commands.json: that is develop's, #45)
    assert (git_status(own["tree"]), git_status(own["plugin"])) == checkout
    assert same["republished"] is True and same["ninja_no_work"] is True, same["timings"]
    # the second build already republishes: nothing the first left anywhere changes the plan or its inputs
    assert (first["strategy"], again["strategy"], same["strategy"]) == ("full", "republish", "republish")
    assert same["sha256"] == again["sha256"] and Path(same["wheel"]).samefile(again["wheel"])
    assert same["timings"] == {"republish": same["seconds"]}  # no configure, install or packaging
    Path(same["wheel"]).unlink()  # a wheel deleted from the output dir comes back, whole
    _, back = build(own)
    assert back["republished"] is True and sha256(Path(back["wheel"])) == again["sha256"]
    # a Python file the install step copies: ninja does not track it, the digest of the inputs does
    init = own["tree"] / "python" / "triton" / "language" / "__init__.py"
    text = init.read_text()
    try:
        init.write_text(text + "\nEDITED = 1\n")
        _, edited = build(own)
        assert edited["republished"] is False
        with zipfile.ZipFile(edited["wheel"]) as zf:
            assert b"EDITED = 1" in zf.read("triton/language/__init__.py")
    finally:
        init.write_text(text)
    _, restored = build(own)
    assert restored["republished"] is False and record(restored["wheel"]) == record(first["wheel"])
    sums = (Path(restored["wheel"]).parent / "SHA256SUMS").read_text()
    assert f"{restored['sha256']}  {Path(restored['wheel']).name}" in sums


def test_a_python_file_saved_again_within_the_second_it_was_copied_is_not_left_stale(own: dict) -> None:
    """``cmake --install`` copies a file's time in whole seconds and takes a source within a second of its copy for
    up to date: a second save within that second left the first save in the prefix and the wheel (review 49). The
    quick rebuild copies such a file again, and says so in the log."""
    init = own["tree"] / "python" / "triton" / "language" / "__init__.py"
    text = init.read_text()
    try:
        build(own)  # the plan's last wheel
        init.write_text(text + "\nFIRST_SAVE = 1\n")
        saved = init.stat().st_mtime_ns
        _, one = build(own)
        assert one["strategy"] == "quick"
        init.write_text(text + "\nFIRST_SAVE = 2\n")  # the same size: only the bytes tell
        os.utime(init, ns=(saved, saved + 1))  # the same second as the first save, one nanosecond later
        _, two = build(own)
        assert two["strategy"] == "quick"
        with zipfile.ZipFile(two["wheel"]) as zf:
            assert b"FIRST_SAVE = 2" in zf.read("triton/language/__init__.py")
        assert "copied again" in Path(two["log"]).read_text()
    finally:
        init.write_text(text)


def test_an_edit_rebuilds_from_the_kept_prefix_and_reuses_unchanged_members(own: dict) -> None:
    core = own["tree"] / "lib" / "Core.cpp"
    text = core.read_text()
    marker = "tb-quick-edit-7f3a"
    try:
        _, last = build(own)  # the plan's last wheel exists
        before = record(last["wheel"])  # read now: the next build publishes under the same name
        core.write_text(text + f'\nextern "C" __attribute__((visibility("default"), used)) const char* '
                               f'tb_quick_marker() {{ return "{marker}"; }}\n')
        _, edited = build(own)
        log = Path(edited["log"]).read_text()
        assert "quick-prefix: " in log and "copied compressed from the last wheel" in log, log[-2000:]
        assert edited["republished"] is False and "package" in edited["timings"], edited["timings"]
        assert edited["strategy"] == "quick"
        with zipfile.ZipFile(edited["wheel"]) as zf:
            assert zf.testzip() is None
            assert marker.encode() in zf.read("triton/_C/libtriton.so")
            names = set(zf.namelist())
        after = record(edited["wheel"])
        assert names == {*before, next(n for n in names if n.endswith("RECORD"))}  # bundled libs, dist-info
        assert after["triton/_C/libtriton.so"] != before["triton/_C/libtriton.so"]
        sbom = next(n for n in after if n.endswith("/sboms/tritonbuild.cdx.json"))  # lists libtriton's sha256 (#38)
        assert {n for n in after if after[n] != before[n]} <= {"triton/_C/libtriton.so", "triton/_build_info.json",
                                                               sbom}
        verified = run_cli("verify", edited["wheel"], cwd=own["base"], env=own["env"])
        assert "RECORD: " in verified.stdout and "entries match" in verified.stdout, verified.stdout
    finally:
        core.write_text(text)
    _, restored = build(own)
    assert record(restored["wheel"]) == before  # the same bytes as the full path made


def test_fresh_build_dir_with_warm_ccache_hits(own: dict, first: dict) -> None:
    _, fresh = build(own)
    assert fresh["build_dir"] != first["build_dir"]
    hits, misses = fresh["ccache"]["hits"], fresh["ccache"]["misses"]
    assert hits + misses > 0 and hits / (hits + misses) >= 0.9, fresh["ccache"]


def test_another_checkout_at_another_path_compiles_nothing(own: dict, first: dict) -> None:
    """A CI runner's workspace, a worktree: the same files elsewhere, deeper, under another name, with another
    tritonbuild cache dir, hit every object the first build put in the compiler cache."""
    copy = own["base"] / "elsewhere" / "much" / "deeper" / "triton-copy"
    shutil.copytree(own["tree"], copy, symlinks=True)
    args = [a if a != str(own["tree"]) else str(copy) for a in own["args"]]
    proc = run_cli("build", "--json", "--compile-commands", *args, "--cache-dir",
                   str(own["base"] / "other" / "cache-copy"), "--out", str(own["base"] / "dist-copy"), cwd=own["base"],
                   env=own["env"])
    result = one_of(proc.stdout, "wheels")
    hits, misses = result["ccache"]["hits"], result["ccache"]["misses"]
    assert misses == 0 and hits >= first["ccache"]["misses"] > 0, (result["ccache"], first["ccache"])
    build = Path(result["build_dir"])
    assert (build / "src").resolve() == copy.resolve() and (build / "src").is_symlink()
    # editors get the checkout's paths, not the build dir's links
    db = json.loads((copy / "compile_commands.json").read_text())
    roots = (str(copy) + "/", str(own["plugin"]) + "/", str(own["abi"]) + "/", str(build / "cmake") + "/")
    assert db and [e["file"] for e in db if not e["file"].startswith(roots)] == []
    assert not any(str(build / "src") in e["command"] for e in db)
    # removing the build dir removes the links, never what they point at
    before = sorted(p.name for p in copy.rglob("*") if p.is_file() and p.name != "compile_commands.json")
    run_cli("clean", "--cache-dir", str(own["base"] / "other" / "cache-copy"), "--all", cwd=own["base"],
            env=own["env"])
    assert not build.exists() and not (copy / "compile_commands.json").exists()
    assert sorted(p.name for p in copy.rglob("*") if p.is_file()) == before


def test_no_stable_paths_sees_the_checkout_itself(work: dict) -> None:
    plan = plan_json(*work["args"], "--no-stable-paths", "--cache-dir", str(work["base"] / "cacheA"),
                     cwd=work["base"], env=work["env"])
    assert plan["cmake"]["views"] == [] and plan["cmake"]["source_dir"] == str(work["tree"])
    plan = plan_json(*work["args"], "--cache-dir", str(work["base"] / "cacheA"), cwd=work["base"], env=work["env"])
    assert plan["cmake"]["source_dir"] == str(Path(plan["cmake"]["build_dir"]) / "src")
    assert [v[1] for v in plan["cmake"]["views"]] == [str(work["tree"]), str(work["plugin"])]


def test_cpu_selection_has_exactly_the_request_plus_required(own: dict, tmp_path: Path) -> None:
    proc = run_cli("build", "--json", "--source", str(own["tree"]), "--backends", "cpu", "--cache-dir",
                   str(own["base"] / "cacheA"), "--out", str(own["base"] / "dist-cpu"), cwd=own["base"],
                   env=own["env"])
    result = one_of(proc.stdout, "wheels")
    assert result["backends"] == ["cpu", "nvidia", "amd"]
    assert "added back nvidia, amd" in flat(proc.stderr)
    files = record(result["wheel"])
    dirs = {p.split("/")[2] for p in files if p.startswith("triton/backends/") and p.count("/") > 2}
    assert dirs == {"cpu", "nvidia", "amd"}
    # triton-cpu's shape: kernels link -lTritonCPURuntime and a versioned math library from triton/_C;
    # a wheel has no symlinks, so the linker and SONAME names are real files.
    libs = {"libTritonCPURuntime.so", "libtbmath.so", "libtbmath.so.3", "libtbmath.so.3.6.0"}
    assert {f"triton/_C/{n}" for n in libs} <= set(files)
    with zipfile.ZipFile(result["wheel"]) as zf:
        zf.extractall(tmp_path / "x", [f"triton/_C/{n}" for n in libs])
    code = ("import ctypes, sys; d = sys.argv[1]; m = ctypes.CDLL(d + '/libtbmath.so.3'); "
            "m.tbmath_twice.restype = ctypes.c_double; "
            "print(m.tbmath_twice(ctypes.c_double(2.5)), ctypes.CDLL(d + '/libTritonCPURuntime.so')"
            ".triton_cpu_runtime_abi())")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x" / "triton" / "_C")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["5.0", "1"]


def test_compile_error_in_a_plugin_fails_cleanly(own: dict, tmp_path: Path) -> None:
    broken = example.write_plugin(tmp_path / "broken-plugin", "broken", broken=True)
    out = own["base"] / "dist-broken"
    proc = run_cli("build", "--source", str(own["tree"]), "--plugin-dir", str(broken), "--cache-dir",
                   str(own["base"] / "cacheA"), "--out", str(out), cwd=own["base"], env=own["env"],
                   check=False)
    assert proc.returncode == 1, proc.stderr
    err = flat(proc.stderr)
    assert "this plugin is broken on purpose" in err
    assert "The failing code is in the plugin 'broken'" in err  # ccache makes gcc print relative paths
    assert "full log:" in err and "build.log" in err
    assert not out.exists() or not any(out.iterdir())


def test_stray_skbuild_and_cmake_args_are_reported_not_applied(own: dict) -> None:
    _, first = build(own)
    env = {**own["env"], "SKBUILD_CMAKE_DEFINE": "TB_STRAY=1", "CMAKE_ARGS": "-DTB_STRAY_ARGS=1"}
    proc = run_cli("build", "--json", *own["args"], "--cache-dir", str(own["base"] / "cacheA"), "--out",
                   str(own["base"] / "dist"), cwd=own["base"], env=env)
    err = flat(proc.stderr)
    assert "ignoring SKBUILD_CMAKE_DEFINE='TB_STRAY=1'" in err and "ignoring CMAKE_ARGS=" in err
    cache = (Path(first["build_dir"]) / "cmake" / "CMakeCache.txt").read_text()
    assert "TB_STRAY" not in cache
    assert one_of(proc.stdout, "wheels")["ninja_no_work"] is True


def test_2024_tree_gets_cuda_headers_from_the_toolkit_not_the_source(work: dict, tmp_path: Path) -> None:
    # 2024 (G1) trees compile the nvidia backend against backend/include/cuda.h, which their setup.py
    # downloads into the source tree; tritonbuild takes it from CUDA_HOME without touching the source.
    tree = example.write_tree(tmp_path / "triton-g1", generation="G1", backends=("nvidia",))
    cuda = example.write_cuda_stub(tmp_path / "cuda") / "include"
    before = sorted(str(p) for p in tree.rglob("*"))
    proc = run_cli("build", "--json", "--source", str(tree), "--backends", "nvidia", "--no-proton", "--cache-dir",
                   str(tmp_path / "cache"), "--out", str(tmp_path / "dist"), cwd=tmp_path,
                   env={**work["env"], "CUDA_HOME": str(tmp_path / "cuda")})
    result = one_of(proc.stdout, "wheels")
    assert sorted(str(p) for p in tree.rglob("*") if "compile_commands" not in str(p)) == before
    with zipfile.ZipFile(result["wheel"]) as zf:
        assert zf.read("triton/backends/nvidia/include/cuda.h") == (cuda / "cuda.h").read_bytes()
        assert "triton/backends/nvidia/include/crt/host_defines.h" in zf.namelist()
        # the committed link python/triton/_C/include -> ../../../include stays out, as in the official wheels
        assert (tree / "python" / "triton" / "_C" / "include").is_symlink()
        assert not [n for n in zf.namelist() if n.startswith("triton/_C/include")]
        zf.extractall(tmp_path / "x")
    code = "from triton._C import libtriton; print(libtriton.nvidia.CUDA_VERSION)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path / "x", capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "12040"


def elf_facts(wheel: str, member: str, tmp: Path):
    with zipfile.ZipFile(wheel) as zf:
        zf.extract(member, tmp)
    return elf.read(tmp / member)


def test_wheel_links_llvm_statically_and_carries_what_it_needs(work: dict, first: dict, tmp_path: Path) -> None:
    # Debian's LLVM is one shared libLLVM; the wheel must still import where /usr/lib/llvm-22 does not exist
    lib = elf_facts(first["wheel"], "triton/_C/libtriton.so", tmp_path)
    assert not any(n.startswith("libLLVM") for n in lib.needed), lib.needed
    assert lib.runpath == ("$ORIGIN",)
    files = set(record(first["wheel"]))
    for bundled in first["bundled"]["bundled"]:  # what libtriton uses from outside the allow-list (libzstd)
        assert f"triton/_C/{bundled['name']}" in files
    filecheck = elf_facts(first["wheel"], "triton/FileCheck", tmp_path)
    assert "libz3.so.4" not in filecheck.needed  # Debian's FileCheck lists libz3 but uses none of it
    assert {"file": "triton/FileCheck", "name": "libz3.so.4"} in first["bundled"]["dropped"]
    proc = run_cli("verify", first["wheel"], cwd=tmp_path)
    out = " ".join(proc.stdout.split())
    assert "ok libraries:" in out and "need no library from outside the wheel but the manylinux allow-list's" in out
    assert "platform: the ELF files need manylinux_2_" in out and "cannot go to a package index" in out
    assert "with /usr/lib/llvm-22 hidden discovers amd, nvidia, spirv, triton_dash_plugin" in out, out


def test_a_shared_libllvm_is_carried_and_verify_catches_a_wheel_without_it(own: dict, tmp_path: Path) -> None:
    _, first = build(own)
    _, bare = build(own, "--llvm-link", "shared", "--no-bundle-libs", out="dist-bare")
    assert bare["build_dir"] == first["build_dir"]  # a packaging choice: same objects, only a relink
    lib = elf_facts(bare["wheel"], "triton/_C/libtriton.so", tmp_path / "bare")
    assert "libLLVM.so.22.1" in lib.needed
    proc = run_cli("verify", bare["wheel"], cwd=tmp_path, check=False)
    out = " ".join(proc.stdout.split())
    assert proc.returncode == 1
    assert "FAIL libraries" in out and "triton/_C/libtriton.so needs libLLVM.so.22.1" in out
    assert "FAIL import: fresh venv with /usr/lib/llvm-22 hidden" in out  # the build machine hid the gap
    _, carried = build(own, "--llvm-link", "shared", out="dist-carried")
    files = set(record(carried["wheel"]))
    assert {"triton/_C/libLLVM.so.22.1", "triton/_C/libz3.so.4"} <= files
    assert elf_facts(carried["wheel"], "triton/_C/libLLVM.so.22.1", tmp_path / "c").runpath == ("$ORIGIN",)
    proc = run_cli("verify", carried["wheel"], cwd=tmp_path)
    assert "with /usr/lib/llvm-22 hidden discovers" in " ".join(proc.stdout.split())


def test_the_checks_of_a_quick_rebuild_see_what_its_wheel_holds(own: dict) -> None:
    """Review 51: the quick rebuild's checks import from the kept prefix, which kept a module deleted from the
    source (``cmake --install`` never removes) and the bytecode the last import check wrote (trusted again for a
    same-size save within the same second), so a wheel that cannot import passed; and its dist-info kept the last
    wheel's LICENSE. Now the prefix holds what the wheel holds, no check writes bytecode there, and the license is
    the source's."""
    pkg, licence = own["tree"] / "python" / "triton", own["tree"] / "LICENSE"
    init, kept = pkg / "__init__.py", {p: p.read_bytes() for p in (pkg / "__init__.py", own["tree"] / "LICENSE")}
    try:
        (pkg / "tb_helper.py").write_text("VALUE = 1\n")
        init.write_bytes(kept[init] + b"\nfrom . import tb_helper\n")
        licence.write_bytes(kept[licence] + b"\nEDITED LICENSE 1\n")
        _, first = build(own)
        (pkg / "tb_helper.py").unlink()  # the import stays: the wheel cannot import
        proc, _ = build(own, check=False)
        assert proc.returncode == 1 and "does not import" in " ".join(proc.stderr.split()), proc.stderr[-2000:]
        assert Path(first["wheel"]).is_file() and sha256(Path(first["wheel"])) == first["sha256"]
        init.write_bytes(kept[init] + b"\nSAVE_VALUE = 123456\n")
        saved = init.stat().st_mtime_ns
        licence.write_bytes(kept[licence] + b"\nEDITED LICENSE 2\n")
        _, one = build(own)
        assert one["strategy"] == "quick"
        with zipfile.ZipFile(one["wheel"]) as zf:
            assert zf.read("triton-3.6.0.dist-info/licenses/LICENSE").endswith(b"EDITED LICENSE 2\n")
            assert "triton/tb_helper.py" not in zf.namelist()
        init.write_bytes(kept[init] + b"\nraise SystemExit(7)\n")  # the same size, the same second
        os.utime(init, ns=(saved, saved + 1))
        proc, _ = build(own, check=False)
        assert proc.returncode == 1 and "does not import" in " ".join(proc.stderr.split()), proc.stderr[-2000:]
        assert sha256(Path(one["wheel"])) == one["sha256"]  # the last good wheel, untouched
    finally:
        for path, data in kept.items():
            path.write_bytes(data)
        (pkg / "tb_helper.py").unlink(missing_ok=True)
