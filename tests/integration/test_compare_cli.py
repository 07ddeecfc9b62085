"""`tritonbuild compare` through the CLI on wheels with real ELF files: needed libraries and exit codes."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

from tests.helpers import WHEEL_FILES as BASE
from tests.helpers import json_out, one_of, wheel
from tests.integration.conftest import run_cli


def lib(tmp: Path, name: str, *link: str) -> bytes:
    src = tmp / f"{name}.c"
    src.write_text("int f(void);\nint g(void) { return 1; }\n" if link else "int f(void) { return 0; }\n")
    out = tmp / f"{name}.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src), f"-L{tmp}", *link], check=True)
    return out.read_bytes()


def test_compare_reports_elf_needs_and_exits_by_the_allow_list(tmp_path: Path) -> None:
    lib(tmp_path, "libdep")
    with_dep = lib(tmp_path, "withdep", "-Wl,--no-as-needed", "-ldep")
    plain = lib(tmp_path, "plain")
    a = wheel(tmp_path / "a.whl", {**BASE, "triton/_C/libtriton.so": with_dep})
    b = wheel(tmp_path / "b.whl", {**BASE, "triton/_C/libtriton.so": plain})
    proc = run_cli("compare", str(a), str(b), "--json", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    report = one_of(proc.stdout, "pairs")
    assert [(d["kind"], d["key"]) for d in report["differences"]] == [("needed", "triton/_C/libtriton.so:libdep.so")]
    assert "libdep.so" in report["elf"]["triton/_C/libtriton.so"]["a"]["needed"]
    allow = tmp_path / "allow"
    allow.write_text("needed triton/_C/libtriton.so:libdep.so  # bundled next to libtriton\n")
    ok = run_cli("compare", str(a), str(b), "--allow", str(allow), cwd=tmp_path)
    assert "no unaccepted differences" in ok.stdout and "bundled next to libtriton" in ok.stdout
    with zipfile.ZipFile(a) as zf:
        assert zf.read("triton/_C/libtriton.so")[:4] == b"\x7fELF"
    bad = run_cli("compare", str(a), str(tmp_path / "missing.whl"), cwd=tmp_path, check=False)
    assert bad.returncode == 2


def test_several_pairs_are_compared_in_order_and_an_odd_count_is_refused(tmp_path: Path) -> None:
    plain = lib(tmp_path, "plain")
    a = wheel(tmp_path / "a.whl", {**BASE, "triton/_C/libtriton.so": plain})
    b = wheel(tmp_path / "b.whl", {**BASE, "triton/_C/libtriton.so": plain})
    c = wheel(tmp_path / "c.whl", {**BASE, "triton/_C/libtriton.so": plain, "triton/extra.py": b"x = 1\n"})
    proc = run_cli("compare", str(a), str(b), str(a), str(c), "--json", cwd=tmp_path, check=False)
    first, second = json_out(proc.stdout)["pairs"]
    assert proc.returncode == 1 and not first["unaccepted"] and second["unaccepted"]
    odd = run_cli("compare", str(a), str(b), str(c), cwd=tmp_path, check=False)
    assert odd.returncode == 2 and "in pairs" in odd.stderr


def test_an_nvidia_tool_in_one_wheel_only_is_its_own_kind_that_only_its_own_rule_accepts(tmp_path: Path) -> None:
    plain = lib(tmp_path, "plain")
    tool = Path("/bin/true").read_bytes()
    official = wheel(tmp_path / "a.whl", {**BASE, "triton/_C/libtriton.so": plain,
                                          "triton/backends/nvidia/bin/ptxas": tool,
                                          "triton/backends/nvidia/bin/cuobjdump": tool,
                                          "triton/backends/nvidia/bin/nvdisasm": tool,
                                          "triton/backends/nvidia/bin/README": b"not a tool\n"})
    ours = wheel(tmp_path / "b.whl", {**BASE, "triton/_C/libtriton.so": plain,
                                      "triton/backends/nvidia/bin/ptxas": tool})
    proc = run_cli("compare", str(official), str(ours), "--json", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    diffs = [(d["kind"], d["key"], d["a"], d["b"]) for d in one_of(proc.stdout, "pairs")["differences"]]
    assert diffs == [("only-a", "triton/backends/nvidia/bin/README", "", ""),
                     ("nvidia-tool", "cuobjdump", "yes", ""), ("nvidia-tool", "nvdisasm", "yes", "")]
    globs = tmp_path / "globs"  # what accepted a missing tool before: a file glob no longer does
    globs.write_text("only-a triton/backends/nvidia/bin/*  # tools and docs\nonly-a *\n")
    still = one_of(run_cli("compare", str(official), str(ours), "--allow", str(globs), "--json", cwd=tmp_path,
                           check=False).stdout, "pairs")
    assert [d["key"] for d in still["differences"] if d["allowed_by"] is None] == ["cuobjdump", "nvdisasm"]
    rules = tmp_path / "rules"
    rules.write_text("only-a triton/backends/nvidia/bin/README\nnvidia-tool cuobjdump  # no SASS dumps here\n")
    one = run_cli("compare", str(official), str(ours), "--allow", str(rules), "--json", cwd=tmp_path, check=False)
    assert one.returncode == 1 and one_of(one.stdout, "pairs")["unaccepted"] == 1
    rules.write_text(rules.read_text() + "nvidia-tool nvdisasm  # no SASS dumps here\n")
    ok = run_cli("compare", str(official), str(ours), "--allow", str(rules), cwd=tmp_path)
    assert "no unaccepted differences" in ok.stdout and "no SASS dumps here" in ok.stdout
    bad = tmp_path / "bad"
    bad.write_text("nvidia-tools cuobjdump\n")
    refused = run_cli("compare", str(official), str(ours), "--allow", str(bad), cwd=tmp_path, check=False)
    assert refused.returncode == 2 and "nvidia-tool" in refused.stderr
