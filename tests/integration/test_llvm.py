"""Issue 4: LLVM providers for real: downloads from a local HTTP server, Debian's LLVM 22, a source build."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import one_of
from tests.integration.conftest import flat, git_commit, run_cli, small_tmpfs
from tests.integration.llvm_fixtures import Server, fake_prefix, make_archive
from tritonbuild import example

H = "2eb709b95d8f521aa15401e159fac0729d56a677"
ARCHIVE = "llvm-2eb709b9-ubuntu-x64-1.tar.gz"
TOP = ARCHIVE.removesuffix(".tar.gz")
GOOD = make_archive(TOP)
ENV = {"TRITON_LLVM_SYSTEM_SUFFIX": "ubuntu-x64", "TRITONBUILD_HTTP_TIMEOUT": "2", "TRITONBUILD_HTTP_RETRIES": "2"}


@pytest.fixture(scope="module")
def server():
    with Server({ARCHIVE: GOOD, "llvm-2eb709b9-ubuntu-x64.tar.gz": GOOD}) as s:
        yield s


def g3_tree(tmp_path: Path, sha: str | None = None) -> Path:
    root = example.write_tree(tmp_path / "triton", generation="G3")
    sums = {"ubuntu-x64": sha or hashlib.sha256(GOOD).hexdigest()}
    (root / "cmake" / "llvm-info.json").write_text(json.dumps({"llvm_hash": H, "build_number": 1, "sha256sum": sums}))
    return root


def fetch(tmp_path: Path, tree: Path, mirror: str, *extra: str, env: dict | None = None, check: bool = False):
    return run_cli("llvm", "fetch", "--source", str(tree), "--llvm-mirror", mirror, "--cache-dir",
                   str(tmp_path / "cache"), *extra, cwd=tmp_path, env={**ENV, **(env or {})}, check=check)


def leftovers(tmp_path: Path) -> list[str]:
    llvm = tmp_path / "cache" / "llvm"
    if not llvm.exists():
        return []
    return sorted(str(p.relative_to(llvm)) for p in llvm.rglob("*")
                  if p.name.endswith(".part") or ".staging-" in p.name or p.parent.name == ".downloads")


def test_good_archive_is_verified_cached_and_reported(tmp_path: Path, server: Server) -> None:
    tree = g3_tree(tmp_path)
    before = run_cli("llvm", "path", "--source", str(tree), "--llvm", "download", "--llvm-mirror",
                     f"{server.url}/good", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path, env=ENV, check=False)
    assert before.returncode == 2 and before.stdout == "", before.stderr  # nothing to print a script would take
    assert ("The plan's LLVM (download) is not in the cache yet: run `tritonbuild llvm fetch` first, with the "
            "options given here") in flat(before.stderr)
    proc = fetch(tmp_path, tree, f"{server.url}/good", check=True)
    prefix = Path(proc.stdout.strip())
    assert prefix == tmp_path / "cache" / "llvm" / TOP
    assert (prefix / "bin" / "llvm-config").is_file()
    marker = json.loads((prefix / "tritonbuild-llvm.json").read_text())
    assert marker["llvm_hash"] == H and marker["sha256"] == hashlib.sha256(GOOD).hexdigest()
    assert leftovers(tmp_path) == []
    # a second fetch does not download again
    hits = server.hits[f"/good/{ARCHIVE}"]
    fetch(tmp_path, tree, f"{server.url}/good", check=True)
    assert server.hits[f"/good/{ARCHIVE}"] == hits
    # the cached LLVM is what auto picks now, ahead of the system one
    plan = one_of(run_cli("plan", "--json", "--source", str(tree), "--cache-dir", str(tmp_path / "cache"),
                          cwd=tmp_path, env=ENV).stdout, "plans")
    assert plan["llvm"]["strategy"] == "cached" and plan["llvm"]["prefix"] == str(prefix)
    assert plan["llvm"]["is_pinned"] is True
    path = run_cli("llvm", "path", "--source", str(tree), "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path,
                   env=ENV)
    assert path.stdout.strip() == str(prefix)


def test_wrong_sha256_is_refused_and_deleted(tmp_path: Path, server: Server) -> None:
    tree = g3_tree(tmp_path, sha="0" * 64)
    proc = fetch(tmp_path, tree, f"{server.url}/good")
    assert proc.returncode == 2
    err = flat(proc.stderr)
    assert "expected " + "0" * 64 in err and hashlib.sha256(GOOD).hexdigest() in err
    assert not (tmp_path / "cache" / "llvm" / TOP).exists() and leftovers(tmp_path) == []


def test_truncated_transfer_fails_after_bounded_retries(tmp_path: Path, server: Server) -> None:
    proc = fetch(tmp_path, g3_tree(tmp_path), f"{server.url}/truncated")
    assert proc.returncode == 3
    assert "after 2 attempts" in flat(proc.stderr)
    assert server.hits[f"/truncated/{ARCHIVE}"] == 2
    assert not (tmp_path / "cache" / "llvm" / TOP).exists() and leftovers(tmp_path) == []


def test_server_error_then_success_retries(tmp_path: Path, server: Server) -> None:
    proc = fetch(tmp_path, g3_tree(tmp_path), f"{server.url}/flaky", check=True)
    assert Path(proc.stdout.strip()).is_dir()
    assert server.hits[f"/flaky/{ARCHIVE}"] == 2
    assert "attempt 1/2" in proc.stderr


def test_stalled_server_times_out(tmp_path: Path, server: Server) -> None:
    import time

    start = time.monotonic()
    proc = fetch(tmp_path, g3_tree(tmp_path), f"{server.url}/stall", env={"TRITONBUILD_HTTP_TIMEOUT": "0.5"})
    assert proc.returncode == 3 and "timed out" in proc.stderr
    assert time.monotonic() - start < 30


def test_size_cap_from_the_environment_stops_the_download_unretried(tmp_path: Path, server: Server) -> None:
    """#44: TRITONBUILD_HTTP_MAX_BYTES reaches the download through the plan: a Content-Length over it is refused
    before the body, once (no retry), naming the cap and the variable; nothing is left in the cache."""
    proc = fetch(tmp_path, g3_tree(tmp_path), f"{server.url}/capped", env={"TRITONBUILD_HTTP_MAX_BYTES": "100"})
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr
    err = flat(proc.stderr)
    assert f"the server declares {len(GOOD)} bytes (Content-Length), over the cap of 100 bytes" in err
    assert "TRITONBUILD_HTTP_MAX_BYTES" in err and f"{server.url}/capped/{ARCHIVE}" in err
    assert server.hits[f"/capped/{ARCHIVE}"] == 1
    assert not (tmp_path / "cache" / "llvm" / TOP).exists() and leftovers(tmp_path) == []


def test_missing_archive_is_a_clear_error(tmp_path: Path, server: Server) -> None:
    proc = fetch(tmp_path, g3_tree(tmp_path), f"{server.url}/missing")
    assert proc.returncode == 2 and "There is no prebuilt LLVM" in flat(proc.stderr)


@pytest.mark.parametrize("evil", ["dotdot", "absolute", "symlink", "hardlink", "device"])
def test_hostile_archives_are_refused(tmp_path: Path, evil: str) -> None:
    data = make_archive(TOP, evil=evil)
    tree = g3_tree(tmp_path, sha=hashlib.sha256(data).hexdigest())
    with Server({ARCHIVE: data}) as srv:
        proc = fetch(tmp_path, tree, f"{srv.url}/good")
    assert proc.returncode == 2, proc.stderr
    assert "Refusing to extract" in flat(proc.stderr)
    assert not (tmp_path / "cache" / "llvm" / TOP).exists() and leftovers(tmp_path) == []
    assert not (tmp_path / "cache" / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()
    assert not Path("/tmp/tritonbuild-absolute-escape.txt").exists()


def test_unpinned_archive_needs_allow_unpinned(tmp_path: Path, server: Server) -> None:
    tree = example.write_tree(tmp_path / "triton")  # G2: llvm-hash.txt, no checksums
    proc = fetch(tmp_path, tree, f"{server.url}/good")
    assert proc.returncode == 2 and "--allow-unpinned" in proc.stderr
    proc = fetch(tmp_path, tree, f"{server.url}/good", "--allow-unpinned", check=True)
    assert Path(proc.stdout.strip()).name == "llvm-2eb709b9-ubuntu-x64"
    assert f"with sha256 {hashlib.sha256(GOOD).hexdigest()}" in flat(proc.stderr)


def test_four_concurrent_fetches_download_once(tmp_path: Path, server: Server) -> None:
    tree = g3_tree(tmp_path)
    argv = [sys.executable, "-m", "tritonbuild", "llvm", "fetch", "--source", str(tree), "--llvm-mirror",
            f"{server.url}/slow", "--cache-dir", str(tmp_path / "cache")]
    import os

    procs = [subprocess.Popen(argv, cwd=tmp_path, env={**os.environ, **ENV}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], outs
    assert len({o[0].strip() for o in outs}) == 1
    assert server.hits[f"/slow/{ARCHIVE}"] == 1


def test_two_pins_do_not_interfere(tmp_path: Path, server: Server) -> None:
    tree = g3_tree(tmp_path)
    other = example.write_tree(tmp_path / "other")
    fetch(tmp_path, tree, f"{server.url}/good", check=True)
    fetch(tmp_path, other, f"{server.url}/good", "--allow-unpinned", check=True)
    names = sorted(p.name for p in (tmp_path / "cache" / "llvm").iterdir() if not p.name.startswith("."))
    assert names == ["llvm-2eb709b9-ubuntu-x64", TOP]


def test_offline_never_downloads(tmp_path: Path, server: Server) -> None:
    before = sum(server.hits.values())
    proc = fetch(tmp_path, g3_tree(tmp_path), f"{server.url}/good", "--offline")
    assert proc.returncode == 2 and "offline (TRITON_OFFLINE_BUILD/--offline)" in flat(proc.stderr)
    assert sum(server.hits.values()) == before
    plan = one_of(run_cli("plan", "--json", "--offline", "--source", str(g3_tree(tmp_path / "b")),
                          "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path, env=ENV).stdout, "plans")
    assert plan["llvm"]["strategy"] == "system"


def test_auto_download_failure_falls_back_to_the_system_llvm(tmp_path: Path) -> None:
    tree = g3_tree(tmp_path)
    proc = run_cli("build", "--json", "--source", str(tree), "--llvm-mirror", "http://127.0.0.1:9/none",
                   "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "dist"), cwd=tmp_path,
                   env={**ENV, "TRITONBUILD_HTTP_RETRIES": "1"})
    assert "Falling back to a system LLVM" in flat(proc.stderr)
    result = one_of(proc.stdout, "wheels")
    assert Path(result["wheel"]).is_file()


# --- the system provider against Debian's LLVM 22 ---------------------------------------------------------


def test_system_llvm_22_is_probed(tmp_path: Path) -> None:
    from tritonbuild.llvm.probe import probe

    inst = probe(Path("/usr/lib/llvm-22"))
    assert inst.runs and inst.version and inst.version.startswith("22.")
    assert {"NVPTX", "AMDGPU", "X86", "SPIRV"} <= set(inst.targets_built)
    assert inst.has_mlir and inst.has_lld and inst.mlir_tblgen_runs and inst.link_dylib


def test_system_llvm_missing_target(tmp_path: Path) -> None:
    plugin = example.write_plugin(tmp_path / "dx-plugin", "dx", llvm_targets=("DirectX",))
    tree = example.write_tree(tmp_path / "triton")
    proc = run_cli("plan", "--source", str(tree), "--plugin-dir", str(plugin), "--llvm", "/usr/lib/llvm-22",
                   cwd=tmp_path, check=False)
    assert proc.returncode == 2
    assert "without the LLVM target(s) DirectX" in flat(proc.stderr)


def test_broken_prefixes(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    broken = fake_prefix(tmp_path / "broken")
    (broken / "bin" / "llvm-config").write_text(
        "#!/bin/sh\necho \"llvm-config: /lib/libstdc++.so.6: version 'GLIBCXX_3.4.32' not found\" >&2\nexit 1\n")
    proc = run_cli("plan", "--source", str(tree), "--llvm", str(broken), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "GLIBCXX_3.4.32" in flat(proc.stderr)
    no_mlir = fake_prefix(tmp_path / "nomlir")
    shutil.rmtree(no_mlir / "lib" / "cmake" / "mlir")
    proc = run_cli("plan", "--source", str(tree), "--llvm", str(no_mlir), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "no MLIR CMake package" in flat(proc.stderr)


# --- the source provider against a small local llvm-project-shaped repository -----------------------------

FAKE_LLVM_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(fake_llvm NONE)
file(WRITE "${CMAKE_BINARY_DIR}/args.txt"
  "PROJECTS=${LLVM_ENABLE_PROJECTS}\\nTARGETS=${LLVM_TARGETS_TO_BUILD}\\nTYPE=${CMAKE_BUILD_TYPE}\\nASSERT=${LLVM_ENABLE_ASSERTIONS}\\nTESTS=${LLVM_INCLUDE_TESTS}\\n")
string(REPLACE ";" " " TARGETS_SPACED "${LLVM_TARGETS_TO_BUILD}")
configure_file(llvm-config.in "${CMAKE_BINARY_DIR}/llvm-config" @ONLY)
install(PROGRAMS "${CMAKE_BINARY_DIR}/llvm-config" mlir-tblgen FileCheck DESTINATION bin)
install(FILES "${CMAKE_BINARY_DIR}/args.txt" DESTINATION share/fake-llvm)
install(FILES LLVMConfig.cmake DESTINATION lib/cmake/llvm)
install(FILES MLIRConfig.cmake DESTINATION lib/cmake/mlir)
install(FILES LLDConfig.cmake DESTINATION lib/cmake/lld)
"""


def make_llvm_repo(path: Path) -> str:
    llvm = path / "llvm"
    llvm.mkdir(parents=True)
    (llvm / "CMakeLists.txt").write_text(FAKE_LLVM_CMAKE)
    (llvm / "llvm-config.in").write_text(
        '#!/bin/sh\ncase "$1" in --version) echo 23.0.0git;; --targets-built) echo "@TARGETS_SPACED@";; '
        "*) exit 1;; esac\n")
    (llvm / "mlir-tblgen").write_text("#!/bin/sh\necho mlir-tblgen\n")
    (llvm / "FileCheck").write_text("#!/bin/sh\nexit 0\n")
    for name in ("LLVMConfig.cmake", "MLIRConfig.cmake", "LLDConfig.cmake"):
        (llvm / name).write_text("# fake\n")
    return git_commit(path, "fake llvm-project")


def test_source_build_passes_exact_targets_and_projects_and_caches(tmp_path: Path) -> None:
    commit = make_llvm_repo(tmp_path / "llvm-project")
    tree = example.write_tree(tmp_path / "triton", llvm_hash=commit)
    args = ["llvm", "build", "--source", str(tree), "--backends", "nvidia;amd;spirv", "--llvm-src",
            str(tmp_path / "llvm-project"), "--cache-dir", str(tmp_path / "cache")]
    first = run_cli(*args, cwd=tmp_path)
    prefix = Path(first.stdout.strip())
    assert prefix.name == f"src-{commit[:12]}-AMDGPU_NVPTX_SPIRV_X86-Release"
    recorded = dict(line.split("=", 1) for line in (prefix / "share/fake-llvm/args.txt").read_text().split("\n")
                    if line)
    assert recorded == {"PROJECTS": "mlir;lld", "TARGETS": "NVPTX;AMDGPU;X86;SPIRV", "TYPE": "Release",
                        "ASSERT": "OFF", "TESTS": "OFF"}
    marker = json.loads((prefix / "tritonbuild-llvm.json").read_text())
    assert marker["llvm_hash"] == commit and marker["provider"] == "source"
    stamp = (prefix / "share/fake-llvm/args.txt").stat().st_mtime_ns
    second = run_cli(*args, cwd=tmp_path)
    assert "already in the cache" in flat(second.stderr)
    assert (prefix / "share/fake-llvm/args.txt").stat().st_mtime_ns == stamp
    # the plan now uses the cached source build at the pinned commit
    plan = one_of(run_cli("plan", "--json", "--source", str(tree), "--backends", "nvidia;amd;spirv",
                          "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path).stdout, "plans")
    assert plan["llvm"]["strategy"] == "cached" and plan["llvm"]["prefix"] == str(prefix)
    assert plan["llvm"]["version"] == "23.0.0git"


def test_gc_removes_only_llvms_no_build_dir_uses(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    used, unused = cache / "llvm" / "llvm-aaaaaaaa-ubuntu-x64-1", cache / "llvm" / "src-bbbbbbbbbbbb-X86-Release"
    for entry in (used, unused):
        fake_prefix(entry)
        (entry / "tritonbuild-llvm.json").write_text(json.dumps({"llvm_hash": "a" * 40}))
    partial = cache / "llvm" / ".staging-other-123"  # a download in progress (here or on another host sharing the
    partial.mkdir()  # cache): it holds its entry's lock, and gc leaves it
    plan_dir = cache / "build" / "0123456789abcdef"
    plan_dir.mkdir(parents=True)
    (plan_dir / "plan.json").write_text(json.dumps({"llvm": {"prefix": str(used)}}))
    from filelock import FileLock

    (cache / "llvm" / ".locks").mkdir()
    with FileLock(str(cache / "llvm" / ".locks" / "other.lock")):
        dry = run_cli("llvm", "gc", "--cache-dir", str(cache), "--dry-run", cwd=tmp_path).stdout
        assert f"would remove {unused}" in dry and f"keep   {used}" in dry and unused.exists()
        run_cli("llvm", "gc", "--cache-dir", str(cache), cwd=tmp_path)
        assert used.exists() and not unused.exists() and partial.exists()


def rebuilt_archive() -> bytes:
    """The same archive name with other bytes: what a rebuilt prebuilt under the same hash and build looks like."""
    import io
    import tarfile

    from tests.integration.llvm_fixtures import prefix_files

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, (data, mode) in {**prefix_files(), "REBUILT": (b"2\n", 0o644)}.items():
            info = tarfile.TarInfo(f"{TOP}/{rel}")
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_cached_llvm_the_pin_contradicts_is_fetched_again(tmp_path: Path, server: Server) -> None:
    tree = g3_tree(tmp_path)
    prefix = Path(fetch(tmp_path, tree, f"{server.url}/good", check=True).stdout.strip())
    new = rebuilt_archive()
    new_sha = hashlib.sha256(new).hexdigest()
    (tree / "cmake" / "llvm-info.json").write_text(
        json.dumps({"llvm_hash": H, "build_number": 1, "sha256sum": {"ubuntu-x64": new_sha}}))
    plan = one_of(run_cli("plan", "--json", "--source", str(tree), "--cache-dir", str(tmp_path / "cache"),
                          cwd=tmp_path, env=ENV).stdout, "plans")
    assert plan["llvm"]["strategy"] == "download"  # not the stale cache entry
    assert any(p == str(prefix) and "the pin now says" in why for p, why in plan["llvm"]["rejected"])
    with Server({ARCHIVE: new}) as rebuilt:
        again = fetch(tmp_path, tree, f"{rebuilt.url}/good", check=True)
    assert Path(again.stdout.strip()) == prefix and (prefix / "REBUILT").is_file()
    assert json.loads((prefix / "tritonbuild-llvm.json").read_text())["sha256"] == new_sha
    assert leftovers(tmp_path) == [] and not list((tmp_path / "cache" / "llvm").glob(".replaced-*"))


def test_a_full_disk_during_an_llvm_fetch_leaves_the_cache_as_it_was(tmp_path: Path, server: Server) -> None:
    import os

    with small_tmpfs(tmp_path / "small", "64k") as mnt:
        big = GOOD + os.urandom(256 * 1024)  # does not fit: the transfer hits ENOSPC
        tree = g3_tree(tmp_path, sha=hashlib.sha256(big).hexdigest())
        with Server({ARCHIVE: big}) as full:
            proc = run_cli("llvm", "fetch", "--source", str(tree), "--llvm-mirror", f"{full.url}/good",
                           "--cache-dir", str(mnt / "cache"), cwd=tmp_path, env=ENV, check=False)
            assert full.hits[f"/good/{ARCHIVE}"] == 1  # the disk, not the network: no retries
        err = flat(proc.stderr)
        assert proc.returncode == 3 and "No space left on device" in err and "needs about 3 GiB" in err, err
        assert "nothing was added to the cache" in err
        llvm = mnt / "cache" / "llvm"
        assert not any(p.name.endswith(".part") or p.name.startswith(".staging-") for p in llvm.rglob("*"))
        assert not (llvm / TOP).exists()
