"""Issue 38: the CycloneDX SBOM inside every wheel, built from the example tree with real cmake, gcc and Debian's
LLVM 22, and verify's ``sbom`` check on it and on tampered copies."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.integration.conftest import flat, git_commit, run_cli
from tritonbuild import example

DATE = "2026-01-29T21:43:54+00:00"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("sbom")
    tree = example.write_tree(base / "src" / "triton")
    commit = git_commit(tree, env={"GIT_AUTHOR_DATE": DATE, "GIT_COMMITTER_DATE": DATE})
    core = tree / "lib" / "Core.cpp"
    core.write_text(core.read_text() + "\n// an edit not committed: the source is dirty\n")
    ptxas = base / "cuda" / "bin" / "ptxas"  # a small real ELF program stands in for CUDA's ptxas
    ptxas.parent.mkdir(parents=True)
    shutil.copy(shutil.which("true") or "/bin/true", ptxas)
    env = {"CCACHE_DIR": str(base / "ccache"), "TRITON_PTXAS_PATH": str(ptxas)}
    args = ["build", "--json", "--source", str(tree), "--backends", "nvidia;amd", "--cache-dir",
            str(base / "cache"), "--out", str(base / "dist")]
    result = json.loads(run_cli(*args, cwd=base, env=env).stdout)
    return {"base": base, "tree": tree, "commit": commit, "env": env, "args": args, "result": result,
            "wheel": Path(result["wheel"])}


def sbom_name(zf: zipfile.ZipFile) -> str:
    return next(n for n in zf.namelist() if n.endswith(".dist-info/sboms/tritonbuild.cdx.json"))


def read_sbom(wheel: Path) -> tuple[str, dict[str, Any]]:
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(sbom_name(zf)).decode()
    return text, json.loads(text)


def elf_members(wheel: Path) -> dict[str, str]:
    """Every ELF member of the wheel and its sha256, read here independently of tritonbuild."""
    with zipfile.ZipFile(wheel) as zf:
        return {i.filename: hashlib.sha256(zf.read(i)).hexdigest() for i in zf.infolist()
                if not i.is_dir() and zf.read(i)[:4] == b"\x7fELF"}


def by_ref(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["bom-ref"]: c for c in doc["components"]}


def props(comp: dict[str, Any]) -> dict[str, str]:
    return {p["name"].removeprefix("tritonbuild:"): p["value"] for p in comp.get("properties", [])}


def dpkg_version(package: str) -> str:
    return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True,
                          check=True).stdout


def test_the_wheel_carries_a_valid_sbom_listed_in_record(work: dict[str, Any]) -> None:
    text, doc = read_sbom(work["wheel"])
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.6"
    with zipfile.ZipFile(work["wheel"]) as zf:
        name = sbom_name(zf)
        record_name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        rows = {r[0]: r for r in csv.reader(io.StringIO(zf.read(record_name).decode())) if r}
    assert name.startswith("triton-3.6.0") and name.count("/") == 2
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    assert rows[name] == [name, f"sha256={digest}", str(len(text.encode()))]
    assert "urn:uuid:00000000" not in doc["serialNumber"]  # derived from the content, never the zero placeholder
    assert doc["metadata"]["timestamp"] == DATE  # the source's commit time, not the clock
    assert doc["metadata"]["component"]["name"] == "triton"


def test_the_sbom_names_source_backends_llvm_binding_and_compilers(work: dict[str, Any]) -> None:
    _, doc = read_sbom(work["wheel"])
    comps = by_ref(doc)
    assert comps["source"]["version"] == work["commit"] and props(comps["source"])["dirty"] == "true"
    for name in ("nvidia", "amd"):
        backend = comps[f"backend:{name}"]
        assert props(backend)["origin"] == "in-tree" and backend["version"] == work["commit"]
    llvm_dev = comps["deb:llvm-22-dev"]
    version = dpkg_version("llvm-22-dev")
    assert llvm_dev["version"] == version and llvm_dev["purl"].startswith(f"pkg:deb/debian/llvm-22-dev@{version}")
    assert llvm_dev["licenses"] == [{"expression": "Apache-2.0 WITH LLVM-exception"}]
    assert comps["llvm"]["version"].startswith("22.") and props(comps["llvm"])["origin"] == "distribution package"
    deps = {d["ref"]: d.get("dependsOn", []) for d in doc["dependencies"]}
    assert "deb:llvm-22-dev" in deps["llvm"]
    binding = comps["binding"]
    pybind11 = importlib.metadata.version("pybind11")
    assert binding["name"] == "pybind11" and binding["version"] == pybind11
    assert binding["purl"] == f"pkg:pypi/pybind11@{pybind11}"
    compilers = [c for c in doc["components"] if c.get("group") == "compiler"]
    plan = json.loads((Path(work["result"]["build_dir"]) / "plan.json").read_text())
    assert {c["name"] for c in compilers} == {Path(plan["toolchain"]["c_compiler"]).name,
                                             Path(plan["toolchain"]["cxx_compiler"]).name}
    assert all(c["version"] and props(c)["version-output"] for c in compilers)
    ptxas = comps["nvidia-tool:ptxas"]
    assert props(ptxas)["path"] == work["env"]["TRITON_PTXAS_PATH"]


def test_every_elf_file_of_the_wheel_is_a_component_with_its_sha256(work: dict[str, Any]) -> None:
    _, doc = read_sbom(work["wheel"])
    files = {c["name"]: c for c in doc["components"] if c["type"] == "file"}
    elves = elf_members(work["wheel"])
    assert {"triton/_C/libtriton.so", "triton/backends/nvidia/bin/ptxas"} <= set(elves)
    assert {name: c["hashes"][0]["content"] for name, c in files.items()} == elves
    bundled = work["result"]["bundled"]["bundled"]
    assert bundled, "the example's libtriton bundles a library from outside the allow-list (libzstd)"
    for lib in bundled:
        comp = files[f"triton/_C/{lib['name']}"]
        assert props(comp)["copied-from"] == lib["source"]
        assert comp["purl"].startswith("pkg:deb/debian/")  # the package that installed the copied file


def test_verify_passes_the_sbom_check(work: dict[str, Any]) -> None:
    proc = run_cli("verify", "--no-import", str(work["wheel"]), cwd=work["base"])
    out = flat(proc.stdout)
    assert "ok sbom: CycloneDX 1.6" in out and "ELF files listed with their SHA-256" in out, out
    assert "ok RECORD" in out


def tampered(wheel: Path, dest: Path, edit: Any) -> Path:
    """A copy of ``wheel`` whose SBOM is ``edit(doc)`` (a dict, or the bytes to store), RECORD kept matching:
    only the SBOM is wrong."""
    out = dest / wheel.name
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        name = sbom_name(zf)
        record_name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        changed = edit(json.loads(zf.read(name)))
        data = changed if isinstance(changed, bytes) else json.dumps(changed).encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        for info in zf.infolist():
            if info.filename == record_name:
                rows = [r if r[0] != name else [name, f"sha256={digest}", str(len(data))]
                        for r in csv.reader(io.StringIO(zf.read(info).decode())) if r]
                text = io.StringIO()
                csv.writer(text, lineterminator="\n").writerows(rows)
                new.writestr(info, text.getvalue())
            else:
                new.writestr(info, data if info.filename == name else zf.read(info))
    return out


def _drop_libtriton(doc: dict[str, Any]) -> dict[str, Any]:
    doc["components"] = [c for c in doc["components"] if c["name"] != "triton/_C/libtriton.so"]
    doc["dependencies"] = [d for d in doc["dependencies"] if d["ref"] != "file:triton/_C/libtriton.so"]
    for d in doc["dependencies"]:
        d["dependsOn"] = [r for r in d.get("dependsOn", []) if r != "file:triton/_C/libtriton.so"]
    return doc


def _add_missing(doc: dict[str, Any]) -> dict[str, Any]:
    doc["components"].append({"type": "file", "name": "triton/_C/libgone.so", "bom-ref": "file:gone",
                              "hashes": [{"alg": "SHA-256", "content": "0" * 64}]})
    return doc


@pytest.mark.parametrize(("edit", "said"), [
    (_drop_libtriton, "triton/_C/libtriton.so is an ELF file of the wheel the SBOM does not list"),
    (_add_missing, "triton/_C/libgone.so is listed in the SBOM but missing from the wheel"),
    (lambda doc: b"{not json", "tritonbuild.cdx.json is not JSON"),
    (lambda doc: {**doc, "components": "none"}, "does not validate against CycloneDX 1.6"),
], ids=["elf-not-listed", "listed-but-missing", "invalid-json", "schema"])
def test_verify_fails_a_tampered_sbom_in_one_line(work: dict[str, Any], tmp_path: Path, edit: Any,
                                                    said: str) -> None:
    bad = tampered(work["wheel"], tmp_path / "bad", edit)
    proc = run_cli("verify", "--no-import", str(bad), cwd=tmp_path, check=False)
    out = flat(proc.stdout)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ok RECORD" in out and "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "FAIL sbom" in line]
    assert len(lines) == 1 and said in out, proc.stdout


def test_a_quick_rebuild_lists_the_new_libtriton(work: dict[str, Any]) -> None:
    """The quick strategy reuses the last wheel's dist-info: its SBOM is made anew for the new content (the tree
    was dirty from the start, so the edit leaves the plan as it was, which a quick rebuild needs)."""
    before = elf_members(work["wheel"])["triton/_C/libtriton.so"]
    core = work["tree"] / "lib" / "Core.cpp"
    core.write_text(core.read_text() + "\nint tritonbuild_sbom_edit() { return 38; }\n")
    again = json.loads(run_cli(*work["args"], cwd=work["base"], env=work["env"]).stdout)
    assert again["strategy"] == "quick"
    wheel = Path(again["wheel"])
    _, doc = read_sbom(wheel)
    files = {c["name"]: c["hashes"][0]["content"] for c in doc["components"] if c["type"] == "file"}
    assert files == elf_members(wheel) and files["triton/_C/libtriton.so"] != before
    assert by_ref(doc)["source"]["version"] == work["commit"] and props(by_ref(doc)["source"])["dirty"] == "true"
    with zipfile.ZipFile(wheel) as zf:
        assert sum(n.endswith("tritonbuild.cdx.json") for n in zf.namelist()) == 1
    assert "ok sbom" in flat(run_cli("verify", "--no-import", str(wheel), cwd=work["base"]).stdout)
