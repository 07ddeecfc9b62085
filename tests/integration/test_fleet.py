"""Build fleets on existing engines: sccache with S3 (moto's server) and Redis storage, distcc with two local
daemons behind ccache. Every server runs on 127.0.0.1 for the test only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import one_of
from tests.integration.conftest import daemon, free_port, redis_server, run_cli
from tritonbuild import example

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # the smallest tree that still compiles libtriton against LLVM: one backend, no proton
    return example.write_tree(tmp_path_factory.mktemp("fleet") / "triton", backends=("cpu",), proton=False)


def build(tree: Path, work: Path, name: str, *args: str, env: dict[str, str]) -> dict:
    out = run_cli("build", "--json", "--source", str(tree), "--backends", "cpu", "--no-proton",
                  "--cache-dir", str(work / f"cache-{name}"), "--out", str(work / f"dist-{name}"), *args,
                  cwd=work, env=env)
    return one_of(out.stdout, "wheels")


def stop_sccache(result: dict, env: dict[str, str]) -> None:
    """The build's own server (one per storage and base dirs: its port is in the plan)."""
    plan = json.loads((Path(result["build_dir"]) / "plan.json").read_text())
    port = dict(plan["cmake"]["env"])["SCCACHE_SERVER_PORT"]
    subprocess.run([str(BIN / "sccache"), "--stop-server"], env={**env, "SCCACHE_SERVER_PORT": port},
                   capture_output=True, check=False)


def twice_from_empty_local_caches(tree: Path, tmp_path: Path, env: dict[str, str]) -> tuple[dict, dict]:
    """Two builds in two fresh build dirs; the second one's only cache is the remote one."""
    first = build(tree, tmp_path, "a", "--compiler-cache", "sccache", env=env)
    stop_sccache(first, env)
    shutil.rmtree(env["SCCACHE_DIR"], ignore_errors=True)
    second = build(tree, tmp_path, "b", "--compiler-cache", "sccache", env=env)
    stop_sccache(second, env)
    return first, second


def test_sccache_hits_everything_from_another_checkout_at_another_path(tree: Path, tmp_path: Path) -> None:
    env = {"SCCACHE_DIR": str(tmp_path / "sccache"), "SCCACHE_IDLE_TIMEOUT": "120"}
    first = build(tree, tmp_path, "a", "--compiler-cache", "sccache", env=env)
    stop_sccache(first, env)
    copy = tmp_path / "runner" / "workspace" / "triton-checkout"
    shutil.copytree(tree, copy, symlinks=True, ignore=shutil.ignore_patterns("compile_commands.json"))
    second = build(copy, tmp_path / "runner", "b", "--compiler-cache", "sccache", env=env)
    stop_sccache(second, env)
    assert first["sccache"]["misses"] > 0
    assert second["sccache"]["misses"] == 0 and second["sccache"]["hits"] == first["sccache"]["misses"], second


def test_sccache_with_s3_storage_serves_a_fresh_build_dir(tree: Path, tmp_path: Path) -> None:
    port = free_port()
    with daemon([str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)], port):
        endpoint = f"http://127.0.0.1:{port}"
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/tritonbuild-cache", method="PUT"), timeout=30)
        env = {"SCCACHE_BUCKET": "tritonbuild-cache", "SCCACHE_ENDPOINT": endpoint, "SCCACHE_REGION": "us-east-1",
               "SCCACHE_S3_USE_SSL": "false", "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "SCCACHE_IDLE_TIMEOUT": "120", "SCCACHE_DIR": str(tmp_path / "sccache-local")}
        first, second = twice_from_empty_local_caches(tree, tmp_path, env)
        listing = urllib.request.urlopen(f"{endpoint}/tritonbuild-cache?list-type=2", timeout=30).read().decode()
    assert first["sccache"]["misses"] > 0 and first["sccache"]["location"].lower().startswith("s3"), first["sccache"]
    assert first["ccache"] == {} and listing.count("<Key>") >= first["sccache"]["misses"]
    assert second["build_dir"] != first["build_dir"]
    assert second["sccache"]["hits"] >= 0.9 * first["sccache"]["misses"], second["sccache"]
    assert second["sccache"]["misses"] <= 0.1 * first["sccache"]["misses"], second["sccache"]
    plan = first["plan"]
    assert plan["toolchain"]["compiler_cache"] == "sccache"
    assert dict(plan["cmake"]["defines"])["CMAKE_CXX_COMPILER_LAUNCHER"].endswith("sccache")


def test_sccache_with_redis_storage_serves_a_fresh_build_dir(tree: Path, tmp_path: Path) -> None:
    with redis_server(tmp_path) as url:
        env = {"SCCACHE_REDIS_ENDPOINT": url, "SCCACHE_IDLE_TIMEOUT": "120",
               "SCCACHE_DIR": str(tmp_path / "sccache-local")}
        first, second = twice_from_empty_local_caches(tree, tmp_path, env)
    assert first["sccache"]["misses"] > 0 and first["sccache"]["location"].lower().startswith("redis"), first["sccache"]
    assert second["sccache"]["hits"] >= 0.9 * first["sccache"]["misses"], second["sccache"]


def test_distcc_fleet_behind_ccache_compiles_every_miss_remotely(tree: Path, tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    # Run as root, distccd drops to its own user: it logs to a stderr file we open, and its scratch files go to
    # the world-writable /tmp (CI's TMPDIR is a private 0700 directory it could not enter).
    log = tmp_path / "distccd.log"
    env = {**os.environ, "TMPDIR": "/tmp"}
    argv = [shutil.which("distccd") or "distccd", "--daemon", "--no-detach", "--allow", "127.0.0.1", "--listen",
            "127.0.0.1", "--jobs", "2", "--log-stderr", "--port"]
    hosts = " ".join(f"127.0.0.1:{p}/2" for p in ports)
    with daemon([*argv, str(ports[0])], ports[0], env=env, log=log), \
            daemon([*argv, str(ports[1])], ports[1], env=env, log=log):
        plan = one_of(run_cli("plan", "--json", "--source", str(tree), "--backends", "cpu", "--distcc", hosts,
                              cwd=tmp_path).stdout, "plans")
        result = build(tree, tmp_path, "d", "--distcc", hosts, env={"CCACHE_DIR": str(tmp_path / "ccache")})
    assert plan["toolchain"]["jobs"] == 4  # sized to the fleet's slots
    assert dict(plan["cmake"]["env"])["CCACHE_PREFIX"].endswith("distcc")
    misses = result["ccache"]["misses"]
    assert misses > 0 and result["distcc"] == {"remote": misses, "local": 0}, (result["ccache"], result["distcc"])
    served = log.read_text().count("COMPILE_OK")  # the daemons' own count agrees
    assert served == misses
