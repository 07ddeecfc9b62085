"""Issue 5 acceptance: develop, fast rebuilds, compile_commands.json, test lit, status/clean, locking."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from tests.helpers import WHEEL_ONLY, json_out, one_of
from tests.integration.conftest import flat, run_cli
from tritonbuild import example


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("dev")
    tree = example.write_tree(base / "src" / "triton")
    plug = example.write_plugin(base / "src" / "triton-shared", "triton_shared")
    # the venv sees this test run's own packages (pytest, for `tritonbuild test python`) through a .pth file:
    # the base interpreter's site-packages may have none (CI's venv is made from the system python3)
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True)
    purelib = subprocess.run([str(base / "venv" / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "tritonbuild-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {"VIRTUAL_ENV": str(base / "venv"), **WHEEL_ONLY}
    args = ["--source", str(tree), "--backends", "nvidia;amd", "--plugin-dir", str(plug),
            "--cache-dir", str(base / "cache")]
    return {"base": base, "tree": tree, "plugin": plug, "env": env, "args": args,
            "python": str(base / "venv" / "bin" / "python")}


def develop(dev: dict, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run_cli("develop", *dev["args"], cwd=dev["base"], env=dev["env"], check=check)


def py(dev: dict, code: str) -> str:
    return subprocess.run([dev["python"], "-c", code], cwd=dev["base"], capture_output=True, text=True,
                          check=True).stdout.strip()


def build_dir(dev: dict) -> Path:
    plan = one_of(run_cli("plan", "--json", *dev["args"], cwd=dev["base"], env=dev["env"]).stdout, "plans")
    return Path(plan["cmake"]["build_dir"]) / "dev"


@pytest.fixture(scope="module")
def developed(dev: dict) -> dict:
    develop(dev)
    return dev


def test_editable_sees_cpp_and_python_changes(developed: dict) -> None:
    dev = developed
    code = ("from triton._C import libtriton; import triton.language.extra.cuda as c; "
            "print(libtriton.nvidia.VALUE, c.WARP_SIZE)")
    assert py(dev, code) == "1 32"
    cc = dev["tree"] / "third_party" / "nvidia" / "triton_nvidia.cc"
    cc.write_text(cc.read_text().replace('m.attr("VALUE") = 1;', 'm.attr("VALUE") = 2;'))
    develop(dev)
    log = (build_dir(dev) / "develop.log").read_text()
    steps = [ln for ln in log.splitlines() if ln.startswith("[")]
    assert len(steps) == 2 and "triton_nvidia.cc.o" in steps[0] and "Linking" in steps[1], steps
    lang = dev["tree"] / "third_party" / "nvidia" / "language" / "cuda" / "__init__.py"
    lang.write_text("WARP_SIZE = 33\n")
    assert py(dev, code) == "2 33"  # the .py edit is live with no rebuild
    plugin_py = dev["plugin"] / "backend" / "compiler.py"
    plugin_py.write_text(plugin_py.read_text() + "\nEDITED = True\n")
    assert py(dev, "import triton.backends.triton_shared.compiler as c; print(c.EDITED)") == "True"


def test_entry_points_and_discovery_in_the_env(developed: dict) -> None:
    out = py(developed, "from triton.backends import backends; print(sorted(backends))")
    assert out == "['amd', 'nvidia', 'triton_shared']"


def test_companion_library_is_built_and_importable(developed: dict) -> None:
    # proton's libproton.so is not part of libtriton; develop builds it with `triton` into triton._C.
    assert py(developed, "import json, triton.profiler as p; print(json.loads(p.runtime_info())['cupti'])") == "4242"


def test_libraries_are_where_the_trees_own_code_looks(developed: dict) -> None:
    # triton_key() hashes <triton>/_C/libtriton.so and triton-cpu's driver links -lTritonCPURuntime from
    # importlib.resources.files(triton) / "_C"; in an editable install that is the source tree, so develop links
    # the built libraries there.
    dev = developed
    src_c = dev["tree"] / "python" / "triton" / "_C"
    built = build_dir(dev) / "tritonbuild-stage" / "triton" / "_C"
    stale = src_c / "libgone.so"
    stale.symlink_to(built / "libgone.so")  # a library an earlier develop built and this one no longer does
    develop(dev)
    assert not stale.is_symlink()
    for name in ("libproton.so", "libtriton.so"):
        link = src_c / name
        assert link.is_symlink() and Path(os.readlink(link)) == built / name
    code = ("import ctypes, importlib.resources, triton; d = importlib.resources.files(triton) / '_C'; "
            "ctypes.CDLL(str(d / 'libproton.so')); print(sorted(p.name for p in d.iterdir()))")
    assert py(dev, code) == "['.keep', 'libproton.so', 'libtriton.so']"
    assert not (dev["tree"] / "python" / "triton" / "backends" / "nvidia").exists()  # entry points suffice


def test_2024_tree_that_lists_backend_dirs_finds_its_backends(tmp_path: Path) -> None:
    # 2024 trees discover backends with os.listdir(triton/backends); setup.py's develop links them in there.
    tree = example.write_tree(tmp_path / "triton-g1", generation="G1", backends=("nvidia", "amd"))
    backends_dir = tree / "python" / "triton" / "backends"
    user = backends_dir / "amd"
    user.mkdir()  # a directory of the user's own is left alone
    stale = tree / "python" / "triton" / "_C" / "libtriton.so"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"left by an earlier pip install -e")  # still what the checkout's Triton uses: a warning
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    env = {"VIRTUAL_ENV": str(tmp_path / "venv"), **WHEEL_ONLY,
           "CUDA_HOME": str(example.write_cuda_stub(tmp_path / "cuda"))}
    proc = run_cli("develop", "--source", str(tree), "--backends", "nvidia;amd", "--no-proton", "--cache-dir",
                   str(tmp_path / "cache"), cwd=tmp_path, env=env)
    squashed = "".join((proc.stdout + proc.stderr).split())  # rich wraps long paths anywhere
    assert "".join(f"{user} is not a link, left alone".split()) in squashed
    assert "".join(f"warning: {stale} is not a link, left alone".split()) in squashed
    assert "thecheckout'sTritonusesthatfile,notthebuild's" in squashed
    assert stale.read_bytes() == b"left by an earlier pip install -e"
    link = backends_dir / "nvidia"
    assert link.is_symlink() and Path(os.readlink(link)) == tree / "third_party" / "nvidia" / "backend"
    out = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c",
                          "from triton.backends import backends; print(sorted(backends))"],
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip()
    assert out == "['amd', 'nvidia']"  # the user's amd dir stays; the finder maps triton.backends.amd anyway
    assert user.is_dir() and not user.is_symlink() and not any(user.iterdir())


def test_noop_develop_does_not_configure_or_rewrite(developed: dict) -> None:
    dev = developed
    develop(dev)
    site = Path(py(dev, "import sysconfig; print(sysconfig.get_paths()['purelib'])"))
    finder = site / "_tritonbuild_triton_finder.py"
    before = finder.stat().st_mtime_ns
    proc = develop(dev)
    log = (build_dir(dev) / "develop.log").read_text()
    assert "-- Configuring" not in log and "cmake" not in log.splitlines()[0]
    assert "ninja: no work to do" in log
    assert finder.stat().st_mtime_ns == before
    assert "no reconfigure" in proc.stdout and "unchanged" in proc.stdout


def test_a_bare_develop_in_the_checkout_uses_its_last_request(developed: dict) -> None:
    dev = developed
    cache = ["--cache-dir", str(dev["base"] / "cache")]
    proc = run_cli("develop", *cache, cwd=dev["tree"], env=dev["env"])  # no --backends, no --plugin-dir
    said = [ln for ln in proc.stdout.splitlines() if "last request" in ln]
    assert said == [f"develop: using the last request of this checkout: --backends 'nvidia;amd' --plugin-dir "
                    f"{dev['plugin']}"], proc.stdout
    assert "no reconfigure" in proc.stdout and build_dir(dev).parent.name in proc.stdout  # the same build dir
    ran = run_cli("test", "python", *cache, "--", "-q", "-p", "no:cacheprovider", cwd=dev["tree"], env=dev["env"])
    assert "test: using the last request of this checkout" in ran.stdout and "1 passed" in ran.stdout


def test_changed_cached_setting_gives_a_clean_reconfigure(developed: dict) -> None:
    dev = developed
    stamp = build_dir(dev) / ".tritonbuild-configure.json"
    data = json.loads(stamp.read_text())
    data["argv"] = [a.replace("-DTRITON_BUILD_UT=OFF", "-DTRITON_BUILD_UT=ON") for a in data["argv"]]
    stamp.write_text(json.dumps(data))
    proc = develop(dev)
    assert "clean reconfigure" in proc.stdout
    assert "Build files have been written to" in (build_dir(dev) / "develop.log").read_text()  # CMake ran again
    assert "no reconfigure" in develop(dev).stdout


def test_compile_commands_links_include_plugin_sources(developed: dict) -> None:
    dev = developed
    for root in (dev["tree"], dev["plugin"]):
        link = root / "compile_commands.json"
        assert link.is_symlink() and Path(link.resolve()).parent == build_dir(dev)
    files = {e["file"] for e in json.loads((dev["plugin"] / "compile_commands.json").read_text())}
    assert any(f.endswith("triton-shared/lib/Plugin.cpp") for f in files)
    assert any(f.endswith("triton/lib/Core.cpp") for f in files)


def test_lit_runs_and_fails_when_it_should(developed: dict) -> None:
    dev = developed
    ok = run_cli("test", "lit", *dev["args"], cwd=dev["base"], env=dev["env"], check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed: 1" in ok.stdout or "Passed" in ok.stdout
    test = dev["tree"] / "test" / "Basic" / "echo.mlir"
    original = test.read_text()
    test.write_text(original.replace("CHECK: core value 42", "CHECK: core value 43"))
    try:
        bad = run_cli("test", "lit", *dev["args"], cwd=dev["base"], env=dev["env"], check=False)
    finally:
        test.write_text(original)
    assert bad.returncode == 1 and "Failed" in bad.stdout


def test_a_test_run_holds_the_build_dir_as_develop_does(developed: dict) -> None:
    """Review 44: `test` ran Ninja in the develop build dir (and lit the LLVM's tools) holding no lock, so a develop
    or clean or gc could work there at the same time."""
    from filelock import FileLock

    dev = developed
    lk = FileLock(str(build_dir(dev).parent / ".tritonbuild.lock"))
    with lk:
        busy = run_cli("test", "lit", *dev["args"], cwd=dev["base"], env=dev["env"], check=False)
    assert busy.returncode == 3 and "Another tritonbuild run is using the build dir" in busy.stderr, busy.stderr


def test_python_tests_run_in_the_env_with_the_runners_exit_code(developed: dict) -> None:
    dev = developed
    ok = run_cli("test", "python", *dev["args"], "--", "-q", "-p", "no:cacheprovider", cwd=dev["base"],
                 env=dev["env"], check=False)
    assert ok.returncode == 0 and "1 passed" in ok.stdout, ok.stdout + ok.stderr
    test = dev["tree"] / "python" / "test" / "test_core.py"
    original = test.read_text()
    test.write_text(original.replace("== 42", "== 43"))
    try:
        bad = run_cli("test", "python", *dev["args"], "--", "-q", "-p", "no:cacheprovider", cwd=dev["base"],
                      env=dev["env"], check=False)
    finally:
        test.write_text(original)
    assert bad.returncode == 1 and "1 failed" in bad.stdout


def test_second_develop_refuses_the_lock_quickly(developed: dict) -> None:
    from filelock import FileLock

    dev = developed
    lock = FileLock(str(build_dir(dev).parent / ".tritonbuild.lock"))
    with lock:
        start = time.monotonic()
        proc = develop(dev, check=False)
        took = time.monotonic() - start
    assert proc.returncode == 3
    assert "Another tritonbuild run is using the build dir" in flat(proc.stderr)
    assert took < 10


def test_status_and_clean(developed: dict) -> None:
    dev = developed
    cache = ["--cache-dir", str(dev["base"] / "cache")]
    rows = json_out(run_cli("status", *cache, "--json", cwd=dev["base"]).stdout)["build_dirs"]
    assert [r["backends"] for r in rows] == [["nvidia", "amd", "triton_shared"]]
    assert rows[0]["size"] > 0 and rows[0]["last_build"].endswith("+00:00") and rows[0]["develop"]  # UTC, zoned
    assert rows[0]["develop_request"] == f"--backends 'nvidia;amd' --plugin-dir {dev['plugin']}"
    out = run_cli("clean", *dev["args"], "--dry-run", cwd=dev["base"], env=dev["env"]).stdout
    assert "would free" in out and build_dir(dev).exists()
    assert len(list((dev["base"] / "cache" / "develop").glob("*.json"))) == 1
    out = run_cli("clean", "--develop", *cache, cwd=dev["tree"], env=dev["env"]).stdout  # by source: the cwd
    assert "1 build dir(s), freed" in out and "forgot 1 develop request(s)" in out
    assert not list((dev["base"] / "cache" / "develop").glob("*.json"))  # its memory goes with it
    assert not build_dir(dev).exists()
    assert not (dev["tree"] / "compile_commands.json").exists()
    assert sorted(p.name for p in (dev["tree"] / "python" / "triton" / "_C").iterdir()) == [".keep"]
    assert (dev["tree"] / "CMakeLists.txt").exists()  # the user's files stay


def test_clean_all_forgets_every_develop_request_and_nothing_else(tmp_path: Path) -> None:
    # issue 45 review: `clean --all` left <cache>/develop/ behind, so a later develop still used old flags
    records = tmp_path / "cache" / "develop"
    records.mkdir(parents=True)
    mine = [records / f"{'a' * 32}.json", records / f".{'b' * 32}.json.123.tmp"]
    for p in mine:
        p.write_text("{}")
    (tmp_path / "keep.json").write_text("{}")
    others = [records / "notes.txt", records / f"{'c' * 32}.json"]
    others[0].write_text("mine")
    others[1].symlink_to(tmp_path / "keep.json")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    out = run_cli("clean", "--all", "--dry-run", *cache, cwd=tmp_path).stdout
    assert "would forget 2 develop request(s)" in out and all(p.exists() for p in mine)
    out = run_cli("clean", "--all", *cache, cwd=tmp_path).stdout
    assert "forgot 2 develop request(s)" in out
    assert not any(p.exists() for p in mine) and all(p.is_symlink() or p.exists() for p in others)
    assert (tmp_path / "keep.json").read_text() == "{}"
    # a develop folder that is a link is never followed, for one checkout or all (review: --develop deleted the
    # record-named file it led to)
    shutil.rmtree(records)
    victims = tmp_path / "victims"
    victims.mkdir()
    tree = example.write_tree(tmp_path / "triton")
    mine = hashlib.sha256(os.fsencode(tree.resolve())).hexdigest()[:32]  # this checkout's record name
    for name in (f"{'d' * 32}.json", f"{mine}.json"):
        (victims / name).write_text("{}")
    records.symlink_to(victims)
    for extra in (["--all"], ["--develop"]):
        out = run_cli("clean", *extra, *cache, cwd=tree).stdout
        assert "forgot" not in out
    assert len(list(victims.iterdir())) == 2


def test_ctrl_c_leaves_the_build_dir_usable(tmp_path: Path) -> None:
    import os
    import signal

    tree = example.write_tree(tmp_path / "src" / "triton")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(tmp_path / "venv")], check=True)
    env = {**os.environ, "VIRTUAL_ENV": str(tmp_path / "venv"), "CCACHE_DISABLE": "1", "NO_COLOR": "1"}
    args = [sys.executable, "-m", "tritonbuild", "develop", "--source", str(tree), "--cache-dir",
            str(tmp_path / "cache"), "--no-ccache", "-j", "1"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    logs = list((tmp_path / "cache").glob("build/*/dev/develop.log"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until Ninja is compiling
        logs = list((tmp_path / "cache").glob("build/*/dev/develop.log"))
        if logs and "[1/" in logs[0].read_text():
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    again = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert "clean reconfigure" not in again.stdout + again.stderr  # the same build dir goes on
    assert again.returncode == 0, again.stderr
    out = subprocess.run([str(tmp_path / "venv" / "bin" / "python"), "-c",
                          "from triton._C import libtriton; print(libtriton.ir.core_value())"],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "42"


def test_unit_tests_need_a_ut_build_and_then_run_with_ctest(developed: dict) -> None:
    dev = developed
    develop(dev)  # the module's plan: TRITON_BUILD_UT=OFF
    proc = run_cli("test", "unit", *dev["args"], cwd=dev["base"], env=dev["env"], check=False)
    assert proc.returncode == 2 and "TRITON_BUILD_UT=ON" in flat(proc.stderr)
    ut = [*dev["args"], "--cmake-arg=-DTRITON_BUILD_UT=ON", "--offline"]
    # the tree's unit tests fetch googletest at configure time; offline, tritonbuild says so before configuring
    proc = run_cli("develop", *ut, cwd=dev["base"], env=dev["env"], check=False)
    assert proc.returncode == 2 and "--dep googletest=PATH" in flat(proc.stderr)
    gtest = example.write_googletest(dev["base"] / "googletest")
    ut.append(f"--dep=googletest={gtest}")
    run_cli("develop", *ut, cwd=dev["base"], env=dev["env"])
    proc = run_cli("test", "unit", *ut, cwd=dev["base"], env=dev["env"], check=False)
    assert proc.returncode == 0 and "100% tests passed" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("var", ["VIRTUAL_ENV", "CONDA_PREFIX"])
def test_an_activated_environment_since_deleted_is_refused_not_replaced(tmp_path: Path, var: str) -> None:
    # the review of issue 45: with the venv deleted, develop installed into tritonbuild's own interpreter, exit 0
    tree = example.write_tree(tmp_path / "src" / "triton")
    gone = tmp_path / "venv-deleted"
    for cmd in ("develop", "plan", "build"):
        proc = run_cli(cmd, "--source", str(tree), "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path,
                       env={var: str(gone)}, check=False)
        assert proc.returncode == 2, (cmd, proc.stdout, proc.stderr)
        err = flat(proc.stderr)
        assert f"error: {var} is '" in err and "which has no bin/python" in err and f"unset {var}" in err, err
        assert "Traceback" not in proc.stderr and not (tmp_path / "cache").exists()
