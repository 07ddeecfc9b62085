"""cuobjdump and nvdisasm from NVIDIA's wheels (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm) when the host has
none: the version the plan picks, --cuda-tools-from auto/host/pypi, offline from a wheelhouse, offline with
nothing, hostile wheelhouse wheels. A real HTTP index on 127.0.0.1 serves wheels holding a real ELF executable
(a copy of /bin/true); the bundled ptxas is a real program that says its version like ptxas does."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import io
import json
import os
import platform
import shutil
import stat
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from tests.helpers import NVIDIA_TOOL_PROJECTS, WHEEL_ONLY, fake_ptxas, nvidia_facts, plan_for, serve, tool_wheel
from tests.integration.conftest import plan_json, run_cli
from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.nvidia import discover, pypi
from tritonbuild.report.summary import print_summary
from tritonbuild.reporter import silent
from tritonbuild.resolve.nvidia import missing_tools
from tritonbuild.resolve.nvidia_parts import WheelRef
from tritonbuild.result import BuildResult
from tritonbuild.settings.model import resolve_settings
from tritonbuild.wheel.publish import manifest

ARCH = platform.machine()
TRUE = Path("/bin/true").read_bytes()
PROJECTS = NVIDIA_TOOL_PROJECTS


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
           **WHEEL_ONLY}
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
    from tritonbuild.nvidia import discover
    from tritonbuild.nvidia.stage import stage
    from tritonbuild.settings.model import resolve_settings

    house = tmp_path / "wheelhouse"
    for tool in PROJECTS:
        tool_wheel(house, tool, "13.2.51")
        tool_wheel(house, tool, "12.9.1")  # no CUDA 12 wheel exists; one named so is not taken
    tree = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    env = {"CUDA_HOME": str(cuda(tmp_path)), "PATH": "/usr/bin:/bin",
           "TRITON_PTXAS_PATH": str(fake_ptxas(tmp_path / "bin" / "ptxas", "13.0.88"))}
    cli = {"offline": True, "wheelhouse": str(house), "cuda_tools_from": "pypi"}

    def plan():  # type: ignore[no-untyped-def]
        s = resolve_settings(cli, env)
        lookup = discover.ToolLookup("pypi", "http://127.0.0.1:1/simple", house, True, ARCH)
        nv = discover.gather(tree, s, env, tmp_path / "cache", lookup=lookup, log=silent)
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


# Issue 38 (a hostile review's findings 4, 5, 9): NVIDIA's tool wheels are hostile input (METADATA checked against
# the file name before unpacking, the tool judged before the cache entry is marked complete, an unsound cached entry
# removed), a cuobjdump that is not NVIDIA's is refused, and a wheel lacking the tools is said loudly.

REF = WheelRef("nvidia-cuda-cuobjdump", "13.2.51", "")


def provide(cache: Path, house: Path | None, *, offline: bool = True) -> Path:
    return pypi.provide(REF, cache, index="http://127.0.0.1:1/simple", machine=ARCH, offline=offline,
                        log=lambda m: None, wheelhouse=house)


def renamed(house: Path, src: Path, as_version: str) -> Path:
    """``src`` under the file name of cuobjdump's wheel at ``as_version`` (what the reviewer did)."""
    name = f"nvidia_cuda_cuobjdump-{as_version}-py3-none-manylinux2014_{ARCH}.manylinux_2_17_{ARCH}.whl"
    house.mkdir(parents=True, exist_ok=True)
    dest = house / name
    os.replace(src, dest)
    return dest


@pytest.mark.parametrize(("tool", "version", "claims"), [
    ("cuobjdump", "13.3.29", "'nvidia-cuda-cuobjdump' '13.3.29'"),  # another version renamed
    ("nvdisasm", "13.2.51", "'nvidia-cuda-nvdisasm' '13.2.51'"),  # another tool renamed
])
def test_a_renamed_wheel_is_refused_before_unpacking_and_a_good_one_then_works(
        tmp_path: Path, tool: str, version: str, claims: str) -> None:
    house, cache = tmp_path / "house", tmp_path / "cache"
    bad = renamed(house, tool_wheel(tmp_path / "src", tool, version), "13.2.51")
    with pytest.raises(UserError) as err:
        provide(cache, house)
    text = str(err.value)
    assert f"{bad.name} (from the wheelhouse {bad})" in text and "named as nvidia-cuda-cuobjdump 13.2.51" in text
    assert claims in text and "Nothing was unpacked" in text
    assert not (cache / "nvidia" / "nvidia-cuda-cuobjdump-13.2.51").exists() and bad.is_file()
    # the CLI: the plan refuses it before any work, one paragraph, exit 2
    tool_wheel(house, "nvdisasm", "13.2.51")
    args, env = setup(tmp_path, "http://127.0.0.1:1/simple")
    proc = run_cli("plan", *args, "--offline", "--wheelhouse", str(house), cwd=tmp_path, env=env, check=False)
    assert proc.returncode == 2 and f"(from the wheelhouse {bad})" in one_paragraph(proc.stderr)
    assert not (cache / "nvidia" / "nvidia-cuda-cuobjdump-13.2.51").exists()
    bad.unlink()
    good = tool_wheel(house, "cuobjdump", "13.2.51")
    dest = provide(cache, house)
    marker = json.loads((dest / ".complete").read_text())
    assert marker["origin"] == f"the wheelhouse {good}" and marker["version"] == "13.2.51"
    assert pypi.wheel_origin(str(dest / "nvidia/cu13/bin/cuobjdump"))["origin"] == f"the wheelhouse {good}"  # type: ignore[index]
    assert (dest / "nvidia/cu13/bin/cuobjdump").read_bytes() == TRUE


def _fake_tool_wheel(house: Path) -> Path:
    """cuobjdump's wheel, METADATA right, whose cuobjdump is a shell script."""
    path = tool_wheel(house, "cuobjdump", "13.2.51")
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            out.writestr(info, b"#!/bin/sh\necho pwned\n" if info.filename.endswith("/cuobjdump") else src.read(info))
    path.write_bytes(buf.getvalue())
    return path


def test_a_fake_tool_in_a_wheel_is_refused_and_leaves_no_cache_entry(tmp_path: Path) -> None:
    house, cache = tmp_path / "house", tmp_path / "cache"
    fake = _fake_tool_wheel(house)
    with pytest.raises(UserError) as err:
        provide(cache, house)
    text = str(err.value)
    assert f"(from the wheelhouse {fake})" in text and "a text file, not an ELF executable" in text
    assert "PyPI" not in text.split(":")[0]
    entries = cache / "nvidia"
    assert not (entries / "nvidia-cuda-cuobjdump-13.2.51").exists()
    assert not [p for p in entries.iterdir() if p.name.startswith(".nvidia-cuda-cuobjdump-13.2.51")]  # no staging


def _poisoned(cache: Path) -> Path:
    """A cache entry marked complete whose cuobjdump is a script (what an earlier tritonbuild left behind)."""
    dest = cache / "nvidia" / "nvidia-cuda-cuobjdump-13.2.51"
    tool = dest / "nvidia/cu13/bin/cuobjdump"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\necho pwned\n")
    tool.chmod(0o755)
    (dest / ".complete").write_text(json.dumps({"wheelhouse": "/x.whl", "sha256": "0" * 64}) + "\n")
    return dest


def test_an_unsound_cache_entry_is_not_offered_removed_and_provided_again(tmp_path: Path) -> None:
    cache, house = tmp_path / "cache", tmp_path / "house"
    dest = _poisoned(cache)
    lookup = discover.ToolLookup("auto", "http://127.0.0.1:1/simple", None, True, ARCH)
    offer = discover.tool_offer("cuobjdump", cache, lookup, lambda m: None)
    assert offer.cached == () and offer.problem and f"the cache entry {dest} is not sound" in offer.problem
    with pytest.raises(UserError) as err:  # offline, nothing to replace it with: refused, naming the dir to delete
        provide(cache, None)
    assert f"The cache entry {dest}" in str(err.value) and "delete that dir" in str(err.value)
    assert (dest / ".complete").is_file()  # kept for the user to look at
    tool_wheel(house, "cuobjdump", "13.2.51")
    assert provide(cache, house) == dest  # a good wheelhouse: removed and unpacked again
    assert (dest / "nvidia/cu13/bin/cuobjdump").read_bytes() == TRUE
    assert json.loads((dest / ".complete").read_text())["version"] == "13.2.51"
    assert discover.tool_offer("cuobjdump", cache, lookup, lambda m: None).cached == ("13.2.51",)


def test_bin_sh_is_refused_as_cuobjdump_at_plan_time(tmp_path: Path) -> None:
    args, env = setup(tmp_path, "http://127.0.0.1:1/simple")
    link = tmp_path / "shlink"
    link.symlink_to("/bin/sh")
    for var, path in (("TRITON_CUOBJDUMP_PATH", str(link)), ("TRITON_NVDISASM_PATH", "/bin/sh")):
        proc = run_cli("plan", *args, "--offline", cwd=tmp_path, env={**env, var: path}, check=False)
        assert proc.returncode == 2, proc.stdout
        text = one_paragraph(proc.stderr)
        tool = var.split("_")[1].lower()
        assert f"(from env {var}) is a program that is not NVIDIA's {tool}" in text and "--version" in text
        assert not (tmp_path / "cache" / "build").exists()


def test_host_without_the_tools_warns_and_the_manifest_lists_them(tmp_path: Path) -> None:
    root = example.write_tree(tmp_path / "triton", backends=("nvidia", "amd"))
    tools = (("ptxas", "/opt/cuda/bin/ptxas", "CUDA toolkit /opt/cuda"),)
    plan = plan_for(root, {"cuda_tools_from": "host"}, nvidia=nvidia_facts(root, "/usr/local/cuda/include", tools))
    warning = next(w for w in plan.warnings if "carries no cuobjdump or nvdisasm" in w)
    assert "--cuda-tools-from host" in warning and "SASS disassembly" in warning
    assert missing_tools(plan) == ("cuobjdump", "nvdisasm")
    result = BuildResult(wheel=tmp_path / "out" / "triton-3.6.0-cp311-cp311-linux_x86_64.whl", size=1,
                         sha256="0" * 64, seconds=1.0, timings={})
    assert manifest(plan, result)["missing_nvidia_tools"] == ["cuobjdump", "nvdisasm"]
    console = Console(record=True, width=200)
    print_summary(plan, result, console)
    assert "missing: cuobjdump, nvdisasm" in console.export_text()
    off = plan_for(root, {"cuda_tools_from": "host", "bundle_nvidia_tools": False},
                   nvidia=nvidia_facts(root, "/usr/local/cuda/include", tools))
    assert missing_tools(off) == () and manifest(off, result)["missing_nvidia_tools"] == []
    both = (*tools, ("cuobjdump", "/opt/cuda/bin/cuobjdump", "x"), ("nvdisasm", "/opt/cuda/bin/nvdisasm", "x"))
    full = plan_for(root, {"cuda_tools_from": "host"}, nvidia=nvidia_facts(root, "/usr/local/cuda/include", both))
    assert missing_tools(full) == () and not any("carries no" in w for w in full.warnings)


def test_an_empty_wheelhouse_is_refused_not_dropped() -> None:
    """It was taken as not given; now refused (#44), as an empty --source is: tests/unit/test_path_refusals.py."""
    with pytest.raises(UserError, match="is empty, which names no path"):
        resolve_settings({"wheelhouse": ""}, {})


def test_the_plan_takes_a_wheelhouse_wheel_whose_metadata_matches(tmp_path: Path) -> None:
    house = tmp_path / "house"
    for tool in PROJECTS:
        tool_wheel(house, tool, "13.2.51")
    args, env = setup(tmp_path, "http://127.0.0.1:1/simple")
    plan = plan_json(*args, "--offline", "--wheelhouse", str(house), cwd=tmp_path, env=env)
    assert not any("carries no" in w for w in plan["warnings"])
    tools = dict(e.split("=", 1) for e in dict(plan["cmake"]["defines"])["TRITONBUILD_NVIDIA_TOOLS"].split(";"))
    assert tools["cuobjdump"] == entry(tmp_path, "cuobjdump", "13.2.51")
    assert not (tmp_path / "cache" / "nvidia").exists()  # the plan unpacks nothing: the build does


def test_a_renamed_wheel_on_the_index_is_refused_naming_its_url(tmp_path: Path) -> None:
    root, cache = tmp_path / "index", tmp_path / "cache"
    bad = renamed(root / "files", tool_wheel(tmp_path / "src", "cuobjdump", "13.3.29"), "13.2.51")
    page = root / "simple" / "nvidia-cuda-cuobjdump" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<a href="../../files/{bad.name}#sha256={hashlib.sha256(bad.read_bytes()).hexdigest()}">'
                    f"{bad.name}</a>\n")
    with serve(root) as url, pytest.raises(UserError) as err:
        pypi.provide(REF, cache, index=url, machine=ARCH, offline=False, log=lambda m: None)
    text = str(err.value)
    assert f"{bad.name} (from {url.rsplit('/simple', 1)[0]}/files/{bad.name})" in text and "'13.3.29'" in text
    assert not (cache / "nvidia" / "nvidia-cuda-cuobjdump-13.2.51").exists()
    assert not any((cache / "nvidia" / ".downloads").iterdir())


@contextlib.contextmanager
def counting_index(root: Path, versions: dict[str, tuple[str, ...]]) -> Iterator[tuple[str, list[str]]]:
    """A real index on 127.0.0.1 of the tools' wheels at ``versions``, with the list of the pages asked."""
    asked: list[str] = []

    class Counting(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            asked.append(self.path)

    make_index(root, versions)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Counting, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple", asked
    finally:
        server.shutdown()
        server.server_close()


def pages(asked: list[str]) -> list[str]:
    return [p for p in asked if "/simple/" in p]


def unpack(tmp_path: Path, url: str, version: str, tools: tuple[str, ...] = ("cuobjdump", "nvdisasm")) -> None:
    for tool in tools:
        pypi.provide(WheelRef(PROJECTS[tool], version, ""), tmp_path / "cache", index=url, machine=ARCH,
                     offline=False, log=lambda m: None)


def test_a_plan_with_the_pinned_wheels_in_the_cache_asks_no_index(tmp_path: Path) -> None:
    # issue 45: every plan made two index lookups; with the tree's pin unpacked the choice is made without them
    versions = ("13.1.80", "13.2.51")
    with counting_index(tmp_path / "index", {"cuobjdump": versions, "nvdisasm": versions}) as (url, asked):
        args, env = setup(tmp_path, url)
        plan_json(*args, cwd=tmp_path, env=env)
        assert len(pages(asked)) == 2  # a cold cache: both tools' pages
        unpack(tmp_path, url, "13.1.80")
        asked.clear()
        plan = plan_json(*args, cwd=tmp_path, env=env)
        assert asked == []
        assert {t: tools_of(plan)[t] for t in ("cuobjdump", "nvdisasm")} == \
            {t: entry(tmp_path, t, "13.1.80") for t in ("cuobjdump", "nvdisasm")}
        shutil.rmtree(tmp_path / "cache" / "nvidia" / f"{PROJECTS['nvdisasm']}-13.1.80")  # the pin not at hand
        plan_json(*args, cwd=tmp_path, env=env)
        assert pages(asked) == [f"/simple/{PROJECTS['nvdisasm']}/"]


def test_without_the_pin_on_the_index_a_warm_plan_takes_the_kept_answer_and_asks_no_index(tmp_path: Path) -> None:
    # issue 45, the example tree's case: the pin 13.1.80 is not published, the choice is the lowest >= ptxas; every
    # no-op build read both pages again (0.13 s and a TLS context) though the chosen wheels were unpacked
    versions = ("13.0.20", "13.2.51", "13.3.29")
    with counting_index(tmp_path / "index", {"cuobjdump": versions, "nvdisasm": versions}) as (url, asked):
        args, env = setup(tmp_path, url)
        first = plan_json(*args, cwd=tmp_path, env=env)
        assert len(pages(asked)) == 2
        unpack(tmp_path, url, "13.2.51")
        asked.clear()
        warm = plan_json(*args, cwd=tmp_path, env=env)
        assert asked == []
        assert {t: tools_of(warm)[t] for t in ("cuobjdump", "nvdisasm")} == \
            {t: entry(tmp_path, t, "13.2.51") for t in ("cuobjdump", "nvdisasm")}
        assert warm["key"] == first["key"] and warm["fingerprint"] == first["fingerprint"]
        # a kept answer whose choice is not unpacked (a lower version >= ptxas listed since) reads the page again
        memo = tmp_path / "cache" / "nvidia" / f"{PROJECTS['nvdisasm']}.index.json"
        memo.write_text(json.dumps({**json.loads(memo.read_text()), "versions": ["13.1.0", "13.2.51"]}))
        plan_json(*args, cwd=tmp_path, env=env)
        assert pages(asked) == [f"/simple/{PROJECTS['nvdisasm']}/"]
        asked.clear()
        for bad in ("{", json.dumps({"index": url, "machine": ARCH, "versions": ["13.2.51"], "more": 1}),
                    json.dumps({"index": "http://elsewhere/simple", "machine": ARCH, "versions": ["13.2.51"]})):
            memo.write_text(bad)  # not an answer of this index: the page is read (and the answer kept again)
            plan_json(*args, cwd=tmp_path, env=env)
            assert pages(asked) == [f"/simple/{PROJECTS['nvdisasm']}/"], bad
            asked.clear()
