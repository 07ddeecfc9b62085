"""Issue 38: the wheel's CycloneDX SBOM as the pure builder makes it from a plan and facts, and verify's ``sbom``
check on wheels made here (valid, tampered, hostile)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.helpers import DIST, make_wheel, plan_for
from tritonbuild.gather.packages import DebPackage
from tritonbuild.plan import PatchInfo
from tritonbuild.resolve.source import GitState
from tritonbuild.wheel.checks import registry
from tritonbuild.wheel.checks.sbom import Sbom
from tritonbuild.wheel.sbom import Facts, Tool, WheelFile, sbom_json

H = "2eb709b95d8f521aa15401e159fac0729d56a677"
EPOCH = 1767225600
ELF = b"\x7fELF\x02\x01\x01" + bytes(57) + b"a tiny stand-in for an ELF file"
LLVM_DEV = DebPackage("llvm-22-dev", "1:22.1.8-1~deb12u1", "amd64")
ZSTD = DebPackage("libzstd1", "1.5.4+dfsg2-5", "amd64")


def facts(files: dict[str, bytes]) -> Facts:
    return Facts(
        files=tuple(WheelFile(p, hashlib.sha256(d).hexdigest(), *(("/usr/lib/x86_64-linux-gnu/libzstd.so.1.5.4",
                                                                  ZSTD) if "zstd" in p else ()))
                    for p, d in sorted(files.items()) if d[:4] == b"\x7fELF"),
        llvm_packages=(LLVM_DEV,), binding_version="2.13.6",
        compilers=(Tool("clang-22", "/usr/bin/clang-22", "Debian clang version 22.1.8 (++20260101+1.2.3-1~exp1)"),
                   Tool("g++", "/usr/bin/g++", "g++ (Debian 12.2.0-14+deb12u1) 12.2.0")),
        nvidia_tools=(Tool("ptxas", "/opt/cuda/bin/ptxas", None, DebPackage("cuda-nvcc-12-8", "12.8.93-1", "amd64")),),
        repository="https://github.com/triton-lang/triton.git", licence="MIT")


def git_plan(root: Path, **cli: Any) -> Any:
    return plan_for(root, cli, git=GitState(commit=H, dirty=False, branch="main", commit_time=EPOCH))


def comps(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["bom-ref"]: c for c in doc["components"]}


def test_the_sbom_validates_and_names_what_the_wheel_is_made_of(tree) -> None:
    plan = git_plan(tree())
    files = {"triton/_C/libtriton.so": ELF, "triton/_C/libzstd.so.1": ELF + b"z"}
    text = sbom_json(plan, facts(files))
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    doc = json.loads(text)
    c = comps(doc)
    assert c["source"]["version"] == H and c["source"]["purl"] == f"pkg:github/triton-lang/triton@{H}"
    assert c["source"]["externalReferences"] == [{"type": "vcs", "url": "https://github.com/triton-lang/triton.git"}]
    assert {"backend:nvidia", "backend:amd"} <= set(c) and c["backend:nvidia"]["version"] == H
    assert c["deb:llvm-22-dev"]["purl"] == "pkg:deb/debian/llvm-22-dev@1:22.1.8-1~deb12u1?arch=amd64"
    assert c["binding"]["purl"] == "pkg:pypi/pybind11@2.13.6"
    assert c["compiler:g++"]["version"] == "12.2.0" and c["compiler:g++"]["group"] == "compiler"
    assert c["compiler:clang-22"]["version"] == "22.1.8"
    assert c["nvidia-tool:ptxas"]["version"] == "12.8.93-1"  # from its package: a bundled tool is never run
    assert c["nvidia-tool:ptxas"]["purl"] == "pkg:deb/debian/cuda-nvcc-12-8@12.8.93-1?arch=amd64"
    zstd = c["file:triton/_C/libzstd.so.1"]
    assert zstd["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(ELF + b"z").hexdigest()}]
    assert zstd["purl"].startswith("pkg:deb/debian/libzstd1@")
    assert doc["metadata"]["timestamp"] == "2026-01-01T00:00:00+00:00"  # the commit's time, not the clock
    wheel = doc["metadata"]["component"]
    assert wheel["purl"] == f"pkg:pypi/{plan.wheel.name}@{plan.wheel.version.replace('+', '%2B')}"  # purl's escape
    assert wheel["licenses"] == c["source"]["licenses"] == [{"expression": "MIT"}]


def test_the_same_facts_give_the_same_bytes_and_the_serial_follows_the_content(tree) -> None:
    plan = git_plan(tree())
    files = {"triton/_C/libtriton.so": ELF}
    one, two = sbom_json(plan, facts(files)), sbom_json(plan, facts(files))
    assert one == two
    other = json.loads(sbom_json(plan, facts({"triton/_C/libtriton.so": ELF + b"x"})))
    assert json.loads(one)["serialNumber"] != other["serialNumber"]
    assert not json.loads(one)["serialNumber"].startswith("urn:uuid:00000000")


def test_no_time_without_a_commit_or_epoch(tree) -> None:
    doc = json.loads(sbom_json(plan_for(tree()), facts({})))
    assert "timestamp" not in doc["metadata"]


def test_reproducible_mode_names_no_directory_of_the_build_machine(tree, plugin) -> None:
    root = tree()
    plug = plugin("triton-shared", "triton_shared")
    plan = git_plan(root, reproducible=True, plugin_dirs=(str(plug),))
    plan = replace(plan, source=replace(plan.source, patches=(PatchInfo(str(root.parent / "fix.patch"), "ab" * 32,
                                                                        ("lib/Core.cpp",)),)))
    f = replace(facts({"triton/_C/libzstd.so.1": ELF}), compilers=(Tool("g++", str(root.parent / "bin/g++"), None),))
    text = sbom_json(plan, f)
    assert str(root.parent) not in text and "/opt/cuda" not in text and "/usr/lib/x86_64-linux-gnu" not in text
    c = comps(json.loads(text))
    props = {p["name"]: p["value"] for p in c["backend:triton_shared"]["properties"]}
    assert props["tritonbuild:path"] == "<plugin:triton_shared>" and props["tritonbuild:origin"] == "plugin"
    source = {p["name"]: p["value"] for p in c["source"]["properties"]}
    assert source["tritonbuild:root"] == "<source>" and source["tritonbuild:patch-1"] == f"fix.patch sha256:{'ab' * 32}"


# verify's check, on wheels made here

def sbom_wheel(path: Path, files: dict[str, bytes], sbom: bytes | None) -> Path:
    members = dict(files)
    if sbom is not None:
        members[f"{DIST}/sboms/tritonbuild.cdx.json"] = sbom
    return make_wheel(path, members)


def run_check(wheel: Path, tmp: Path) -> list[Any]:
    with zipfile.ZipFile(wheel) as zf:
        return Sbom().run(registry.context(wheel, zf, tmp))


FILES = {"triton/_C/libtriton.so": ELF, "triton/backends/nvidia/bin/ptxas": ELF + b"p", "triton/__init__.py": b"x"}


def test_a_wheel_whose_sbom_accounts_for_its_elf_files_passes(tree, tmp_path: Path) -> None:
    text = sbom_json(git_plan(tree()), facts(FILES))
    [found] = run_check(sbom_wheel(tmp_path / "ok.whl", FILES, text.encode()), tmp_path)
    assert found.status == "ok" and "2 ELF files listed" in found.text, found


def test_a_wheel_without_an_sbom_is_a_note(tmp_path: Path) -> None:
    [found] = run_check(sbom_wheel(tmp_path / "none.whl", FILES, None), tmp_path)
    assert found.status == "note" and "no SBOM" in found.text


@pytest.mark.parametrize(("files", "said"), [
    ({**FILES, "triton/_C/libextra.so": ELF + b"e"}, "triton/_C/libextra.so is an ELF file of the wheel the SBOM "
                                                     "does not list"),
    ({k: v for k, v in FILES.items() if "ptxas" not in k}, "triton/backends/nvidia/bin/ptxas is listed in the SBOM "
                                                           "but missing from the wheel"),
    ({**FILES, "triton/_C/libtriton.so": ELF + b"changed"}, "triton/_C/libtriton.so does not match its SHA-256"),
], ids=["elf-not-listed", "listed-but-missing", "hash-differs"])
def test_an_sbom_that_does_not_account_for_the_wheel_fails(tree, tmp_path: Path, files: dict[str, bytes],
                                                           said: str) -> None:
    text = sbom_json(git_plan(tree()), facts(FILES))
    [found] = run_check(sbom_wheel(tmp_path / "bad.whl", files, text.encode()), tmp_path)
    assert found.status == "fail" and said in found.text and "\n" not in found.text, found


@pytest.mark.parametrize(("data", "said"), [
    (b"{not json", "is not JSON"),
    (b"\xff\xfe", "is not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
    (b'{"bomFormat": "SPDX"}', "is not a CycloneDX document"),
    (b'{"bomFormat": "CycloneDX", "specVersion": "9.9"}', "says specVersion 9.9"),
    (b'{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": "none"}', "does not validate against CycloneDX"),
], ids=["not-json", "not-utf8", "deep", "not-cyclonedx", "unknown-version", "schema"])
def test_a_malformed_sbom_is_one_fail_row(tmp_path: Path, data: bytes, said: str) -> None:
    [found] = run_check(sbom_wheel(tmp_path / "bad.whl", FILES, data), tmp_path)
    assert found.status == "fail" and said in found.text and "\n" not in found.text, found


def test_verify_runs_the_check_after_record(tmp_path: Path) -> None:
    names = [c.name for c in registry.checks("verify")]
    assert names.index("sbom") > names.index("RECORD") and "sbom" not in [c.name for c in registry.checks("build")]


def test_build_info_names_a_plugin_beside_the_source_by_its_name_not_as_part_of_the_source(
        tree, plugin, monkeypatch: pytest.MonkeyPatch) -> None:
    # the SBOM's bug, found again in _build_info.json: ../triton-shared starts with the source's root "…/triton"
    from tritonbuild.wheel import provenance as build_info
    from tritonbuild.wheel.provenance import provenance

    monkeypatch.setattr(build_info, "tool_version", lambda *a, **k: "g++ 12")  # the edge asks the compiler

    root = tree()
    plug = plugin("triton-shared", "triton_shared")
    assert str(plug).startswith(str(root))  # the trap: a sibling whose name extends the source's
    info = provenance(git_plan(root, reproducible=True, plugin_dirs=(str(plug),)))
    assert {b["name"]: b["path"] for b in info["backends"]}["triton_shared"] == "<plugin:triton_shared>"
    assert info["source"]["root"] == "<source>"


def test_the_source_licence_is_read_from_its_license_file(tmp_path: Path) -> None:
    from tritonbuild.example import TREE
    from tritonbuild.gather.packages import source_licence

    assert source_licence(str(TREE)) == "MIT"  # the example tree's LICENSE, as Triton's own
    (tmp_path / "LICENSE").write_text("All rights reserved. Permission is hereby granted to nobody.\n")
    assert source_licence(str(tmp_path)) is None  # not a known text: nothing rather than a guess
    (tmp_path / "LICENSE").unlink()
    assert source_licence(str(tmp_path)) is None
    (tmp_path / "LICENSE").mkdir()
    assert source_licence(str(tmp_path)) is None
