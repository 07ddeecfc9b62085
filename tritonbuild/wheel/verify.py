"""``tritonbuild verify WHEEL``: RECORD hashes, backend set against provenance, the ELF libraries' needs, and an
import in a fresh venv with the build's LLVM hidden (edge).

The wheel is anyone's, so it is read through ``zipguard`` (names, sizes and ratios checked before reading,
members streamed under caps, extracted only into a temp dir): a malformed or hostile wheel is a failed check,
never a traceback. Each check is ``ok``, ``fail``, ``skip`` (it could not run here, with the reason) or ``note``
(information: a wheel tritonbuild did not build has no provenance to hold it to).
"""

from __future__ import annotations

import base64
import configparser
import csv
import json
import os
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tritonbuild import elf
from tritonbuild.gather import pythons
from tritonbuild.proc import run, tool
from tritonbuild.wheel import zipguard

Status = Literal["ok", "fail", "skip", "note"]
Check = tuple[str, Status, str]
BUILD_INFO = "triton/_build_info.json"
# RECORD digests pip accepts (PEP 427: sha256 or stronger)
HASHES = frozenset({"sha256", "sha384", "sha512", "sha3_256", "sha3_384", "sha3_512", "blake2b", "blake2s"})


def status(ok: bool) -> Status:
    return "ok" if ok else "fail"


@dataclass(frozen=True)
class Provenance:
    """What ``verify`` uses of ``triton/_build_info.json``, type-checked."""

    backends: tuple[str, ...]
    reproducible: bool
    system_libs: tuple[str, ...]
    llvm_prefix: str | None
    patches: tuple[tuple[str, str], ...] = ()  # (path as given, sha256) of each patch applied to the source


def dist_info(zf: zipfile.ZipFile, leaf: str) -> str | None:
    """The name of the wheel's ``<name>.dist-info/<leaf>`` member, or None when it has none."""
    return next((n for n in zf.namelist() if n.count("/") == 1 and n.split("/")[0].endswith(".dist-info")
                 and n.endswith("/" + leaf)), None)


def _record_rows(text: str) -> tuple[list[tuple[int, str, str, str]], list[str]]:
    rows, bad = [], []
    reader = csv.reader(text.splitlines())
    try:
        for row in reader:
            if not row:
                continue
            if len(row) != 3:
                bad.append(f"RECORD line {reader.line_num} has {len(row)} columns, not 3 (path,hash,size)")
                continue
            rows.append((reader.line_num, row[0], row[1], row[2]))
    except csv.Error as exc:
        bad.append(f"RECORD line {reader.line_num} is not CSV ({exc})")
    return rows, bad


def _record_entry(zf: zipfile.ZipFile, line: int, path: str, digest: str, size: str) -> str | None:
    """What is wrong with one RECORD entry, or None when the member matches it."""
    why = zipguard.name_problem(path)
    if why:
        return f"RECORD line {line} names {path!r}: {why}"
    try:
        info = zf.getinfo(path)
    except KeyError:
        return f"{path} is listed but missing"
    algo, _, expected = digest.partition("=")
    if algo not in HASHES:
        return f"{path} has no sha256 (or stronger) hash in RECORD ({digest[:20]!r})"
    if size and not size.isdigit():
        return f"RECORD line {line}: the size of {path} is {size[:20]!r}, not a number"
    try:
        raw, length = zipguard.digest(zf, info, algo)
    except zipguard.BadWheel as exc:
        return str(exc)
    if base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != expected or (size and int(size) != length):
        return f"{path} does not match its RECORD hash"
    return None


def _record_checks(zf: zipfile.ZipFile) -> list[Check]:
    record_name = dist_info(zf, "RECORD")
    if record_name is None:
        return [("RECORD", "fail", "the wheel has no .dist-info/RECORD")]
    try:
        rows, bad = _record_rows(zipguard.read_text(zf, record_name))
    except zipguard.BadWheel as exc:
        return [("RECORD", "fail", str(exc))]
    counts = {p: 0 for _, p, _, _ in rows}
    for line, path, digest, size in rows:
        counts[path] += 1
        if path == record_name or counts[path] > 1:
            bad += [f"{path} is listed twice"] if counts[path] == 2 else []
            continue
        problem = _record_entry(zf, line, path, digest, size)
        bad += [problem] if problem else []
    names = {i.filename for i in zf.infolist() if not i.is_dir()}
    bad += [f"{n} is not listed in RECORD" for n in sorted(names - set(counts))]
    dist_infos = {n.split("/")[0] for n in names if n.count("/") >= 1 and n.split("/")[0].endswith(".dist-info")}
    bad += [f"the wheel has {len(dist_infos)} .dist-info dirs"] if len(dist_infos) > 1 else []
    more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
    return [("RECORD", status(not bad), "; ".join(bad[:5]) + more or f"{len(rows)} entries match")]


def _short(value: object) -> str:
    try:
        text = json.dumps(value)
    except RecursionError:  # nested about as deep as json.loads allows: too deep to print back
        return f"a {type(value).__name__} nested too deep to show"
    return text if len(text) <= 40 else text[:37] + "..."


def _parse_info(data: object) -> Provenance | str:
    """The provenance fields ``verify`` uses, or what is wrong with their types."""
    if not isinstance(data, dict):
        return f"is {_short(data)}, not a JSON object"
    backends, wheel, llvm = data.get("backends", []), data.get("wheel", {}), data.get("llvm", {})
    if not isinstance(backends, list) or not all(isinstance(b, dict) and isinstance(b.get("name"), str)
                                                 for b in backends):
        return f"'backends' is {_short(backends)}, not a list of objects with a 'name' string"
    if not isinstance(wheel, dict):
        return f"'wheel' is {_short(wheel)}, not an object"
    libs, repro = wheel.get("system_libs", []), wheel.get("reproducible", False)
    if not isinstance(libs, list) or not all(isinstance(x, str) for x in libs):
        return f"'wheel.system_libs' is {_short(libs)}, not a list of strings"
    if not isinstance(repro, bool):
        return f"'wheel.reproducible' is {_short(repro)}, not true or false"
    if not isinstance(llvm, dict) or not isinstance(llvm.get("prefix"), str | None):
        return f"'llvm' is {_short(llvm)}, not an object with a 'prefix' string"
    source = data.get("source", {})
    patches = source.get("patches", []) if isinstance(source, dict) else None
    if not isinstance(patches, list) or not all(isinstance(p, dict) and isinstance(p.get("path"), str)
                                                and isinstance(p.get("sha256"), str) for p in patches):
        return f"'source.patches' is {_short(patches)}, not a list of objects with 'path' and 'sha256' strings"
    return Provenance(tuple(sorted(b["name"] for b in backends)), repro, tuple(libs), llvm.get("prefix"),
                      tuple((p["path"], p["sha256"]) for p in patches))


def _provenance(zf: zipfile.ZipFile) -> tuple[Provenance | None, list[Check]]:
    """The wheel's triton/_build_info.json, read once for every check; None (and why) when it has none or a
    broken one. A wheel without one was built by something else (the official wheel): a note, not a failure."""
    if BUILD_INFO not in zf.namelist():
        return None, [("provenance", "note", f"not built by tritonbuild: no {BUILD_INFO}; backends taken from "
                       "entry points")]
    try:
        data = json.loads(zipguard.read_text(zf, BUILD_INFO))
    except zipguard.BadWheel as exc:
        return None, [("provenance", "fail", str(exc))]
    except RecursionError:
        return None, [("provenance", "fail", f"{BUILD_INFO} is JSON nested too deep to read (arrays or objects "
                       "inside each other a thousand times or more)")]
    except ValueError as exc:
        return None, [("provenance", "fail", f"{BUILD_INFO} is not JSON ({exc})")]
    found = _parse_info(data)
    if isinstance(found, str):
        return None, [("provenance", "fail", f"{BUILD_INFO}: {found}")]
    return found, []


def entry_points(zf: zipfile.ZipFile) -> dict[str, dict[str, str]]:
    """The groups of the wheel's entry_points.txt (``{}`` when it has none); ``BadWheel`` when that file is not
    UTF-8 or not an INI file."""
    ep_name = dist_info(zf, "entry_points.txt")
    if not ep_name:
        return {}
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(zipguard.read_text(zf, ep_name))
    except configparser.Error as exc:
        raise zipguard.BadWheel(f"{ep_name} is not an INI file ({' '.join(str(exc).split())})") from None
    return {group: dict(parser[group]) for group in parser.sections()}


def _entry_point_backends(zf: zipfile.ZipFile) -> list[str] | str:
    """The ``triton.backends`` entry points' names, or what is wrong with entry_points.txt."""
    try:
        return sorted(entry_points(zf).get("triton.backends", {}))
    except zipguard.BadWheel as exc:
        return str(exc)


@dataclass(frozen=True)
class Structure:
    """What the structural checks found: the checks, the provenance and the ``triton.backends`` entry points (or
    what is wrong with entry_points.txt)."""

    checks: list[Check]
    info: Provenance | None
    eps: list[str] | str

    @property
    def problems(self) -> list[str]:
        """The failed checks, each ``name: detail``; empty for a well-formed wheel."""
        failed = [f"{name}: {detail}" for name, state, detail in self.checks if state == "fail"]
        return failed + ([f"entry points: {self.eps}"] if isinstance(self.eps, str) else [])


def structure(wheel: Path, zf: zipfile.ZipFile) -> Structure:
    """The checks of a wheel's structure that ``verify`` and ``compare`` both run: its file name (``BadWheel``
    when it does not parse), RECORD (parsed, every member listed with a matching hash), the types of
    ``triton/_build_info.json`` and that entry_points.txt parses."""
    wheel_tags(wheel)
    checks = _record_checks(zf)
    info, notes = _provenance(zf)
    return Structure(checks + notes, info, _entry_point_backends(zf))


def _backend_checks(zf: zipfile.ZipFile, info: Provenance | None, eps: list[str] | str) -> list[Check]:
    """Entry points against backend dirs, and against the provenance's backends when the wheel has one."""
    if isinstance(eps, str):
        return [("backends", "fail", eps)]
    dirs = sorted({n.split("/")[2] for n in zf.namelist() if n.startswith("triton/backends/") and n.count("/") >= 3
                   and n.endswith("/compiler.py")})
    if info is None:
        ok = eps == dirs
        return [("backends", status(ok), ", ".join(eps) if ok else f"entry points {eps}, backend dirs {dirs} "
                 "differ")]
    recorded = list(info.backends)
    ok = recorded == eps == dirs
    return [("backends", status(ok), ", ".join(recorded) if ok else
             f"provenance {recorded}, entry points {eps}, backend dirs {dirs} differ")]


def _extract_elves(zf: zipfile.ZipFile, root: Path) -> None:
    for info in zf.infolist():
        if not info.is_dir() and not info.filename.endswith(".py") and zipguard.head(zf, info) == b"\x7fELF":
            zipguard.extract(zf, info, root)


def _elf_needs(root: Path, system_libs: frozenset[str]) -> tuple[list[str], list[str], int]:
    problems, leaks, count = [], [], 0
    inside_root = root.resolve()
    for path in elf.elf_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            info = elf.read(path)
        except Exception as exc:  # pyelftools on a hostile file: any error is a finding, not a traceback
            problems.append(f"{rel} is an ELF file that cannot be parsed ({type(exc).__name__})")
            continue
        if info is None:
            continue
        count += 1
        inside = [e for e in info.runpath if e.startswith(("$ORIGIN", "${ORIGIN}"))]
        leaks += [f"{rel} run path {e}" for e in info.runpath if e not in inside]
        own = elf.ElfFile(info.path, info.soname, info.needed, tuple(inside))
        for name in info.needed:
            found = None if name in system_libs else elf.locate(name, own, (), ())
            if name not in system_libs and (found is None or not found.resolve().is_relative_to(inside_root)):
                problems.append(f"{rel} needs {name}")  # $ORIGIN/../../.. may reach the host: not the wheel
    return problems, leaks, count


def _elf_check(zf: zipfile.ZipFile, tmp: Path, system_libs: frozenset[str]) -> Check:
    """Every library an ELF file of the wheel needs is on the allow-list or inside the wheel, reachable through
    the file's own $ORIGIN run path; run paths naming build-machine dirs are reported too."""
    root = tmp / "elf"
    try:
        _extract_elves(zf, root)
    except zipguard.BadWheel as exc:
        return ("libraries", "fail", str(exc))
    problems, leaks, count = _elf_needs(root, system_libs)
    if problems:
        return ("libraries", "fail", f"needed from outside the wheel and the manylinux allow-list: "
                f"{'; '.join(problems[:8])}{' ...' if len(problems) > 8 else ''} (build with --bundle-libs)")
    extra = f"; build-machine run paths left: {'; '.join(leaks[:3])}" if leaks else ""
    return ("libraries", "ok", f"{count} ELF files need only the wheel and the manylinux allow-list{extra}")


def hidden_paths(prefix: str | None) -> list[str]:
    """What to hide from the import test: the build's LLVM prefix, and the files its lib/ links point to outside
    it (Debian's /usr/lib/llvm-22/lib/libLLVM.so.22.1 is a link into /usr/lib/x86_64-linux-gnu)."""
    if not prefix or not Path(prefix).is_absolute() or not Path(prefix).is_dir():
        return []
    root = Path(prefix).resolve()
    if root == Path("/"):
        return []
    out = [str(root)]
    for lib in sorted((root / "lib").glob("lib*.so*")):
        real = lib.resolve()
        if real.is_file() and not real.is_relative_to(root) and str(real) not in out:
            out.append(str(real))
    return out


def _hiding(argv: list[str], hide: list[str], tmp: Path) -> tuple[list[str], str | None]:
    """``argv`` run in a private mount namespace with an empty dir (or file) mounted over each hidden path
    (``tritonbuild.wheel.hide``: argument lists, no shell); or the reason that cannot be done here."""
    unshare = tool("unshare")
    if unshare is None:
        return argv, "unshare (util-linux) is not installed"
    (tmp / "empty-dir").mkdir(exist_ok=True)
    (tmp / "empty-file").touch()
    flags = ["--mount"] if hasattr(os, "geteuid") and os.geteuid() == 0 else ["--mount", "--map-root-user"]
    hider = [unshare, *flags, sys.executable, "-m", "tritonbuild.wheel.hide", str(tmp / "empty-dir"),
             str(tmp / "empty-file"), *hide, "--"]
    probe = run(hider, cwd=tmp)
    if not probe.ok:
        why = (probe.output.splitlines() or [f"exit code {probe.returncode}"])[-1]
        return argv, f"cannot mount over the LLVM prefix here ({why})"
    return [*hider, *argv], None


def _compile_checks(venv: Path, backends: list[str], timeout: int, version: str | None) -> list[Check]:
    """The kernel corpus compiled with the wheel installed in ``venv`` (tritonbuild.resolve.compilecheck)."""
    from tritonbuild.resolve import compilecheck
    from tritonbuild.wheel import compilecheck_run

    site = next(iter(sorted(venv.glob("lib/python*/site-packages"))), venv)
    plan = compilecheck.plan_check(True, timeout, backends, triton_version=version)
    try:
        results = compilecheck_run.run_check(str(venv / "bin" / "python"), site, plan, on_path=False)
    except RuntimeError as exc:
        return [("compile", "fail", str(exc))]
    bad = compilecheck.failures(results)
    detail = f"{compilecheck.counts_line(compilecheck.summarize(results))} ({', '.join(backends)})"
    if bad:
        detail += ": " + "; ".join(compilecheck.describe_result(r) for r in bad[:6])
    return [("compile", status(not bad), detail)]


def _discovered(stdout: str) -> list[str] | None:
    """The backend list the import test printed last, or None when it printed something else."""
    lines = stdout.strip().splitlines()
    try:
        found = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    return found if isinstance(found, list) and all(isinstance(x, str) for x in found) else None


def _import_check(wheel: Path, python: str, expected: list[str], prefix: str | None, tmp_root: Path) -> list[Check]:
    venv = tmp_root / "venv"
    from tritonbuild.proc import venv_with

    error = venv_with(python, venv, ["--no-index", "--no-deps", str(wheel)])
    if error:
        return [("import", "fail", error[-400:])]
    code = "import json, triton; from triton.backends import backends; print(json.dumps(sorted(backends)))"
    hide = hidden_paths(prefix)
    argv = [str(venv / "bin" / "python"), "-c", code]
    if hide:
        argv, why_not = _hiding(argv, hide, tmp_root)
    else:
        why_not = (f"the wheel's LLVM prefix {prefix} is not on this machine, nothing to hide" if prefix else
                   "no LLVM prefix recorded in the wheel")
    res = run(argv, cwd=tmp_root)
    hidden = f" with {hide[0]} hidden" if why_not is None else ""
    checks: list[Check] = []
    found = _discovered(res.stdout) if res.ok else None
    if not res.ok or found is None:
        last = (res.stderr.strip().splitlines() or ["printed no backend list" if res.ok else "no output"])[-1]
        checks.append(("import", "fail", f"fresh venv{hidden}: {last}"))
    else:
        checks.append(("import", status(found == expected), f"fresh venv{hidden} discovers {', '.join(found)}"))
    if why_not:
        checks.append(("hidden-llvm", "skip", why_not))
    return checks


def _patch_words(patches: tuple[tuple[str, str], ...]) -> str:
    """The patches a wheel's provenance names, printable whatever the wheel holds (control characters quoted)."""
    def one(text: str) -> str:
        return (text if text.isprintable() else repr(text))[:200]

    more = f"; and {len(patches) - 5} more" if len(patches) > 5 else ""
    return "; ".join(f"{one(path)} (sha256 {one(digest)})" for path, digest in patches[:5]) + more + \
        " applied to the source"


def _contents(wheel: Path, zf: zipfile.ZipFile, tmp: Path) -> tuple[list[Check], Provenance | None, list[str]]:
    """The checks that read the wheel's members; the provenance and the backends the import should find."""
    found = structure(wheel, zf)
    checks, info, eps = [*found.checks], found.info, found.eps
    checks += _backend_checks(zf, info, eps)
    if info is not None:
        checks.append(("reproducible", "ok", "yes: no build-machine paths, fixed zip metadata, the same bytes "
                       "from any checkout dir" if info.reproducible else "no (built without --reproducible)"))
    if info is not None and info.patches:
        checks.append(("patches", "note", _patch_words(info.patches)))
    system = elf.SYSTEM_LIBS | frozenset(info.system_libs if info else ())
    checks.append(_elf_check(zf, tmp, system))
    expected = list(info.backends) if info and info.backends else eps if isinstance(eps, list) else []
    return checks, info, expected


def verify(wheel: Path, *, python: str | None = None, import_test: bool = True,
           compile_timeout: int | None = None) -> list[Check]:
    """Every check of the wheel; ``compile_timeout`` (seconds per kernel) also runs the compile check. A wheel
    that is not a safe zip gets one failed ``wheel`` check and nothing else (it is not installed)."""
    with tempfile.TemporaryDirectory(prefix="tritonbuild-verify-") as tmp:
        try:
            with zipguard.open_wheel(wheel) as zf:
                checks, info, expected = _contents(wheel, zf, Path(tmp))
        except zipguard.BadWheel as exc:
            return [("wheel", "fail", f"not a readable wheel: {exc}")]
        if import_test:
            prefix = info.llvm_prefix if info else None
            checks += _import_check(wheel, python or sys.executable, expected, prefix, Path(tmp))
            if compile_timeout is not None and (Path(tmp) / "venv" / "bin" / "python").exists():
                version = wheel.name.split("-")[1] if wheel.name.count("-") >= 4 else None
                checks += _compile_checks(Path(tmp) / "venv", expected, compile_timeout, version)
    return checks


def wheel_tags(wheel: Path) -> tuple[str, str]:
    """The Python and ABI tags of the wheel's file name (name-version[-build]-python-abi-platform.whl);
    ``BadWheel`` when the name does not parse."""
    parts = wheel.name.removesuffix(".whl").split("-")
    if not wheel.name.endswith(".whl") or len(parts) not in (5, 6) or not all(parts):
        raise zipguard.BadWheel(f"the file name {wheel.name!r} is not a wheel's "
                                "(name-version[-build]-python-abi-platform.whl)")
    py, abi = parts[-3], parts[-2]
    if abi == "abi3" and not (py.startswith("cp3") and py[3:].isdigit()):
        raise zipguard.BadWheel(f"the file name {wheel.name!r} pairs abi3 with {py!r}, not a CPython tag (cp312)")
    return py, abi


def interpreter_for(wheel: Path, given: Sequence[str]) -> str:
    """The interpreter that imports ``wheel``: for an interpreter-specific wheel (cp312-cp312, cp313-cp313t) the
    given one of that ABI, else this one when it fits, else one of that version found as ``--python cp312``
    would find it; for a cp312-abi3 wheel the same with any CPython from 3.12 on."""
    py, abi = wheel_tags(wheel)
    if abi == "none":
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
