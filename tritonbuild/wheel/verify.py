"""``tritonbuild verify WHEEL``: RECORD hashes, backend set against provenance, the ELF libraries' needs, and an
import in a fresh venv with the build's LLVM hidden (edge)."""

from __future__ import annotations

import configparser
import csv
import io
import json
import os
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tritonbuild.fileutil import record_hash
from tritonbuild.gather import pythons
from tritonbuild.proc import run, tool
from tritonbuild.wheel import elf

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
        actual = record_hash(data, algo)
        if actual != expected or (size and int(size) != len(data)):
            bad.append(f"{path} does not match its RECORD hash")
    bad += [f"{n} is not listed in RECORD" for n in sorted(names - listed) if not n.endswith("/")]
    return [("RECORD", not bad, "; ".join(bad[:5]) or f"{len(rows)} entries match")]


def _backend_checks(zf: zipfile.ZipFile, info: dict[str, Any] | None) -> tuple[list[Check], list[str]]:
    names = set(zf.namelist())
    if info is None:
        return [("provenance", False, "triton/_build_info.json is missing")], []
    recorded = sorted(b["name"] for b in info.get("backends", []))
    eps = _entry_point_backends(zf)
    dirs = sorted({n.split("/")[2] for n in names if n.startswith("triton/backends/") and n.count("/") >= 3
                   and n.endswith("/compiler.py")})
    ok = recorded == eps == dirs
    detail = (f"{', '.join(recorded)}" if ok else
              f"provenance {recorded}, entry points {eps}, backend dirs {dirs} differ")
    return [("backends", ok, detail)], recorded


def _elf_check(zf: zipfile.ZipFile, tmp: Path, system_libs: frozenset[str]) -> Check:
    """Every library an ELF file of the wheel needs is on the allow-list or inside the wheel, reachable through
    the file's own $ORIGIN run path; run paths naming build-machine dirs are reported too."""
    root = tmp / "elf"
    members = [n for n in zf.namelist() if not n.endswith("/") and not n.endswith(".py")]
    zf.extractall(root, members)
    problems, leaks, count = [], [], 0
    for path in elf.elf_files(root):
        info = elf.read(path)
        if info is None:
            continue
        count += 1
        rel = path.relative_to(root).as_posix()
        inside = [e for e in info.runpath if e.startswith(("$ORIGIN", "${ORIGIN}"))]
        leaks += [f"{rel} run path {e}" for e in info.runpath if e not in inside]
        own = elf.ElfFile(info.path, info.soname, info.needed, tuple(inside))
        for name in info.needed:
            if name not in system_libs and elf.locate(name, own, (), ()) is None:
                problems.append(f"{rel} needs {name}")
    if problems:
        return ("libraries", False, f"needed from outside the wheel and the manylinux allow-list: "
                f"{'; '.join(problems[:8])}{' ...' if len(problems) > 8 else ''} (build with --bundle-libs)")
    extra = f"; build-machine run paths left: {'; '.join(leaks[:3])}" if leaks else ""
    return ("libraries", True, f"{count} ELF files need only the wheel and the manylinux allow-list{extra}")


def hidden_paths(prefix: str | None) -> list[str]:
    """What to hide from the import test: the build's LLVM prefix, and the files its lib/ links point to outside
    it (Debian's /usr/lib/llvm-22/lib/libLLVM.so.22.1 is a link into /usr/lib/x86_64-linux-gnu)."""
    if not prefix or not Path(prefix).is_dir():
        return []
    root = Path(prefix).resolve()
    out = [str(root)]
    for lib in sorted((root / "lib").glob("lib*.so*")):
        real = lib.resolve()
        if real.is_file() and not real.is_relative_to(root) and str(real) not in out:
            out.append(str(real))
    return out


def _hiding(argv: list[str], hide: list[str], tmp: Path) -> tuple[list[str], str | None]:
    """``argv`` run in a private mount namespace with an empty dir (or file) mounted over each hidden path; or the
    reason that cannot be done here (no unshare, no permission)."""
    if not hide:
        return argv, "no LLVM prefix recorded in the wheel"
    unshare = tool("unshare")
    if unshare is None:
        return argv, "unshare (util-linux) is not installed"
    (tmp / "empty-dir").mkdir(exist_ok=True)
    (tmp / "empty-file").touch()
    mounts = " && ".join(
        f"mount --bind {tmp / ('empty-dir' if Path(h).is_dir() else 'empty-file')} '{h}'" for h in hide)
    flags = ["--mount"] if hasattr(os, "geteuid") and os.geteuid() == 0 else ["--mount", "--map-root-user"]
    probe = run([unshare, *flags, "sh", "-c", mounts + " && true"])
    if not probe.ok:
        why = (probe.output.splitlines() or [f"exit code {probe.returncode}"])[-1]
        return argv, f"cannot mount over the LLVM prefix here ({why})"
    script = mounts + ' && exec "$@"'
    return [unshare, *flags, "sh", "-c", script, "sh", *argv], None


def _entry_point_backends(zf: zipfile.ZipFile) -> list[str]:
    ep_name = next((n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")), None)
    if not ep_name:
        return []
    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(zf.read(ep_name).decode())
    return sorted(parser["triton.backends"]) if parser.has_section("triton.backends") else []


def _compile_checks(venv: Path, backends: list[str], timeout: int, version: str | None) -> list[Check]:
    """The kernel corpus compiled with the wheel installed in ``venv`` (tritonbuild.resolve.compilecheck)."""
    from tritonbuild.resolve import compilecheck
    from tritonbuild.wheel import compilecheck_run

    site = next(iter(sorted(venv.glob("lib/python*/site-packages"))), venv)
    plan = compilecheck.plan_check(True, timeout, backends, triton_version=version)
    try:
        results = compilecheck_run.run_check(str(venv / "bin" / "python"), site, plan, on_path=False)
    except RuntimeError as exc:
        return [("compile", False, str(exc))]
    bad = compilecheck.failures(results)
    detail = f"{compilecheck.counts_line(compilecheck.summarize(results))} ({', '.join(backends)})"
    if bad:
        detail += ": " + "; ".join(compilecheck.describe_result(r) for r in bad[:6])
    return [("compile", not bad, detail)]


def _import_check(wheel: Path, python: str, expected: list[str], hide: list[str], tmp_root: Path) -> list[Check]:
    venv = tmp_root / "venv"
    from tritonbuild.proc import venv_with

    error = venv_with(python, venv, ["--no-index", "--no-deps", str(wheel)])
    if error:
        return [("import", False, error[-400:])]
    code = "import json, triton; from triton.backends import backends; print(json.dumps(sorted(backends)))"
    argv, why_not = _hiding([str(venv / "bin" / "python"), "-c", code], hide, tmp_root)
    res = run(argv, cwd=tmp_root)
    hidden = f" with {hide[0]} hidden" if why_not is None else ""
    checks: list[Check] = []
    if not res.ok:
        checks.append(("import", False, f"fresh venv{hidden}: " + (res.stderr.strip().splitlines() or
                                                                   ["no output"])[-1]))
    else:
        found = json.loads(res.stdout.strip().splitlines()[-1])
        checks.append(("import", found == expected, f"fresh venv{hidden} discovers {', '.join(found)}"))
    if why_not:
        checks.append(("hidden-llvm", True, f"skipped: {why_not}"))
    return checks


def verify(wheel: Path, *, python: str | None = None, import_test: bool = True,
           compile_timeout: int | None = None) -> list[Check]:
    """Every check of the wheel; ``compile_timeout`` (seconds per kernel) also runs the compile check."""
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory(prefix="tritonbuild-verify-") as tmp:
        checks = _record_checks(zf)
        provenance = _provenance(zf)
        backend_checks, expected = _backend_checks(zf, provenance)
        checks += backend_checks
        info = provenance or {}
        if provenance is not None:
            repro = bool(info.get("wheel", {}).get("reproducible"))
            checks.append(("reproducible", True, "yes: no build-machine paths, fixed zip metadata, the same bytes "
                           "from any checkout dir" if repro else "no (built without --reproducible)"))
        system = elf.SYSTEM_LIBS | frozenset(info.get("wheel", {}).get("system_libs", ()))
        checks.append(_elf_check(zf, Path(tmp), system))
        if import_test:
            expected = expected or _entry_point_backends(zf)  # a wheel of another builder: its entry points
            hide = hidden_paths(info.get("llvm", {}).get("prefix"))
            checks += _import_check(wheel, python or sys.executable, expected, hide, Path(tmp))
            if compile_timeout is not None and (Path(tmp) / "venv" / "bin" / "python").exists():
                version = wheel.name.split("-")[1] if wheel.name.count("-") >= 4 else None
                checks += _compile_checks(Path(tmp) / "venv", expected, compile_timeout, version)
    return checks


def _provenance(zf: zipfile.ZipFile) -> dict[str, Any] | None:
    """The wheel's triton/_build_info.json, read once for every check; None when the wheel has none."""
    try:
        data = json.loads(zf.read("triton/_build_info.json"))
    except KeyError:
        return None
    return data if isinstance(data, dict) else {}


def interpreter_for(wheel: Path, given: Sequence[str]) -> str:
    """The interpreter that imports ``wheel``: for an interpreter-specific wheel (cp312-cp312, cp313-cp313t) the
    given one of that ABI, else this one when it fits, else one of that version found as ``--python cp312``
    would find it; for a cp312-abi3 wheel the same with any CPython from 3.12 on."""
    parts = wheel.name.removesuffix(".whl").split("-")
    py, abi = (parts[-3], parts[-2]) if len(parts) >= 5 else ("", "")
    if abi in ("", "none"):
        return given[0] if given else sys.executable

    def fits(python: str) -> bool:
        found = pythons.probe(python, require_headers=False)
        if abi == "abi3":
            return not found.free_threaded and found.tag.startswith("cp3") and int(found.tag[3:]) >= int(py[3:])
        return found.abi == abi

    for python in (*(pythons.find(g, os.environ) for g in given), sys.executable):
        if fits(python):
            return python
    return pythons.find(py if abi == "abi3" else abi, os.environ)
