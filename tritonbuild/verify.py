"""``tritonbuild verify WHEEL``: RECORD hashes, backend set against provenance, import in a fresh venv (edge)."""

from __future__ import annotations

import base64
import configparser
import csv
import hashlib
import io
import json
import sys
import tempfile
import zipfile
from pathlib import Path

from tritonbuild.proc import run

Check = tuple[str, bool, str]


def _record_checks(zf: zipfile.ZipFile) -> list[Check]:
    names = set(zf.namelist())
    record_name = next((n for n in names if n.endswith(".dist-info/RECORD")), None)
    if record_name is None:
        return [("RECORD", False, "the wheel has no .dist-info/RECORD")]
    rows = [r for r in csv.reader(io.StringIO(zf.read(record_name).decode())) if r]
    listed = {r[0] for r in rows}
    bad = []
    for path, digest, size in rows:
        if path == record_name:
            continue
        if path not in names:
            bad.append(f"{path} is listed but missing")
            continue
        data = zf.read(path)
        algo, _, expected = digest.partition("=")
        actual = base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()
        if actual != expected or (size and int(size) != len(data)):
            bad.append(f"{path} does not match its RECORD hash")
    bad += [f"{n} is not listed in RECORD" for n in sorted(names - listed) if not n.endswith("/")]
    return [("RECORD", not bad, "; ".join(bad[:5]) or f"{len(rows)} entries match")]


def _backend_checks(zf: zipfile.ZipFile) -> tuple[list[Check], list[str]]:
    names = set(zf.namelist())
    try:
        info = json.loads(zf.read("triton/_build_info.json"))
    except KeyError:
        return [("provenance", False, "triton/_build_info.json is missing")], []
    recorded = sorted(b["name"] for b in info.get("backends", []))
    ep_name = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), None)
    eps: list[str] = []
    if ep_name:
        parser = configparser.ConfigParser()
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_string(zf.read(ep_name).decode())
        eps = sorted(parser["triton.backends"]) if parser.has_section("triton.backends") else []
    dirs = sorted({n.split("/")[2] for n in names if n.startswith("triton/backends/") and n.count("/") >= 3
                   and n.endswith("/compiler.py")})
    ok = recorded == eps == dirs
    detail = (f"{', '.join(recorded)}" if ok else
              f"provenance {recorded}, entry points {eps}, backend dirs {dirs} differ")
    return [("backends", ok, detail)], recorded


def _import_check(wheel: Path, python: str, expected: list[str]) -> Check:
    with tempfile.TemporaryDirectory(prefix="tritonbuild-verify-") as tmp:
        venv = Path(tmp) / "venv"
        steps = [[python, "-m", "venv", str(venv)],
                 [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)]]
        for argv in steps:
            res = run(argv)
            if not res.ok:
                return ("import", False, f"{' '.join(argv[:3])} failed: {res.stderr.strip()[-300:]}")
        code = "import json, triton; from triton.backends import backends; print(json.dumps(sorted(backends)))"
        res = run([str(venv / "bin" / "python"), "-c", code], cwd=tmp)
        if not res.ok:
            return ("import", False, (res.stderr.strip().splitlines() or ["no output"])[-1])
        found = json.loads(res.stdout.strip().splitlines()[-1])
        return ("import", found == expected, f"fresh venv discovers {', '.join(found)}")


def verify(wheel: Path, *, python: str | None = None, import_test: bool = True) -> list[Check]:
    with zipfile.ZipFile(wheel) as zf:
        checks = _record_checks(zf)
        backend_checks, expected = _backend_checks(zf)
        checks += backend_checks
    if import_test:
        checks.append(_import_check(wheel, python or sys.executable, expected))
    return checks
