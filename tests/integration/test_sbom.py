"""Issue 38: the CycloneDX SBOM inside every wheel, built from the example tree with real cmake, gcc and Debian's
LLVM 22, and verify's ``sbom`` check on it and on tampered copies."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.helpers import WHEEL_ONLY, one_of
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
    (ptxas.parent.parent / "version.json").write_text('{"cuda": {"version": "12.8.1"}, '
                                                     '"cuda_nvcc": {"version": "12.8.93"}}')  # a toolkit's
    env = {**WHEEL_ONLY, "TRITON_PTXAS_PATH": str(ptxas)}
    args = ["build", "--json", "--source", str(tree), "--backends", "nvidia;amd", "--cache-dir",
            str(base / "cache"), "--out", str(base / "dist")]
    result = one_of(run_cli(*args, cwd=base, env=env).stdout, "wheels")
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
    assert comps["source"]["licenses"] == doc["metadata"]["component"]["licenses"] == [{"expression": "MIT"}]
    assert doc["metadata"]["component"]["purl"].startswith("pkg:pypi/triton@")
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
    assert ptxas["version"] == "12.8.93"  # the toolkit's nvcc part, which ptxas is
    assert props(ptxas)["origin"] == f"CUDA toolkit 12.8.93 at {work['base'] / 'cuda'}"
    assert ptxas["hashes"] == [{"alg": "SHA-256", "content": elf_members(work["wheel"])[
        "triton/backends/nvidia/bin/ptxas"]}]


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
    assert f"ok provenance-file: {work['wheel'].name}.provenance.json: its subject is this wheel" in out, out
    assert f"ok SHA256SUMS: SHA256SUMS gives the sha256 of {work['wheel'].name} and {work['wheel'].name}." in out


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


def _libtriton(doc: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in doc["components"] if c["name"] == "triton/_C/libtriton.so")


def _duplicate(doc: dict[str, Any]) -> dict[str, Any]:
    """libtriton listed a second time with another sha256 (the reviewer's finding 8)."""
    twin = {**_libtriton(doc), "bom-ref": "dup", "hashes": [{"alg": "SHA-256", "content": "1" * 64}]}
    doc["components"].append(twin)
    return doc


def _md5_only(doc: dict[str, Any]) -> dict[str, Any]:
    _libtriton(doc)["hashes"] = [{"alg": "MD5", "content": "0" * 32}]
    return doc


def _no_hashes(doc: dict[str, Any]) -> dict[str, Any]:
    del _libtriton(doc)["hashes"]
    return doc


@pytest.mark.parametrize(("edit", "said"), [
    (_drop_libtriton, "triton/_C/libtriton.so is an ELF file of the wheel the SBOM does not list"),
    (_add_missing, "triton/_C/libgone.so is listed in the SBOM but missing from the wheel"),
    (lambda doc: b"{not json", "tritonbuild.cdx.json is not JSON"),
    (lambda doc: {**doc, "components": "none"}, "does not validate against CycloneDX 1.6"),
    (_duplicate, "triton/_C/libtriton.so is listed more than once in the SBOM with conflicting SHA-256s"),
    (_md5_only, "triton/_C/libtriton.so has no SHA-256 in the SBOM"),
    (_no_hashes, "triton/_C/libtriton.so has no SHA-256 in the SBOM"),
], ids=["elf-not-listed", "listed-but-missing", "invalid-json", "schema", "conflicting-duplicate", "md5-only",
        "no-hashes"])
def test_verify_fails_a_tampered_sbom_in_one_line(work: dict[str, Any], tmp_path: Path, edit: Any,
                                                    said: str) -> None:
    bad = tampered(work["wheel"], tmp_path / "bad", edit)
    proc = run_cli("verify", "--no-import", str(bad), cwd=tmp_path, check=False)
    out = flat(proc.stdout)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "ok RECORD" in out and "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "FAIL sbom" in line]
    assert len(lines) == 1 and said in out, proc.stdout
    assert "does not match" not in out, out


def rewritten(wheel: Path, dest: Path, add: dict[str, bytes], drop: tuple[str, ...] = ()) -> Path:
    """A copy of ``wheel`` in ``dest`` with the members ``add`` added (or replaced) and those ending in one of
    ``drop`` removed, RECORD listing exactly what it holds with matching hashes: only the check under test sees it."""
    out = dest / wheel.name
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as new:
        record_name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        members = {i.filename: zf.read(i) for i in zf.infolist() if i.filename != record_name
                   and not i.filename.endswith(drop)}
        members.update(add)
        rows = []
        for name, data in members.items():
            new.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append([name, f"sha256={digest}", str(len(data))])
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([*rows, [record_name, "", ""]])
        new.writestr(record_name, text.getvalue())
    return out


def verify_out(wheel: Path, cwd: Path) -> tuple[int, str]:
    proc = run_cli("verify", "--no-import", str(wheel), cwd=cwd, check=False)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc.returncode, flat(proc.stdout)


def test_a_malformed_second_sbom_fails_verify(work: dict[str, Any], tmp_path: Path) -> None:
    with zipfile.ZipFile(work["wheel"]) as zf:
        dist = sbom_name(zf).split("/")[0]
    bad = rewritten(work["wheel"], tmp_path / "extra", {f"{dist}/sboms/other.cdx.json": b'{"bomFormat": \n'})
    rc, out = verify_out(bad, tmp_path)
    assert rc == 1 and f"FAIL sbom: {dist}/sboms/other.cdx.json is not JSON" in out, out
    good = rewritten(work["wheel"], tmp_path / "spdx", {f"{dist}/sboms/other.spdx.json": b'{"spdxVersion": "2.3"}'})
    rc, out = verify_out(good, tmp_path)
    assert rc == 0 and "ok sbom: CycloneDX 1.6" in out, out  # another tool's SBOM in another format is fine


def test_a_tritonbuild_wheel_without_its_sbom_fails_and_a_foreign_one_gets_a_note(work: dict[str, Any],
                                                                                    tmp_path: Path) -> None:
    stripped = rewritten(work["wheel"], tmp_path / "rm", {}, drop=("/sboms/tritonbuild.cdx.json",))
    rc, out = verify_out(stripped, tmp_path)
    assert rc == 1, out
    assert "FAIL sbom: built by tritonbuild (it has triton/_build_info.json) but its SBOM " \
           "(.dist-info/sboms/tritonbuild.cdx.json) is missing" in out, out
    assert "not built by tritonbuild" not in out
    foreign = rewritten(work["wheel"], tmp_path / "foreign", {},
                        drop=("/sboms/tritonbuild.cdx.json", "triton/_build_info.json"))
    rc, out = verify_out(foreign, tmp_path)
    assert "note sbom: no SBOM (.dist-info/sboms/tritonbuild.cdx.json): not built by tritonbuild" in out, out
    assert "FAIL sbom" not in out


def _beside(work: dict[str, Any], dest: Path, provenance: bytes | None, sums: bytes | None = None) -> Path:
    """The unchanged wheel copied into ``dest`` with ``provenance`` as its provenance file and ``sums`` as
    SHA256SUMS (None: no such file)."""
    dest.mkdir(parents=True)
    wheel = Path(shutil.copy(work["wheel"], dest))
    if provenance is not None:
        (dest / f"{wheel.name}.provenance.json").write_bytes(provenance)
    if sums is not None:
        (dest / "SHA256SUMS").write_bytes(sums)
    return wheel


def _provenance(work: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((work["wheel"].parent / f"{work['wheel'].name}.provenance.json").read_text())
    return doc


def _subject(work: dict[str, Any], **changes: Any) -> bytes:
    doc = _provenance(work)
    for key, value in changes.items():
        if key == "sha256":
            doc["subject"][0]["digest"]["sha256"] = value
        else:
            doc["subject"][0][key] = value
    return json.dumps(doc).encode()


@pytest.mark.parametrize(("make", "said"), [
    (lambda w: _subject(w, sha256="0" * 64), "gives the wheel's sha256 as 0000000000000000000000000000000000000000"
                                             "000000000000000000000000, but the wheel's is"),
    (lambda w: _subject(w, name="evil-1.0-py3-none-any.whl"), "is the provenance of evil-1.0-py3-none-any.whl, "
                                                              "not of this wheel"),
    (lambda w: b'{"_type":', "it is not a provenance file tritonbuild writes"),
    (lambda w: b"[" * 100_000 + b"]" * 100_000, "it is JSON nested too deep to read"),
    (lambda w: b"\xff\xfe not utf-8", "it is not a provenance file tritonbuild writes"),
    (lambda w: json.dumps({**_provenance(w), "predicateType": "https://example.com/x"}).encode(),
     "its predicateType is"),
    (lambda w: b" " * ((4 << 20) + 1), "is over 4 MiB"),
], ids=["subject-sha256", "subject-name", "malformed", "nested", "not-utf8", "predicate-type", "huge"])
def test_verify_fails_a_provenance_file_that_is_not_the_wheels(work: dict[str, Any], tmp_path: Path, make: Any,
                                                               said: str) -> None:
    wheel = _beside(work, tmp_path / "d", make(work))
    rc, out = verify_out(wheel, tmp_path)
    assert rc == 1 and "FAIL provenance-file:" in out and said in out, out
    assert "ok sbom" in out and "ok RECORD" in out  # the wheel itself is fine


def test_verify_notes_a_missing_provenance_file_and_refuses_a_fifo_without_hanging(work: dict[str, Any],
                                                                                  tmp_path: Path) -> None:
    wheel = _beside(work, tmp_path / "none", None)
    rc, out = verify_out(wheel, tmp_path)
    assert rc == 0 and "note provenance-file: no provenance file beside the wheel" in out, out
    assert "SHA256SUMS" not in out  # a dir without one is fine, and not mentioned
    wheel = _beside(work, tmp_path / "fifo", None)
    os.mkfifo(tmp_path / "fifo" / f"{wheel.name}.provenance.json")
    rc, out = verify_out(wheel, tmp_path)
    assert rc == 1 and f"{wheel.name}.provenance.json is not a regular file" in out, out


def test_verify_checks_sha256sums_beside_the_wheel(work: dict[str, Any], tmp_path: Path) -> None:
    name, good = work["wheel"].name, (work["wheel"].parent / "SHA256SUMS").read_bytes()
    prov = (work["wheel"].parent / f"{name}.provenance.json").read_bytes()
    wheel = _beside(work, tmp_path / "good", prov, good)
    rc, out = verify_out(wheel, tmp_path)
    assert rc == 0 and "ok provenance-file" in out and f"ok SHA256SUMS: SHA256SUMS gives the sha256 of {name} " \
        f"and {name}.provenance.json" in out, out
    wrong = good.replace(hashlib.sha256(work["wheel"].read_bytes()).hexdigest().encode(), b"f" * 64)
    wheel = _beside(work, tmp_path / "bad", prov, wrong)
    rc, out = verify_out(wheel, tmp_path)
    assert rc == 1 and f"FAIL SHA256SUMS: SHA256SUMS gives {name} the sha256 {'f' * 64}, but it is" in out, out
    edited = prov.replace(b'"predicateType"', b' "predicateType"', 1)  # a changed provenance file, subject intact
    wheel = _beside(work, tmp_path / "prov", edited, good)
    rc, out = verify_out(wheel, tmp_path)
    assert rc == 1 and "ok provenance-file" in out and f"SHA256SUMS gives {name}.provenance.json the sha256" in out


def test_verify_of_several_wheels_labels_each_by_the_path_given(work: dict[str, Any], tmp_path: Path) -> None:
    good = _beside(work, tmp_path / "a", None)
    bad = rewritten(work["wheel"], tmp_path / "b", {}, drop=("/sboms/tritonbuild.cdx.json",))
    proc = run_cli("verify", "--no-import", "a/" + good.name, "./b/" + bad.name, cwd=tmp_path, check=False)
    labels = [line for line in proc.stdout.splitlines() if line.endswith(".whl")]
    assert labels == [f"a/{good.name}", f"./b/{bad.name}"], proc.stdout
    assert proc.returncode == 1


def test_a_quick_rebuild_lists_the_new_libtriton(work: dict[str, Any]) -> None:
    """The quick strategy reuses the last wheel's dist-info: its SBOM is made anew for the new content (the tree
    was dirty from the start, so the edit leaves the plan as it was, which a quick rebuild needs)."""
    before = elf_members(work["wheel"])["triton/_C/libtriton.so"]
    core = work["tree"] / "lib" / "Core.cpp"
    core.write_text(core.read_text() + "\nint tritonbuild_sbom_edit() { return 38; }\n")
    again = one_of(run_cli(*work["args"], cwd=work["base"], env=work["env"]).stdout, "wheels")
    assert again["strategy"] == "quick"
    wheel = Path(again["wheel"])
    _, doc = read_sbom(wheel)
    files = {c["name"]: c["hashes"][0]["content"] for c in doc["components"] if c["type"] == "file"}
    assert files == elf_members(wheel) and files["triton/_C/libtriton.so"] != before
    assert by_ref(doc)["source"]["version"] == work["commit"] and props(by_ref(doc)["source"])["dirty"] == "true"
    with zipfile.ZipFile(wheel) as zf:
        assert sum(n.endswith("tritonbuild.cdx.json") for n in zf.namelist()) == 1
    assert "ok sbom" in flat(run_cli("verify", "--no-import", str(wheel), cwd=work["base"]).stdout)
