"""The environment is hostile (a CI's variables), #35: what TRITON_*_PATH names is copied into the wheel only when it
is what it must be (an ELF executable, ELF shared libraries, headers inside their dir), refused at plan time
otherwise; URL secrets are in no output or file, yet reach ccache; plan refuses an --llvm-src that build would."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.helpers import WHEEL_ONLY, one_of
from tests.integration.conftest import LLVM, flat, run_cli
from tritonbuild import example

SECRET = "AWS_SECRET=hunter2"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("envinputs")
    tree = example.write_tree(base / "triton")
    home = base / "home"
    home.mkdir()
    (home / "secret").write_text(SECRET + "\n")
    true = home / "ptxas"  # a small real executable stands in for ptxas
    shutil.copy(shutil.which("true") or "/bin/true", true)
    return {"base": base, "tree": tree, "home": home, "secret": home / "secret", "ptxas": true}


def plan(ws: dict[str, Path], env: dict[str, str], *extra: str, check: bool = False):
    return run_cli("plan", "--source", str(ws["tree"]), "--llvm", str(LLVM), "--offline", "--cache-dir",
                   str(ws["base"] / "cache"), *extra, cwd=ws["base"], env=env, check=check)


def refused(proc, *words: str) -> str:
    """One paragraph on stderr, exit 2, no traceback, holding ``words``."""
    err = flat(proc.stderr)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n\n") == 0
    for w in words:
        assert w in err, err
    return err


def test_a_text_file_as_ptxas_is_refused_at_plan_time_and_build_makes_nothing(ws) -> None:
    env = {"TRITON_PTXAS_PATH": str(ws["secret"])}
    refused(plan(ws, env), "TRITON_PTXAS_PATH", str(ws["secret"]), "a text file, not an ELF executable")
    out = ws["base"] / "out-refused"
    proc = run_cli("build", "--source", str(ws["tree"]), "--llvm", str(LLVM), "--offline", "--cache-dir",
                   str(ws["base"] / "cache"), "--out", str(out), cwd=ws["base"], env=env, check=False)
    refused(proc, "TRITON_PTXAS_PATH", "a text file, not an ELF executable")
    assert not out.exists()


def test_a_real_executable_as_ptxas_is_bundled(ws) -> None:
    proc = plan(ws, {"TRITON_PTXAS_PATH": str(ws["ptxas"])}, "--json", check=True)
    data = one_of(proc.stdout, "plans")
    assert dict(map(tuple, data["cmake"]["defines"]))["TRITONBUILD_NVIDIA_TOOLS"] == f"ptxas={ws['ptxas']}"


def _link_to_secret(ws: dict[str, Path]) -> Path:
    link = ws["home"] / "ptxas-link"
    if not link.is_symlink():
        link.symlink_to(ws["secret"])
    return link


def _fifo(ws: dict[str, Path]) -> Path:
    fifo = ws["home"] / "ptxas-fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    return fifo


def _not_executable(ws: dict[str, Path]) -> Path:
    copy = ws["home"] / "ptxas-noexec"
    shutil.copy(ws["ptxas"], copy)
    copy.chmod(0o644)
    return copy


@pytest.mark.parametrize(("var", "make", "what"), [
    ("TRITON_PTXAS_PATH", _link_to_secret, "a text file, not an ELF executable"),  # links are followed
    ("TRITON_PTXAS_PATH", lambda ws: ws["home"], "a directory, not an ELF executable"),
    ("TRITON_PTXAS_PATH", _fifo, "not a regular file (a FIFO, a socket or a device)"),
    ("TRITON_PTXAS_PATH", _not_executable, "without the exec bit"),
    ("TRITON_NVDISASM_PATH", lambda ws: ws["home"] / "missing", "nothing (no such file or directory)"),
    ("TRITON_CUOBJDUMP_PATH", lambda ws: Path(example.__file__), "a text file, not an ELF executable"),
])
def test_every_bundled_tool_must_be_an_executable_elf_file(ws, var: str, make, what: str) -> None:
    path = make(ws)
    refused(plan(ws, {var: str(path)}), var, os.path.realpath(path), what)  # a link: named by where it leads


def test_no_bundle_leaves_the_tools_unjudged(ws) -> None:
    plan(ws, {"TRITON_PTXAS_PATH": str(ws["secret"])}, "--no-bundle-nvidia-tools", check=True)


def test_cupti_libraries_must_be_elf_shared_objects(ws) -> None:
    libs = ws["base"] / "cupti-libs"
    libs.mkdir()
    (libs / "libcupti.so").symlink_to(ws["secret"])
    env = {"TRITON_CUPTI_LIB_PATH": str(libs)}
    refused(plan(ws, env), "TRITON_CUPTI_LIB_PATH", str(libs / "libcupti.so"), "a text file, not an ELF shared library")
    plan(ws, env, "--no-proton", check=True)  # not bundled without proton: not judged
    (libs / "libcupti.so").unlink()
    (libs / "libcupti.so").write_bytes(example.stand_in_library())  # a real shared library of this host
    (libs / "notes.txt").write_text(SECRET)  # not a CUPTI library's name: never taken
    data = one_of(plan(ws, env, "--json", check=True).stdout, "plans")
    part = next(p for p in data["nvidia"] if p["name"] == "cupti-libs")
    assert part["files"] == [[str(libs), "libcupti.so"]]
    refused(plan(ws, {"TRITON_CUPTI_LIB_PATH": str(ws["secret"])}), "TRITON_CUPTI_LIB_PATH",
            "a text file, not a directory")


@pytest.mark.parametrize("cuda_h", ["link", "dotdot", "nested"])
def test_headers_may_not_lead_out_of_their_dir(ws, tmp_path: Path, cuda_h: str) -> None:
    inc = tmp_path / "include"
    (inc / "crt").mkdir(parents=True)
    (inc / "crt" / "host_defines.h").write_text("#pragma once\n")
    if cuda_h == "link":
        (inc / "cuda.h").symlink_to(ws["secret"])
    elif cuda_h == "dotdot":
        (inc / "cuda.h").write_text('#include "../secret.h"\n')
        (tmp_path / "secret.h").write_text(SECRET)
    else:
        (inc / "cuda.h").write_text('#include "crt/host_defines.h"\n#include "crt/up.h"\n')
        (inc / "crt" / "up.h").write_text('#include "../../secret.h"\n')
        (tmp_path / "secret.h").write_text(SECRET)
    err = refused(plan(ws, {"TRITON_CUDART_PATH": str(inc)}), "TRITON_CUDART_PATH", "leads out of")
    assert str(inc) in err


def test_a_header_closure_takes_no_file_not_named_like_a_header(ws, tmp_path: Path) -> None:
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "cuda.h").write_text('#include "key.pem"\n')
    (inc / "key.pem").write_text(SECRET)
    refused(plan(ws, {"TRITON_CUDART_PATH": str(inc)}), "TRITON_CUDART_PATH", str(inc / "key.pem"),
            "a file not named like a header")


def test_headers_inside_their_dir_are_taken(ws, tmp_path: Path) -> None:
    inc = tmp_path / "include"
    (inc / "crt").mkdir(parents=True)
    (inc / "cuda.h").write_text('#include "crt/host_defines.h"\n#include <cuda/std/version>\n')
    (inc / "crt" / "host_defines.h").write_text("#pragma once\n")
    (inc / "cuda" / "std").mkdir(parents=True)
    (inc / "cuda" / "std" / "version").write_text("#pragma once\n")  # libcu++'s headers have no suffix
    data = one_of(plan(ws, {"TRITON_CUDART_PATH": str(inc)}, "--json", check=True).stdout, "plans")
    part = next(p for p in data["nvidia"] if p["name"] == "cuda-headers")
    assert sorted(f for _, f in part["files"]) == ["crt/host_defines.h", "cuda.h", "cuda/std/version"]


REMOTE_SECRET = "PASSW0RD"


def test_a_ccache_remote_password_is_in_no_output_or_file(ws) -> None:
    remote = f"redis://user:{REMOTE_SECRET}@127.0.0.1:9"
    env = {"TRITONBUILD_CCACHE_REMOTE": remote, "TRITON_BUILD_WITH_CCACHE": "1", "TRITON_PTXAS_PATH": str(ws["ptxas"]),
           **WHEEL_ONLY}
    shown = [plan(ws, env, "--json", check=True), plan(ws, env, "--settings", check=True)]
    assert "redis://user:***@127.0.0.1:9" in shown[0].stdout and "redis://user:***@127.0.0.1:9" in shown[1].stdout
    out = ws["base"] / "out-remote"
    built = run_cli("build", "--json", "--source", str(ws["tree"]), "--llvm", str(LLVM), "--offline", "--cache-dir",
                    str(ws["base"] / "cache"), "--out", str(out), cwd=ws["base"], env=env)
    for proc in [*shown, built]:
        assert REMOTE_SECRET not in proc.stdout + proc.stderr
    result = one_of(built.stdout, "wheels")
    build_dir = Path(result["build_dir"])
    written = [*out.iterdir(), build_dir / "plan.json"]
    for path in written:
        assert REMOTE_SECRET.encode() not in path.read_bytes(), path
    manifest = json.loads(next(out.glob("*.manifest.json")).read_text())
    assert manifest["plan"]["settings"]["ccache_remote"]["value"] == "redis://user:***@127.0.0.1:9"
    wheel = next(out.glob("*.whl"))
    with zipfile.ZipFile(wheel) as zf:  # the real executable went in, byte for byte
        assert zf.read("triton/backends/nvidia/bin/ptxas") == ws["ptxas"].read_bytes()


def llvm_source_plan(ws: dict[str, Path], src: str, *extra: str):
    return run_cli("plan", "--source", str(ws["tree"]), "--llvm", "source", "--llvm-src", src, "--cache-dir",
                   str(ws["base"] / "cache-llvm-src"), *extra, cwd=ws["base"], check=False)


@pytest.mark.parametrize(("src", "extra", "words"), [
    ("ext::sh -c touch% /tmp/x", (), ("git remote helper",)),
    ("http://127.0.0.1:9/x y", (), ("whitespace",)),
    ("/nonexistent", (), ("neither a local directory nor a git URL",)),
    ("http://127.0.0.1:9/llvm.git", ("--offline",), ("Offline", "not a local directory")),
    ("setup.py-of-the-tree", (), ("is a file, not a directory",)),
])
def test_plan_refuses_an_llvm_source_the_build_would_refuse(ws, src: str, extra: tuple[str, ...],
                                                            words: tuple[str, ...]) -> None:
    src = str(ws["tree"] / "setup.py") if src == "setup.py-of-the-tree" else src
    refused(llvm_source_plan(ws, src, *extra), "--llvm-src", *words)


def test_plan_takes_an_llvm_source_the_build_takes(ws) -> None:
    assert llvm_source_plan(ws, "https://127.0.0.1:9/llvm-project.git").returncode == 0  # cloned when it builds
    assert llvm_source_plan(ws, str(ws["base"]), "--offline").returncode == 0  # a local dir: fine offline
    proc = run_cli("plan", "--source", str(ws["tree"]), "--llvm", "source", "--offline", "--cache-dir",
                   str(ws["base"] / "cache-llvm-src"), cwd=ws["base"], check=False)
    refused(proc, "Offline", "upstream llvm-project")  # no --llvm-src offline: the upstream clone cannot be made


def test_an_llvm_source_refusal_shows_no_password(ws) -> None:
    proc = llvm_source_plan(ws, f"https://u:{REMOTE_SECRET}@127.0.0.1:9/llvm.git", "--offline")
    err = refused(proc, "Offline", "https://u:***@127.0.0.1:9/llvm.git")
    assert REMOTE_SECRET not in err


def test_a_cupti_lib_dir_without_cupti_is_said_not_bundled_silently(ws) -> None:
    # a reviewer's finding: TRITON_CUPTI_LIB_PATH=/etc planned "cupti-libs: files from ..." and nothing else
    empty = ws["base"] / "no-cupti"
    empty.mkdir(exist_ok=True)
    (empty / "README").write_text("not a library\n")
    proc = plan(ws, {"TRITON_CUPTI_LIB_PATH": str(empty)}, check=True)
    out = flat(proc.stdout + proc.stderr)
    assert f"env TRITON_CUPTI_LIB_PATH names {empty}, which holds no CUPTI library" in out, out
    assert "cupti-libs:" not in out
