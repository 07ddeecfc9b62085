"""A fetched unit whose own include dirs provide an ``llvm/...`` header is no LLVM include the LLVM lacks (#47).

The canary's ``fetched_includes`` reads units from outside the source for LLVM includes the chosen LLVM lacks, but
does not look at the unit's own ``-I`` dirs: a dependency shipping ``include/llvm/TBOwn/Own.h`` (reached through
``-I dep/include``) compiles, and ``check-llvm`` says it will not (found in review 49).
"""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

from tritonbuild.execute.canary import fetched_includes
from tritonbuild.resolve.canary import Unit


def test_a_header_the_units_own_include_dir_provides_is_not_lacking(tmp_path: Path) -> None:
    source, dep, llvm = tmp_path / "triton", tmp_path / "dep", tmp_path / "llvm"
    (source / "lib").mkdir(parents=True)
    (dep / "include" / "llvm" / "TBOwn").mkdir(parents=True)
    (dep / "include" / "llvm" / "TBOwn" / "Own.h").write_text("#pragma once\ninline int tb_own() { return 1; }\n")
    (dep / "lib").mkdir()
    unit = dep / "lib" / "abi.cpp"
    unit.write_text('#include "llvm/TBOwn/Own.h"\nint f() { return tb_own(); }\n')
    (llvm / "include" / "llvm" / "Support").mkdir(parents=True)  # an LLVM that lacks llvm/TBOwn/Own.h
    plan = SimpleNamespace(source=SimpleNamespace(root=str(source)), backends=(),
                           llvm=SimpleNamespace(prefix=str(llvm)), cmake=SimpleNamespace(views=()))
    argv = ("g++", f"-I{dep / 'include'}", "-c", str(unit), "-o", "abi.o")
    found, failed = fetched_includes(plan, [Unit(str(unit), str(dep), argv, "abi.o")], io.StringIO())  # type: ignore[arg-type]
    assert (found, failed) == ([], [])
    # the control: without its -I dir the same include is one the LLVM lacks, said as the compiler would say it
    bare = ("g++", "-c", str(unit), "-o", "abi.o")
    found, failed = fetched_includes(plan, [Unit(str(unit), str(dep), bare, "abi.o")], io.StringIO())  # type: ignore[arg-type]
    assert failed == [str(unit)] and [(d.line, d.message) for d in found] == [
        (1, "llvm/TBOwn/Own.h: No such file or directory")]
    # a relative -I, against the command's directory, and -isystem as a separate argument
    for flags in (("-Iinclude",), ("-isystem", "include")):
        argv = ("g++", *flags, "-c", str(unit))
        assert fetched_includes(plan, [Unit(str(unit), str(dep), argv, "abi.o")], io.StringIO()) == ([], [])  # type: ignore[arg-type]
