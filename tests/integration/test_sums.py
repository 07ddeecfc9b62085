"""SHA256SUMS read as ``sha256sum -c`` reads it (#44): ``verify``'s verdict on the wheel's lines agrees with GNU
``sha256sum -c`` run in the wheel's dir, on generated files of every line form it reads (and some it does not),
and what tritonbuild writes reads the same in both."""

from __future__ import annotations

import hashlib
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import make_wheel
from tests.integration.conftest import flat, run_cli
from tritonbuild.wheel import sums
from tritonbuild.wheel.checks.base import Context, Finding
from tritonbuild.wheel.checks.provenance_file import ProvenanceFile, matching

SHA256SUM = "/usr/bin/sha256sum"
NAME = "triton-3.6.0-py3-none-any.whl"
BAD = "f" * 64

pytestmark = pytest.mark.skipif(not os.access(SHA256SUM, os.X_OK), reason="GNU sha256sum is not installed")


def wheel_dir(tmp_path: Path, data: bytes = b"not a zip, but a file") -> tuple[Path, str]:
    """A dir holding only the file ``NAME`` (``data``) and a real dir ``sub``; its sha256."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / NAME).write_bytes(data)
    (tmp_path / "sub").mkdir(exist_ok=True)
    return tmp_path, hashlib.sha256(data).hexdigest()


def ours(directory: Path, text: bytes) -> Finding:
    """The SHA256SUMS finding of the provenance-file check for ``directory/NAME`` with ``text`` as SHA256SUMS."""
    (directory / "SHA256SUMS").write_bytes(text)
    empty = directory.parent / f"{directory.name}.zip"
    zipfile.ZipFile(empty, "w").close()
    with zipfile.ZipFile(empty) as zf:
        ctx = Context(wheel=directory / NAME, zf=zf, tmp=directory.parent, info=None, info_problem=None, eps=[])
        found = [f for f in ProvenanceFile().run(ctx) if f.check == "SHA256SUMS"]
    assert len(found) == 1, found
    return found[0]


def theirs(directory: Path) -> tuple[int, int]:
    """How many lines GNU ``sha256sum -c --ignore-missing`` run in ``directory`` found OK and FAILED: the wheel is
    the only regular file there other than SHA256SUMS, and no generated name opens SHA256SUMS."""
    proc = subprocess.run([SHA256SUM, "-c", "--ignore-missing", "SHA256SUMS"], cwd=directory, capture_output=True,
                          check=False, timeout=30)
    lines = proc.stdout.splitlines()
    return sum(x.endswith(b": OK") for x in lines), sum(x.endswith(b": FAILED") for x in lines)


def counts(directory: Path, text: bytes, sha: str) -> tuple[int, int]:
    found = [line for line, _ in matching(directory, sums.read(text), {NAME: sha})]  # type: ignore[arg-type]
    return sum(line.digest == sha for line in found), sum(line.digest != sha for line in found)


def escape(name: bytes) -> bytes:
    return name.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\r", b"\\r")


NAMES = st.sampled_from([NAME.encode(), b"./" + NAME.encode(), b".//./" + NAME.encode(), b"sub/../" + NAME.encode(),
                         b"sub//..//" + NAME.encode(), b"nosub/../" + NAME.encode(), b"../" + NAME.encode(),
                         b" " + NAME.encode(), b"*" + NAME.encode(), NAME.encode() + b" ", NAME.encode() + b"\r",
                         NAME.encode() + b"\0junk", NAME.encode() + b"/", b"other.whl", b"a\\b", b"a\nb", b"x)y",
                         NAME.encode().upper(), b"@ABS@"])


@st.composite
def sums_line(draw: st.DrawFn, sha: str) -> bytes:
    """One line of a SHA256SUMS file: any form sha256sum reads, or a near miss of one."""
    name = draw(NAMES)
    digest = draw(st.sampled_from([sha, sha.upper(), BAD, sha[:63], sha + "0", "g" * 64])).encode()
    lead = draw(st.sampled_from([b"", b" ", b"\t", b"#"]))
    escaped = draw(st.booleans())
    written = escape(name) if escaped else name
    form = draw(st.sampled_from(["text", "binary", "reversed", "tab", "tag", "tag-tight", "tag-loose", "junk"]))
    body = {"text": digest + b"  " + written, "binary": digest + b" *" + written, "reversed": digest + b" " + written,
            "tab": digest + b"\t " + written, "tag": b"SHA256 (" + written + b") = " + digest,
            "tag-tight": b"SHA256(" + written + b")=" + digest,
            "tag-loose": b"SHA256 (" + written + b")\t= \t" + digest,
            "junk": draw(st.binary(max_size=80)).replace(b"\n", b"")}[form]
    end = draw(st.sampled_from([b"\n", b"\r\n", b"\r\r\n"]))
    return lead + (b"\\" if escaped else b"") + body + end


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_our_verdict_on_every_line_agrees_with_sha256sum(tmp_path_factory: pytest.TempPathFactory,
                                                        data: st.DataObject) -> None:
    directory, sha = wheel_dir(tmp_path_factory.mktemp("sums") / "out")
    lines = data.draw(st.lists(sums_line(sha), min_size=1, max_size=6))
    text = b"".join(lines).replace(b"@ABS@", os.fsencode(directory / NAME))
    if data.draw(st.booleans()):
        text = text.rstrip(b"\n")  # no newline at the end
    finding = ours(directory, text)
    ok, failed = theirs(directory)
    assert counts(directory, text, sha) == (ok, failed), text
    expected = "fail" if failed else "ok" if ok else "note"
    assert finding.status == expected, (text, finding)


@pytest.mark.parametrize(("text", "status"), [
    (f"{BAD}  ./{NAME}\n", "fail"),  # the finding of #44: read as the wheel, as sha256sum reads it
    (f"{BAD} *{NAME}\n", "fail"),  # binary mode
    (f"@GOOD@ *{NAME}\n", "ok"),
    (f"SHA256 ({NAME}) = {BAD}\n", "fail"),  # BSD tag
    (f"SHA256 ({NAME}) = @GOOD@\n", "ok"),
    (f"\\{BAD}  sub/../{NAME}\n", "fail"),  # escaped form (nothing to escape), via a real dir
    (f"@GOOD@  {NAME}\r\n{BAD}  ./{NAME}\r\n", "fail"),  # CRLF: sha256sum drops the CR; every line counts
    (f"@GOOD@  {NAME}\r\n", "ok"),
    (f"{BAD}  {NAME}\r\r\n", "note"),  # only one CR is dropped: the name ends with a CR, no such file
    (f"#{BAD}  {NAME}\n@GOOD@  {NAME}\n", "ok"),  # a comment
    (f"@GOOD@  {NAME}\n{BAD} {NAME}\n", "ok"),  # one blank after a standard line: malformed, skipped
    (f"{BAD}  ../{NAME}\n", "note"),  # above the dir: another file
])
def test_explicit_lines(tmp_path: Path, text: str, status: str) -> None:
    directory, sha = wheel_dir(tmp_path / "out")
    data = text.replace("@GOOD@", sha).encode()
    finding = ours(directory, data)
    assert finding.status == status, finding
    ok, failed = theirs(directory)
    assert status == ("fail" if failed else "ok" if ok else "note")
    if status == "fail":
        assert f"gives {NAME} the sha256 {BAD}" in finding.text or f"(that is {NAME})" in finding.text, finding


def test_an_escaped_name_and_a_hard_link_are_the_files_they_open(tmp_path: Path) -> None:
    directory, _ = wheel_dir(tmp_path / "out")
    odd = directory / "a\\b\nc.whl"
    odd.write_bytes(b"other")
    os.link(directory / NAME, directory / "linked.whl")
    text = sums.line(odd.name, hashlib.sha256(b"other").hexdigest()) + sums.line("linked.whl", BAD)
    assert text.startswith("\\")
    finding = ours(directory, text.encode())
    assert finding.status == "fail" and f"linked.whl (that is {NAME})" in finding.text, finding
    proc = subprocess.run([SHA256SUM, "-c", "SHA256SUMS"], cwd=directory, capture_output=True, check=False)
    assert proc.stdout.splitlines() == [b"\\a\\\\b\\nc.whl: OK", b"linked.whl: FAILED"], proc.stdout


def test_a_huge_or_long_sums_file_is_refused(tmp_path: Path) -> None:
    directory, _ = wheel_dir(tmp_path / "out")
    finding = ours(directory, b"\n" * (sums.MAX_LINES + 1))
    assert finding.status == "fail" and f"more than {sums.MAX_LINES} lines" in finding.text, finding
    finding = ours(directory, b" " * (sums.MAX_BYTES + 1))
    assert finding.status == "fail" and "is over 4 MiB" in finding.text, finding


def test_verify_fails_a_wrong_hash_for_dot_slash_the_wheel(tmp_path: Path) -> None:
    """The finding of #44 through the CLI: ``./<wheel>`` with a wrong hash was "does not list"."""
    (tmp_path / "d").mkdir()
    wheel = make_wheel(tmp_path / "d" / NAME, {"triton/__init__.py": b""})
    (tmp_path / "d" / "SHA256SUMS").write_text(f"{BAD}  ./{NAME}\n")
    proc = run_cli("verify", "--no-import", str(wheel), cwd=tmp_path, check=False)
    out = flat(proc.stdout)
    assert proc.returncode == 1 and f"FAIL SHA256SUMS: SHA256SUMS gives ./{NAME} (that is {NAME}) the sha256 " \
        f"{BAD}, but it is {hashlib.sha256(wheel.read_bytes()).hexdigest()} (line 1)" in out, out
    assert "Traceback" not in proc.stderr
