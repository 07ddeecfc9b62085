"""Wheels nobody should trust, given to `verify` and `compare` through the real CLI (#35), and a wheel that
tritonbuild did not build (#39): a finding with one clear paragraph or row, never a traceback, nothing written
outside a temp dir, memory bounded by caps rather than by what a header claims."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import BACKENDS_INIT, DIST, EPS, PACKAGE, digest, json_out, make_wheel
from tests.integration.conftest import cuda_stub, flat, one_paragraph, run_cli, subdir, verify

NAME = "triton-3.6.0-py3-none-any.whl"


def info_for(prefix: str | None = None) -> dict[str, object]:
    return {"backends": [{"name": "nvidia"}], "wheel": {"reproducible": False, "system_libs": []},
            "llvm": {"prefix": prefix}}


# Started by a small launcher, not by pytest's worker: a child forked from a process keeps that process's peak RSS
# in its own ru_maxrss across exec (Linux), so a worker grown to 300 MB by earlier tests made every child "use" that.
_LAUNCHER = """import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss * 1024))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def rss_of(argv: list[str], cwd: Path) -> tuple[int, str, int]:
    """Exit code, stdout+stderr and the peak RSS (bytes) of one child, from wait4 (that child alone), forked by a
    fresh small launcher."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "CUDA_HOME": cuda_stub()}
    report = cwd / "rss.txt"
    proc = subprocess.run([sys.executable, "-c", _LAUNCHER, str(report), *argv], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return proc.returncode, proc.stdout.decode(errors="replace"), int(report.read_text())


# --- finding 1: no shell, and the hidden-LLVM check really runs (or says it was skipped) -----------------------

def llvm_prefix(tmp_path: Path) -> tuple[Path, Path]:
    """A fake LLVM prefix with hostile characters in its name, and a library its lib/ links to outside it."""
    prefix = tmp_path / "llvm ;touch INJECTED; 'q\""
    outside = tmp_path / "libs dir;touch INJECTED2;" / "libLLVM.so.22.1"
    (prefix / "lib").mkdir(parents=True)
    outside.parent.mkdir()
    outside.write_bytes(b"\x7fELF not really")
    (prefix / "lib" / "libLLVM.so.22").symlink_to(outside)
    return prefix, outside


def seeing_wheel(tmp_path: Path, prefix: Path, outside: Path) -> Path:
    """A wheel whose import fails when it can see the LLVM prefix or the library outside it: it imports only
    when the hiding really happened."""
    init = (f"import os\nif os.listdir({str(prefix)!r}) or os.path.getsize({str(outside)!r}):\n"
            "    raise ImportError('the build machine LLVM is visible')\n").encode()
    return make_wheel(tmp_path / NAME, {**PACKAGE, "triton/__init__.py": init}, info=info_for(str(prefix)))


def test_verify_hides_the_llvm_with_no_shell_whatever_tmpdir_holds(tmp_path: Path) -> None:
    prefix, outside = llvm_prefix(tmp_path)
    wheel = seeing_wheel(tmp_path, prefix, outside)
    hostile_tmp = tmp_path / "tmp a;touch INJECTED;'b"
    hostile_tmp.mkdir()
    proc = verify(str(wheel), cwd=tmp_path, env={"TMPDIR": str(hostile_tmp)})
    out = flat(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ok import: fresh venv with {prefix.resolve()} hidden discovers nvidia" in out, out
    assert "hidden-llvm" not in out  # ran, so not reported as skipped
    assert not list(tmp_path.rglob("INJECTED*")) and not list(Path.cwd().glob("INJECTED*"))
    assert outside.read_bytes() == b"\x7fELF not really" and os.listdir(prefix) == ["lib"]  # host untouched


def test_a_hidden_check_that_cannot_run_is_shown_skipped_with_the_reason(tmp_path: Path) -> None:
    prefix, outside = llvm_prefix(tmp_path)
    wheel = seeing_wheel(tmp_path, prefix, outside)
    fake = tmp_path / "bin" / "unshare"  # stands in for a kernel that refuses mount namespaces
    fake.parent.mkdir()
    fake.write_text(f"#!{sys.executable}\nimport sys\n"
                    "print('unshare: unshare failed: Operation not permitted', file=sys.stderr)\nsys.exit(1)\n")
    fake.chmod(0o755)
    proc = verify(str(wheel), cwd=tmp_path, env={"PATH": f"{fake.parent}:{os.environ['PATH']}"})
    out = flat(proc.stdout)
    assert "skip hidden-llvm: cannot mount over the LLVM prefix here (unshare: unshare failed: Operation not " \
           "permitted)" in out, out
    assert "ok hidden-llvm" not in out
    assert proc.returncode == 1 and "FAIL import: fresh venv: ImportError: the build machine LLVM is visible" in out


# --- finding 2: zip bombs, lying headers, unsafe names ---------------------------------------------------------

def bomb(path: Path, member: str, size: int) -> Path:
    """A wheel whose ``member`` inflates to ``size`` bytes of CSV-looking text, written streaming."""
    make_wheel(path, PACKAGE, info=info_for())
    line = b"triton/x.py,sha256=AAAA,1\n" * 4096
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo(member)
        info.compress_type = zipfile.ZIP_DEFLATED
        with zf.open(info, "w", force_zip64=True) as f:
            for _ in range(size // len(line)):
                f.write(line)
    return path


def test_a_record_bomb_is_refused_from_its_header_in_bounded_memory(tmp_path: Path) -> None:
    wheel = bomb(tmp_path / NAME, f"{DIST}/RECORD2", 200 << 20)
    assert wheel.stat().st_size < 2 << 20
    rc, out, rss = rss_of([sys.executable, "-m", "tritonbuild", "verify", "--no-import", str(wheel)], tmp_path)
    text = flat(out)
    assert rc == 1 and "Traceback" not in out, out
    assert f"FAIL wheel: not a readable wheel: member '{DIST}/RECORD2' inflates" in text, text
    assert "200.0 MiB (a zip bomb? at most 100 times is read)" in text, text
    assert rss < 300 << 20, rss


def lie_about_size(path: Path, member: str, claimed: int) -> None:
    """Rewrite ``member``'s uncompressed size in its local and central headers (the data stays)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        local = zf.getinfo(member).header_offset
        central = next(i for i in range(zf.start_dir, len(data)) if data[i:i + 4] == b"PK\x01\x02"
                       and data[i + 46:i + 46 + len(member)] == member.encode())
    assert data[local:local + 4] == b"PK\x03\x04"
    data[local + 22:local + 26] = claimed.to_bytes(4, "little")
    data[central + 24:central + 28] = claimed.to_bytes(4, "little")
    path.write_bytes(bytes(data))


def test_a_member_that_inflates_past_its_header_is_a_finding_not_a_memory_blowup(tmp_path: Path) -> None:
    big = b"0123456789abcdef" * (4 << 20)  # 64 MiB that the header will call 1000 bytes
    files = {**PACKAGE, "triton/_C/libfake.bin": big}
    wheel = make_wheel(tmp_path / NAME, files, info=info_for())
    lie_about_size(wheel, "triton/_C/libfake.bin", 1000)
    # the same verify of a small honest wheel first: its peak is the interpreter's and the libraries' (a fresh venv
    # also compiles their bytecode, ~100 MiB more than a warm one), which the lying member must not add 64 MiB to
    (tmp_path / "small").mkdir()
    small = make_wheel(tmp_path / "small" / NAME, {**PACKAGE, "triton/_C/libfake.bin": b"x" * 1000}, info=info_for())
    _, _, baseline = rss_of([sys.executable, "-m", "tritonbuild", "verify", "--no-import", str(small)], tmp_path)
    rc, out, rss = rss_of([sys.executable, "-m", "tritonbuild", "verify", "--no-import", str(wheel)], tmp_path)
    text = flat(out)
    assert rc == 1 and "Traceback" not in out, out
    assert "FAIL RECORD: triton/_C/libfake.bin cannot be read (Bad CRC-32" in text, text
    assert rss < baseline + (32 << 20), (rss, baseline)


@pytest.mark.parametrize(("bad_name", "why"), [
    ("../evil.py", "it contains '..'"),
    ("/etc/evil.py", "it is an absolute path"),
    ("triton\\..\\..\\evil.py", "it holds a backslash"),
    ("C:/evil.py", "it starts with a drive letter"),
    ("triton/evil.py\0.txt", "it holds a NUL byte"),
])
def test_unsafe_member_names_are_findings_and_nothing_lands_outside(tmp_path: Path, bad_name: str,
                                                                    why: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    stored = bad_name.replace("\0", "@")  # zipfile cuts names at NUL: the NUL goes into the bytes afterwards
    wheel = make_wheel(tmp_path / NAME, {**PACKAGE, stored: b"\x7fELF" + bytes(100)}, info=info_for())
    wheel.write_bytes(wheel.read_bytes().replace(stored.encode(), bad_name.encode()))
    proc = verify("--no-import", str(wheel), cwd=work)
    out = flat(proc.stdout)
    assert proc.returncode == 1 and f"FAIL wheel: not a readable wheel: member {bad_name!r} is unsafe: {why}" \
        in out, out
    assert not (tmp_path / "evil.py").exists() and not list(work.rglob("*evil*"))
    cmp = run_cli("compare", str(wheel), str(wheel), cwd=work, check=False)
    assert cmp.returncode == 1 and "Traceback" not in cmp.stderr
    assert f"{wheel} is not a readable wheel: member {bad_name!r} is unsafe" in one_paragraph(cmp.stderr)


def test_a_symbolic_link_member_is_a_finding(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / NAME, PACKAGE, info=info_for())
    with zipfile.ZipFile(wheel, "a") as zf:
        link = zipfile.ZipInfo("triton/_C/libc.so")
        link.external_attr = (0o120777 << 16)
        zf.writestr(link, "/lib/x86_64-linux-gnu/libc.so.6")
    proc = verify("--no-import", str(wheel), cwd=tmp_path)
    assert proc.returncode == 1
    assert "member 'triton/_C/libc.so' is a symbolic link (a wheel holds regular files)" in flat(proc.stdout)


def test_record_paths_outside_the_wheel_never_pass_the_record_check(tmp_path: Path) -> None:
    members = {**PACKAGE, "triton/_build_info.json": json.dumps(info_for()).encode()}
    rows = [f"{n},{digest(d)},{len(d)}" for n, d in members.items()]
    rows += [f"../../etc/passwd,{digest(b'')},0", f"/etc/shadow,{digest(b'')},0"]
    record = "\n".join([*rows, f"{DIST}/METADATA,{digest(b'x')},1", f"{DIST}/RECORD,,"]) + "\n"
    wheel = make_wheel(tmp_path / NAME, PACKAGE, info=info_for(), record=record)
    proc = verify("--no-import", str(wheel), cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 1 and "FAIL RECORD:" in out
    assert "names '../../etc/passwd': it contains '..'" in out, out
    assert "names '/etc/shadow': it is an absolute path" in out


def test_a_needed_library_reached_through_origin_dot_dot_on_the_host_is_not_inside_the_wheel(
        tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "dep.c").write_text("int f(void) { return 0; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host / "libhostdep.so"), str(host / "dep.c")], check=True)
    (host / "lib.c").write_text("int f(void);\nint g(void) { return f(); }\n")
    escape = "$ORIGIN/" + "../" * 40 + str(host).lstrip("/")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(host / "libtriton.so"), str(host / "lib.c"), f"-L{host}",
                    "-Wl,--no-as-needed", "-lhostdep", f"-Wl,-rpath,{escape}"], check=True)
    wheel = make_wheel(tmp_path / NAME, {**PACKAGE, "triton/_C/libtriton.so": (host / "libtriton.so").read_bytes()},
                       info=info_for())
    proc = verify("--no-import", str(wheel), cwd=tmp_path)
    assert proc.returncode == 1 and "triton/_C/libtriton.so needs libhostdep.so" in flat(proc.stdout), proc.stdout


# --- finding 3: malformed wheels are findings (exit 1, one row), missing paths bad input (exit 2) --------------

def malformed(tmp_path: Path, case: str) -> Path:
    path = tmp_path / NAME
    good = {**PACKAGE}
    if case == "truncated":
        make_wheel(path, {**good, "triton/_C/data.bin": os.urandom(200_000)}, info=info_for())
        path.write_bytes(path.read_bytes()[:150_000])
    elif case == "not a zip":
        path.write_text("this is not a zip archive\n")
    elif case == "RECORD with one column":
        make_wheel(path, good, info=info_for(), record="triton/__init__.py\n")
    elif case == "RECORD not UTF-8":
        make_wheel(path, good, info=info_for(), record=b"triton/__init__.py,\xff\xfe,0\n")
    elif case == "RECORD with a huge field":
        make_wheel(path, good, info=info_for(), record="triton/" + "x" * 200_000 + ",,\n")
    elif case == "RECORD with a weak hash and a bad size":
        make_wheel(path, good, info=info_for(), record=f"triton/__init__.py,md5=1B2M2Y8AsgTpgAmY7PhCfg,0\n"
                   f"triton/backends/__init__.py,{digest(BACKENDS_INIT)},many\n{DIST}/RECORD,,\n")
    elif case.startswith("build info "):
        raw = case.removeprefix("build info ")
        make_wheel(path, good, info=raw.encode("latin-1"))
    elif case == "entry points not UTF-8":
        make_wheel(path, good, info=info_for(), eps=b"[triton.backends]\nnvidia = \xff\n")
    elif case == "entry points malformed":
        make_wheel(path, good, info=info_for(), eps="nvidia = triton.backends.nvidia\n[triton.backends\n")
    elif case == "a name that does not parse":
        path = make_wheel(tmp_path / "triton-3.6.0.whl", good, info=info_for())
    return path


@pytest.mark.parametrize(("case", "expected"), [
    ("truncated", "FAIL wheel: not a readable wheel: not a zip archive, or a truncated one"),
    ("not a zip", "FAIL wheel: not a readable wheel: not a zip archive, or a truncated one (File is not a zip"),
    ("RECORD with one column", "FAIL RECORD: RECORD line 1 has 1 columns, not 3"),
    ("RECORD not UTF-8", f"FAIL RECORD: {DIST}/RECORD is not UTF-8 text (line 1: invalid start byte)"),
    ("RECORD with a huge field", "FAIL RECORD: RECORD line 1 is not CSV (field larger than field limit"),
    ("RECORD with a weak hash and a bad size", "FAIL RECORD: triton/__init__.py has no sha256 (or stronger) hash in "
     "RECORD ('md5=1B2M2Y8AsgTpgAmY'); RECORD line 2: the size of triton/backends/__init__.py is 'many'"),
    ("build info {not json", "FAIL provenance: triton/_build_info.json is not JSON"),
    ("build info {\"x\": \"\xe9\"}", "FAIL provenance: triton/_build_info.json is not UTF-8 text (line 1"),
    ('build info {"backends": 5}', "FAIL provenance: triton/_build_info.json: 'backends' is 5, not a list"),
    ('build info {"wheel": []}', "FAIL provenance: triton/_build_info.json: 'wheel' is [], not an object"),
    ('build info {"llvm": "x"}', "FAIL provenance: triton/_build_info.json: 'llvm' is \"x\", not an object"),
    ('build info [1, 2]', "FAIL provenance: triton/_build_info.json: is [1, 2], not a JSON object"),
    ('build info {"wheel": {"reproducible": "yes"}}', "'wheel.reproducible' is \"yes\", not true or false"),
    ("entry points not UTF-8", f"FAIL backends: {DIST}/entry_points.txt is not UTF-8 text (line 2"),
    ("entry points malformed", f"FAIL backends: {DIST}/entry_points.txt is not an INI file (File contains no "
                               "section headers."),
    ("a name that does not parse", "FAIL wheel: not a readable wheel: the file name 'triton-3.6.0.whl' is not a "
                                   "wheel's (name-version[-build]-python-abi-platform.whl)"),
])
def test_a_malformed_wheel_is_a_finding_with_one_reason(tmp_path: Path, case: str, expected: str) -> None:
    wheel = malformed(tmp_path, case)
    proc = verify("--no-import", str(wheel), cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in flat(proc.stdout), proc.stdout
    assert not proc.stderr.strip(), proc.stderr


def test_build_info_nested_100000_deep_is_a_failed_row_not_a_recursion_error(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / NAME, PACKAGE, info=DEEP)
    for args in (["--no-import"], []):
        proc = verify(*args, str(wheel), cwd=tmp_path)
        assert proc.returncode == 1 and not proc.stderr.strip(), proc.stdout + proc.stderr
        assert "FAIL provenance: triton/_build_info.json is JSON nested too deep to read" in flat(proc.stdout)
        assert "ok RECORD:" in flat(proc.stdout)  # the other checks still ran


def test_a_name_that_does_not_parse_is_a_finding_with_the_import_test_too(tmp_path: Path) -> None:
    wheel = malformed(tmp_path, "a name that does not parse")
    proc = verify(str(wheel), cwd=tmp_path)
    assert proc.returncode == 1 and "FAIL wheel: not a readable wheel: the file name" in flat(proc.stdout)


def test_a_missing_path_or_a_directory_is_bad_input(tmp_path: Path) -> None:
    good = make_wheel(tmp_path / NAME, PACKAGE, info=info_for())
    cases = ((tmp_path / "missing.whl", "does not exist"), (tmp_path, "is not a regular file (a directory?)"))
    for given, words in cases:
        for args in (["verify", "--no-import", str(given)], ["compare", str(good), str(given)]):
            proc = run_cli(*args, cwd=tmp_path, check=False)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
            assert f"The wheel {given} {words}. Give the path of a .whl file." in one_paragraph(proc.stderr)
            assert not proc.stdout  # checked before any wheel was read


# --- finding 4: compare reads both wheels the same way; a bad allow-list names its file and line ----------------

@pytest.mark.parametrize("case", ["truncated", "not a zip"])
def test_compare_refuses_a_malformed_wheel_on_either_side_with_one_paragraph(tmp_path: Path, case: str) -> None:
    good = make_wheel(subdir(tmp_path, "good") / NAME, PACKAGE)
    bad = malformed(tmp_path, case)
    for a, b in ((good, bad), (bad, good)):
        proc = run_cli("compare", str(a), str(b), "--json", cwd=tmp_path, check=False)
        assert "Traceback" not in proc.stderr
        assert proc.returncode == 1, proc.stderr
        assert f"{bad} is not a readable wheel:" in one_paragraph(proc.stderr)
        error = json_out(proc.stdout, 1)["error"]  # stdout: the same finding, as the error envelope
        assert error["kind"] == "bad wheel" and f"{bad} is not a readable wheel:" in error["message"]


DEEP = b"[" * 100_000 + b"]" * 100_000


def malformed_inside(tmp_path: Path, case: str) -> Path:
    """A zip that opens safely but is not a well-formed wheel: what verify's structural checks find."""
    path = subdir(tmp_path, "bad") / NAME
    if case == "RECORD garbage":
        return make_wheel(path, PACKAGE, record="garbage,,,\n\x00\n,sha256=zzz,abc\n")
    if case in ("no RECORD", "RECORD hash wrong"):  # a good wheel, copied without its RECORD or with a change
        full = make_wheel(tmp_path / "full.whl", PACKAGE)
        with zipfile.ZipFile(full) as src, zipfile.ZipFile(path, "w") as zf:
            for name in src.namelist():
                if case == "RECORD hash wrong" or not name.endswith("/RECORD"):
                    zf.writestr(name, b"x = 1\n" if name == "triton/__init__.py" else src.read(name))
        return path
    if case == "entry points malformed":
        return make_wheel(path, PACKAGE, eps="nvidia = triton.backends.nvidia\n[triton.backends\n")
    info = {"build info wrong-typed": b'{"backends": 5}', "build info not UTF-8": b'{"x": "\xe9"}',
            "build info nested 100,000 deep": DEEP}[case]
    return make_wheel(path, PACKAGE, info=info)


@pytest.mark.parametrize(("case", "expected"), [
    ("RECORD garbage", "RECORD: RECORD line 1 has 4 columns, not 3 (path,hash,size); RECORD line 2 has 1 columns"),
    ("no RECORD", "RECORD: the wheel has no .dist-info/RECORD"),
    ("RECORD hash wrong", "RECORD: triton/__init__.py does not match its RECORD hash"),
    ("entry points malformed", f"entry points: {DIST}/entry_points.txt is not an INI file (File contains no section"),
    ("build info wrong-typed", "provenance: triton/_build_info.json: 'backends' is 5, not a list of objects"),
    ("build info not UTF-8", "provenance: triton/_build_info.json is not UTF-8 text (line 1"),
    ("build info nested 100,000 deep", "provenance: triton/_build_info.json is JSON nested too deep to read"),
])
def test_compare_runs_verifys_structural_checks_and_names_the_malformed_wheel(tmp_path: Path, case: str,
                                                                              expected: str) -> None:
    """#35: these wheels open as safe zips, so compare used to compare them (exit 0 for a wheel with itself)."""
    good = make_wheel(subdir(tmp_path, "good") / NAME, PACKAGE, info=info_for())
    bad = malformed_inside(tmp_path, case)
    for pair in ((bad, bad), (good, bad), (bad, good)):
        proc = run_cli("compare", *map(str, pair), cwd=tmp_path, check=False)
        assert proc.returncode == 1 and not proc.stdout, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr and "no unaccepted differences" not in proc.stderr
        text = one_paragraph(proc.stderr)
        assert f"{bad} is a malformed wheel: {expected}" in text, text
        assert "Nothing was compared" in text
    checked = verify("--no-import", str(bad), cwd=tmp_path)  # the same finding, from the same checks
    assert checked.returncode == 1 and expected.split(": ", 1)[1] in flat(checked.stdout), checked.stdout
    assert run_cli("compare", str(good), str(good), cwd=tmp_path, check=False).returncode == 0


def test_compare_refuses_a_bomb_in_bounded_memory(tmp_path: Path) -> None:
    good = make_wheel(tmp_path / NAME, PACKAGE)
    wheel = bomb(subdir(tmp_path, "b") / NAME, f"{DIST}/METADATA2", 200 << 20)
    rc, out, rss = rss_of([sys.executable, "-m", "tritonbuild", "compare", str(good), str(wheel)], tmp_path)
    assert rc == 1 and "Traceback" not in out and "a zip bomb?" in flat(out), out
    assert rss < 300 << 20, rss


@pytest.mark.parametrize(("content", "expected"), [
    (b"# fine\nonly-a triton/x.py  # ok\nmetadata Version \xe9\n",
     "allow:3: the allow-list is not UTF-8 text (invalid continuation byte at byte"),
    (b"only-a triton/x.py\nonly-a\n", "allow:2: 'only-a' is not an allow rule"),
    (b"needed a b c\n", "allow:1: 'needed a b c' is not an allow rule"),
])
def test_a_bad_allow_list_is_bad_input_naming_file_and_line(tmp_path: Path, content: bytes, expected: str) -> None:
    a = make_wheel(tmp_path / NAME, PACKAGE)
    allow = tmp_path / "allow"
    allow.write_bytes(content)
    proc = run_cli("compare", str(a), str(a), "--allow", str(allow), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{tmp_path}/{expected}" in one_paragraph(proc.stderr), proc.stderr
    missing = run_cli("compare", str(a), str(a), "--allow", str(tmp_path / "nope"), cwd=tmp_path, check=False)
    assert missing.returncode == 2 and "The allow-list" in missing.stderr and "does not exist" in missing.stderr


# --- issue #39: a wheel tritonbuild did not build ---------------------------------------------------------------

def test_a_wheel_without_build_info_is_a_note_and_its_backends_come_from_entry_points(tmp_path: Path) -> None:
    eps = "[console_scripts]\nproton = triton.profiler.proton:main\n\n" + EPS
    wheel = make_wheel(tmp_path / NAME, PACKAGE, eps=eps)
    proc = verify(str(wheel), cwd=tmp_path)
    out = flat(proc.stdout)
    assert proc.returncode == 0, out
    assert "note provenance: not built by tritonbuild: no triton/_build_info.json; backends taken from entry " \
           "points" in out
    assert "ok backends: nvidia" in out and "ok import: fresh venv discovers nvidia" in out
    assert "skip hidden-llvm: no LLVM prefix recorded in the wheel" in out
    mismatched = make_wheel(subdir(tmp_path, "other") / NAME, PACKAGE, eps=EPS + "amd = triton.backends.amd\n")
    proc = verify("--no-import", str(mismatched), cwd=tmp_path)
    assert proc.returncode == 1
    assert "FAIL backends: entry points ['amd', 'nvidia'], backend dirs ['nvidia'] differ" in flat(proc.stdout)
