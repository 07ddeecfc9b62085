"""tritonbuild.wheel.bundle on real ELF files built here: copy what is used, drop what is not, $ORIGIN run paths."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tritonbuild.system import elf


def cc(out: Path, source: str, *args: str) -> Path:
    src = out.with_suffix(".c")
    src.write_text(source)
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src), *args], check=True)
    return out


def host_libs(tmp: Path) -> Path:
    host = tmp / "host"
    host.mkdir()
    cc(host / "libdep.so", "int dep_fn(void) { return 41; }\n", "-Wl,-soname,libdep.so")
    cc(host / "libunused.so", "int unused_fn(void) { return 0; }\n", "-Wl,-soname,libunused.so")
    return host


def test_bundle_copies_used_drops_unused_and_sets_origin(tmp_path: Path) -> None:
    host = host_libs(tmp_path)
    lib = tmp_path / "tree" / "triton" / "_C" / "libmain.so"
    lib.parent.mkdir(parents=True)
    # --no-as-needed: like Debian's links, a library nothing uses still ends up as DT_NEEDED
    cc(lib, "int dep_fn(void);\nint main_fn(void) { return dep_fn() + 1; }\n", "-Wl,--no-as-needed",
       f"-L{host}", "-ldep", "-lunused", f"-Wl,-rpath,{host}")
    tool = tmp_path / "tree" / "triton" / "tool.so"  # elsewhere in the tree: a relative $ORIGIN path
    cc(tool, "int dep_fn(void);\nint tool_fn(void) { return dep_fn(); }\n", f"-L{host}", "-ldep",
       f"-Wl,-rpath,{host}")
    report = tmp_path / "bundle.json"
    subprocess.run([sys.executable, "-m", "tritonbuild.wheel.bundle", str(tmp_path / "tree"), "--report", str(report)],
                   check=True)
    data = json.loads(report.read_text())
    assert [b["name"] for b in data["bundled"]] == ["libdep.so"]
    assert data["dropped"] == [{"file": "triton/_C/libmain.so", "name": "libunused.so"}]
    main = elf.read(lib)
    assert main is not None and main.needed.count("libunused.so") == 0 and main.runpath == ("$ORIGIN",)
    assert elf.read(tool) is not None and elf.read(tool).runpath == ("$ORIGIN/_C",)  # type: ignore[union-attr]
    shutil.rmtree(host)  # the build machine's copy is gone: the tree must stand alone
    code = ("import ctypes, sys; m = ctypes.CDLL(sys.argv[1]); t = ctypes.CDLL(sys.argv[2]); "
            "print(m.main_fn(), t.tool_fn())")
    out = subprocess.run([sys.executable, "-c", code, str(lib), str(tool)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["42", "41"]


def test_bundle_names_a_library_it_cannot_find(tmp_path: Path) -> None:
    host = host_libs(tmp_path)
    lib = tmp_path / "tree" / "triton" / "_C" / "libmain.so"
    lib.parent.mkdir(parents=True)
    cc(lib, "int dep_fn(void);\nint main_fn(void) { return dep_fn(); }\n", f"-L{host}", "-ldep")  # no rpath
    (host / "libdep.so").unlink()
    proc = subprocess.run([sys.executable, "-m", "tritonbuild.wheel.bundle", str(tmp_path / "tree")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "triton/_C/libmain.so needs libdep.so" in proc.stderr and "manylinux allow-list" in proc.stderr
    assert not (tmp_path / "tree" / "triton" / "_C" / "libdep.so").exists()


def test_system_libraries_and_named_ones_stay_outside(tmp_path: Path) -> None:
    host = host_libs(tmp_path)
    lib = tmp_path / "tree" / "libmain.so"
    lib.parent.mkdir(parents=True)
    cc(lib, "#include <math.h>\nint dep_fn(void);\ndouble f(double x) { return sin(x) + dep_fn(); }\n",
       f"-L{host}", "-ldep", "-lm", f"-Wl,-rpath,{host}")
    subprocess.run([sys.executable, "-m", "tritonbuild.wheel.bundle", str(tmp_path / "tree"), "--into", ".",
                    "--system", "libdep.so"], check=True)
    assert sorted(p.name for p in (tmp_path / "tree").iterdir()) == ["libmain.c", "libmain.so"]
