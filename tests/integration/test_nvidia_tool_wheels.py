"""cuobjdump and nvdisasm from NVIDIA's wheels (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) when the host has
none: the version the plan picks, --cuda-tools-from auto/host/pypi, offline from a wheelhouse, offline with
nothing, hostile wheelhouse wheels. A real HTTP index on 127.0.0.1 serves wheels holding a real ELF executable
(a copy of /bin/true); the bundled ptxas is a real program that says its version like ptxas does."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import stat
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import plan_for, serve
from tests.integration.conftest import plan_json, run_cli
from tritonbuild import example

ARCH = platform.machine()
TRUE = Path("/bin/true").read_bytes()
PROJECTS = {"cuobjdump": "nvidia-cuda-cuobjdump", "nvdisasm": "nvidia-cuda-nvdisasm"}


def tool_wheel(dest: Path, tool: str, version: str, extra: dict[str, zipfile.ZipInfo | None] | None = None) -> Path:
    """NVIDIA's wheel of ``tool`` as it is shaped: one file, nvidia/cu<major>/bin/<tool>, executable."""
    project = PROJECTS[tool].replace("-", "_")
    path = dest / f"{project}-{version}-py3-none-manylinux2014_{ARCH}.manylinux_2_17_{ARCH}.whl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo(f"nvidia/cu{version.split('.')[0]}/bin/{tool}")
        info.external_attr = (stat.S_IFREG | 0o755) << 16
        zf.writestr(info, TRUE)
        for member in (extra or {}).values():
            if member is not None:
                zf.writestr(member, b"../../../../tmp/pwned")
        zf.writestr(f"{project}-{version}.dist-info/METADATA", f"Name: {PROJECTS[tool]}\nVersion: {version}\n")
    return path


def make_index(root: Path, versions: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """A PEP 503 index of the tools' wheels at ``versions``; returns each wheel file's sha256 by name."""
    digests = {}
    for tool, vs in versions.items():
        links = []
        for v in vs:
            wheel = tool_wheel(root / "files", tool, v)
            digests[wheel.name] = hashlib.sha256(wheel.read_bytes()).hexdigest()
            links.append(f'<a href="../../files/{wheel.name}#sha256={digests[wheel.name]}">{wheel.name}</a>')
        page = root / "simple" / PROJECTS[tool] / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"<html><body>{''.join(links)}</body></html>\n")
    return digests


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "index"
    root.mkdir()
    with serve(root) as url:
        yield root, url


def fake_ptxas(dest: Path, version: str) -> Path:
    """A real ELF executable that answers --version as ptxas does (``Cuda compilation tools, ..., V13.0.88``)."""
    src = dest.with_suffix(".c")
    dest.parent.mkdir(parents=True, exist_ok=True)
    src.write_text('#include <stdio.h>\nint main(void) { puts("ptxas: NVIDIA (R) Ptx optimizing assembler\\n'
                   f'Cuda compilation tools, release {version.rsplit(".", 1)[0]}, V{version}"); return 0; }}\n')
    subprocess.run(["gcc", "-o", str(dest), str(src)], check=True)
    return dest


def fake_tool(dest: Path, tool: str) -> Path:
    """A real ELF executable that answers --version as NVIDIA's cuobjdump/nvdisasm do."""
    src = dest.with_suffix(".c")
    dest.parent.mkdir(parents=True, exist_ok=True)
    src.write_text(f'#include <stdio.h>\nint main(void) {{ puts("{tool}: NVIDIA (R) CUDA tool\\n'
                   'Cuda compilation tools, release 13.0, V13.0.85"); return 0; }\n')
    subprocess.run(["gcc", "-o", str(dest), str(src)], check=True)
    src.unlink()
    return dest


def cuda(tmp_path: Path, *tools: str) -> Path:
    """A CUDA toolkit's shape (headers, CUPTI) whose bin/ holds ``tools`` (real ELF executables that say they are
    NVIDIA's)."""
    root = example.write_cuda_stub(tmp_path / "cuda")
    for tool in tools:
        fake_tool(root / "bin" / tool, tool)
    return root


def setup(tmp_path: Path, url: str, *, ptxas: str | None = "13.0.88", host_tools: tuple[str, ...] = ()
          ) -> tuple[list[str], dict[str, str]]:
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    env = {"CUDA_HOME": str(cuda(tmp_path, *host_tools)), "TRITONBUILD_PYPI_INDEX": url, "PATH": "/usr/bin:/bin",
           "CCACHE_DIR": str(tmp_path / "ccache")}
    if ptxas:
        env["TRITON_PTXAS_PATH"] = str(fake_ptxas(tmp_path / "bin" / "ptxas", ptxas))
    return ["--source", str(tree), "--cache-dir", str(tmp_path / "cache")], env


def tools_of(plan: dict) -> dict[str, str]:
    text = dict(plan["cmake"]["defines"]).get("TRITONBUILD_NVIDIA_TOOLS", "")
    return dict(entry.split("=", 1) for entry in text.split(";") if entry)


def entry(tmp_path: Path, tool: str, version: str) -> str:
    major = version.split(".")[0]
    return str(tmp_path / "cache" / "nvidia" / f"{PROJECTS[tool]}-{version}" / "nvidia" / f"cu{major}" / "bin" / tool)


@pytest.mark.parametrize(("ptxas", "offered", "picked", "why"), [
    ("13.0.88", ("13.1.80", "13.2.51"), "13.1.80", "the tree's pin"),
    ("13.0.88", ("13.0.20", "13.3.29", "13.2.51"), "13.2.51", "lowest available version >= ptxas 13.0.88"),
    ("13.9.1", ("13.2.51", "13.3.29", "14.0.1"), "13.3.29", "the newest of CUDA 13"),
])
def test_the_plan_picks_the_version_by_the_bundled_ptxas(index: tuple[Path, str], tmp_path: Path, ptxas: str,
                                                         offered: tuple[str, ...], picked: str, why: str) -> None:
    root, url = index
    make_index(root, {"cuobjdump": offered, "nvdisasm": offered})
    args, env = setup(tmp_path, url, ptxas=ptxas)
    plan = plan_json(*args, cwd=tmp_path, env=env)
    assert tools_of(plan)["cuobjdump"] == entry(tmp_path, "cuobjdump", picked)
    assert tools_of(plan)["nvdisasm"] == entry(tmp_path, "nvdisasm", picked)
    parts = {p["name"]: p for p in plan["nvidia"]}
    assert parts["cuobjdump"]["wheels"] == [f"nvidia-cuda-cuobjdump=={picked}"]
    note = next(n for n in plan["notes"] if n.startswith("nvidia: cuobjdump "))
    assert why in note and "what the bundled ptxas says it is" in note and "downloaded when the build runs" in note


def test_without_a_ptxas_the_trees_ptxas_pin_stands_in(index: tuple[Path, str], tmp_path: Path) -> None:
    root, url = index
    make_index(root, {"cuobjdump": ("13.2.51", "13.3.29"), "nvdisasm": ("13.2.51",)})
    args, env = setup(tmp_path, url, ptxas=None)
    pins = tmp_path / "triton" / "cmake" / "nvidia-toolchain-version.json"
    pins.write_text(json.dumps({**json.loads(pins.read_text()), "ptxas": "13.3.0"}))
    plan = plan_json(*args, cwd=tmp_path, env=env)
    assert tools_of(plan) == {"cuobjdump": entry(tmp_path, "cuobjdump", "13.3.29"),
                              "nvdisasm": entry(tmp_path, "nvdisasm", "13.2.51")}
    assert any("the tree's ptxas pin" in n and n.startswith("nvidia: nvdisasm 13.2.51") for n in plan["notes"])
    # the tree's own CUDA 12 ptxas pin: no wheel of CUDA 12 exists, so nothing is looked up, and the note says so
    pins.write_text(json.dumps({**json.loads(pins.read_text()), "ptxas": "12.9.86"}))
    old = plan_json(*args, cwd=tmp_path, env={**env, "TRITONBUILD_PYPI_INDEX": "http://127.0.0.1:1/simple"})
    assert "cuobjdump" not in tools_of(old)
    note = next(n for n in old["warnings"] if "carries no cuobjdump or nvdisasm" in n)
    assert "NVIDIA publishes these wheels from CUDA 13 on" in note and "127.0.0.1:1" not in note


def test_auto_takes_the_hosts_tools_pypi_the_wheels_and_a_variable_wins(index: tuple[Path, str],
                                                                          tmp_path: Path) -> None:
    root, url = index
    make_index(root, {"cuobjdump": ("13.2.51",), "nvdisasm": ("13.2.51",)})
    args, env = setup(tmp_path, url, host_tools=("cuobjdump", "nvdisasm"))
    host_bin = Path(env["CUDA_HOME"]) / "bin"
    auto = plan_json(*args, cwd=tmp_path, env=env)
    assert tools_of(auto)["cuobjdump"] == str(host_bin / "cuobjdump")
    assert not any(p["dest"] == "bin" for p in auto["nvidia"])
    pypi = plan_json(*args, "--cuda-tools-from", "pypi", cwd=tmp_path, env=env)
    assert tools_of(pypi)["cuobjdump"] == entry(tmp_path, "cuobjdump", "13.2.51")
    assert tools_of(pypi)["nvdisasm"] == entry(tmp_path, "nvdisasm", "13.2.51")
    assert pypi["settings"]["cuda_tools_from"] == {"value": "pypi", "origin": "cli --cuda-tools-from"}
    mine = plan_json(*args, cwd=tmp_path, env={**env, "TRITONBUILD_CUDA_TOOLS_FROM": "pypi",
                                               "TRITON_NVDISASM_PATH": str(host_bin / "nvdisasm")})
    assert tools_of(mine)["nvdisasm"] == str(host_bin / "nvdisasm")  # what the user set wins over pypi
    assert tools_of(mine)["cuobjdump"] == entry(tmp_path, "cuobjdump", "13.2.51")
    assert len({mine["key"], pypi["key"], auto["key"]}) == 3  # each bundles other files: its own build dir


def test_host_never_asks_the_index(tmp_path: Path) -> None:
    args, env = setup(tmp_path, "http://127.0.0.1:1/simple")  # nothing listens there
    plan = plan_json(*args, "--cuda-tools-from", "host", cwd=tmp_path, env=env)
    assert set(tools_of(plan)) == {"ptxas"}
    assert not any("cuobjdump" in n for n in plan["notes"])
    warning = next(w for w in plan["warnings"] if "carries no cuobjdump or nvdisasm" in w)  # said loudly (#38)
    assert "--cuda-tools-from host" in warning and "TRITON_CUOBJDUMP_PATH" in warning
    auto = plan_json(*args, cwd=tmp_path, env=env)  # auto asks it, cannot read it: a warning, the plan stands
    note = next(n for n in auto["warnings"] if "carries no cuobjdump or nvdisasm" in n)
    assert "could not be read" in note and "pip download --no-deps nvidia-cuda-cuobjdump==X" in note


def one_paragraph(stderr: str) -> str:
    text = stderr.strip()
    assert "Traceback" not in text and "\n\n" not in text, text
    return " ".join(text.split())


def test_offline_with_nothing_pypi_refuses_and_auto_warns(tmp_path: Path) -> None:
    args, env = setup(tmp_path, "http://127.0.0.1:1/simple")
    proc = run_cli("plan", *args, "--offline", "--cuda-tools-from", "pypi", cwd=tmp_path, env=env, check=False)
    assert proc.returncode == 2
    text = one_paragraph(proc.stderr)
    assert "cuobjdump and nvdisasm are wanted from NVIDIA's wheels" in text and "no CUDA 13 version" in text
    assert "--wheelhouse DIR" in text and "pip download --no-deps nvidia-cuda-cuobjdump==X" in text
    assert not (tmp_path / "cache" / "build").exists()
    plan = plan_json(*args, "--offline", cwd=tmp_path, env=env)
    note = next(n for n in plan["warnings"] if "carries no cuobjdump or nvdisasm" in n)
    assert "SASS disassembly" in note and "index" not in note.split("Triton's SASS")[0]
    assert set(tools_of(plan)) == {"ptxas"}


def test_an_index_without_a_usable_version_refuses_pypi_and_warns_auto(index: tuple[Path, str],
                                                                      tmp_path: Path) -> None:
    root, url = index
    make_index(root, {"cuobjdump": ("14.0.1",), "nvdisasm": ("14.0.1",)})
    args, env = setup(tmp_path, url)
    proc = run_cli("plan", *args, "--cuda-tools-from", "pypi", cwd=tmp_path, env=env, check=False)
    assert proc.returncode == 2 and "no CUDA 13 version is available for ptxas 13.0.88" in one_paragraph(proc.stderr)
    plan = plan_json(*args, cwd=tmp_path, env=env)
    assert any("carries no cuobjdump or nvdisasm" in n and url in n for n in plan["warnings"])


def test_offline_from_a_wheelhouse_stages_the_tool_where_cmake_installs_it_from(tmp_path: Path) -> None:
    from tritonbuild.gather.collect import nvidia_settings
    from tritonbuild.nvidia import discover
    from tritonbuild.nvidia.stage import stage
    from tritonbuild.settings.model import Settings, resolve_settings

    house = tmp_path / "wheelhouse"
    for tool in PROJECTS:
        tool_wheel(house, tool, "13.2.51")
        tool_wheel(house, tool, "12.9.1")  # no CUDA 12 wheel exists; one named so is not taken
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    env = {"CUDA_HOME": str(cuda(tmp_path)), "PATH": "/usr/bin:/bin",
           "TRITON_PTXAS_PATH": str(fake_ptxas(tmp_path / "bin" / "ptxas", "13.0.88"))}
    cli = {"offline": True, "wheelhouse": str(house), "cuda_tools_from": "pypi"}

    def plan():  # type: ignore[no-untyped-def]
        s = Settings.of(resolve_settings(cli, env))
        lookup = discover.ToolLookup("pypi", "http://127.0.0.1:1/simple", house, True, ARCH)
        nv = discover.gather(tree, nvidia_settings(s), env, tmp_path / "cache", lookup=lookup)
        return plan_for(tree, cli, env, nvidia=nv)

    first = plan()
    tools = dict(e.split("=", 1) for e in (first.cmake.define("TRITONBUILD_NVIDIA_TOOLS") or "").split(";"))
    assert tools["cuobjdump"] == entry(tmp_path, "cuobjdump", "13.2.51")
    assert any("unpacked from the --wheelhouse file when the build runs" in n for n in first.notes)
    assert not Path(tools["cuobjdump"]).exists()
    counts = stage(first, log=lambda m: None)
    assert counts["cuobjdump"] == 1 and counts["nvdisasm"] == 1
    for tool in PROJECTS:
        path = Path(tools[tool])
        assert path.read_bytes() == TRUE and os.access(path, os.X_OK)  # what CMake's install(PROGRAMS) copies
        marker = json.loads((path.parents[3] / ".complete").read_text())
        assert marker["wheelhouse"].startswith(str(house)) and len(marker["sha256"]) == 64
        assert subprocess.run([str(path)], check=False).returncode == 0
    assert not (Path(first.cmake.build_dir) / "tritonbuild-nvidia" / "bin").exists()  # installed by the define
    again = plan()  # unpacked now: the same build dir and defines, nothing left to fetch (a no-op rebuild)
    assert again.key == first.key and dict(again.cmake.defines) == dict(first.cmake.defines)
    assert all(not p.wheels for p in again.nvidia if p.dest == "bin")


def _member(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    return info


@pytest.mark.parametrize(("member", "problem"), [
    (_member("nvidia/cu13/bin/../../../../escape", stat.S_IFREG | 0o644), "contains '..'"),
    (_member("nvidia/cu13/bin/link", stat.S_IFLNK | 0o777), "is a symlink"),
])
def test_a_hostile_wheelhouse_wheel_is_refused_before_anything_is_unpacked(tmp_path: Path, member: zipfile.ZipInfo,
                                                                          problem: str) -> None:
    house = tmp_path / "wheelhouse"
    bad = tool_wheel(house, "cuobjdump", "13.2.51", {"bad": member})
    tool_wheel(house, "nvdisasm", "13.2.51")
    args, env = setup(tmp_path, "http://127.0.0.1:1/simple")
    proc = run_cli("plan", *args, "--offline", "--wheelhouse", str(house), cwd=tmp_path, env=env, check=False)
    assert proc.returncode == 2
    text = one_paragraph(proc.stderr)
    assert f"Refusing to unpack the wheel {bad}" in text and problem in text
    assert not (tmp_path / "cache" / "nvidia").exists() and not (tmp_path / "escape").exists()
    assert bad.is_file()  # nothing lost: the user's file stays where it was
