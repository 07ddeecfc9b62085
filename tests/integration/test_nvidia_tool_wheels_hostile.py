"""Issue 38 (a hostile review's findings 4, 5, 9): NVIDIA's tool wheels are hostile input (METADATA checked against
the file name before unpacking, the tool judged before the cache entry is marked complete, an unsound cached entry
removed), a cuobjdump that is not NVIDIA's is refused, and a wheel lacking the tools is said loudly."""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from tests.helpers import nvidia_facts, plan_for, serve
from tests.integration.conftest import plan_json, run_cli
from tests.integration.test_nvidia_tool_wheels import ARCH, PROJECTS, TRUE, entry, setup, tool_wheel
from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.nvidia import discover, pypi
from tritonbuild.nvidia.choose import missing_tools
from tritonbuild.nvidia.parts import WheelRef
from tritonbuild.report.summary import print_summary
from tritonbuild.result import BuildResult
from tritonbuild.settings.model import Settings, resolve_settings
from tritonbuild.wheel.publish import manifest

REF = WheelRef("nvidia-cuda-cuobjdump", "13.2.51", "")


def one_paragraph(stderr: str) -> str:
    text = stderr.strip()
    assert "Traceback" not in text and "\n\n" not in text, text
    return " ".join(text.split())


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


def test_an_empty_wheelhouse_is_not_given(tmp_path: Path) -> None:
    assert Settings.of(resolve_settings({"wheelhouse": ""}, {})).wheelhouse is None
    args, env = setup(tmp_path, "http://127.0.0.1:1/simple")
    plan = plan_json(*args, "--offline", "--wheelhouse", "", cwd=tmp_path, env=env)
    warning = next(w for w in plan["warnings"] if "carries no cuobjdump or nvdisasm" in w)
    assert "the wheelhouse" not in warning and str(tmp_path) + " " not in warning


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
