"""Hostile names formatted into messages (#36): ``printable`` and the include preflight's lines that use it."""

from __future__ import annotations

from tritonbuild.printable import printable
from tritonbuild.resolve import preflight as pf


def test_a_printable_name_is_as_it_is_and_any_other_is_quoted_with_escapes() -> None:
    assert printable("python/src/ir.cc") == "python/src/ir.cc"
    assert printable("a b/ü.cc") == "a b/ü.cc"
    assert printable("a\x1b[31m\nb\x07") == r"'a\x1b[31m\nb\x07'"
    assert printable("x\udc80\u2028\\") == r"'x\udc80\u2028\\'"  # undecodable byte, line separator, backslash
    assert all(ch.isprintable() for ch in printable("".join(map(chr, range(0xA0)))))


def test_the_preflight_escapes_the_trees_file_and_header_names() -> None:
    header = "llvm/Passes/PassPlugin.h"
    facts = pf.IncludeFacts(uses=(pf.Include(header, "python/src/a\x1b[31m\nnewest passing: FAKE.cc", 3, "core"),
                                  pf.Include(header, "lib/b\x07.cc", 4, "core", conditional=True)),
                            llvms=(pf.LLVMHeaders("/llvm", True, missing=(header,)),))
    found = pf.check(facts, (), (), "/llvm", "22", True, pf.Built(("nvidia",), ("nvidia",), True))
    assert found.errors == (rf"'python/src/a\x1b[31m\nnewest passing: FAKE.cc':3 includes {header}: this LLVM has "
                            "no header of that name (one added after this LLVM, or removed before it)",)
    assert found.warnings[0].startswith(rf"with LLVM 22, 'lib/b\x07.cc':4 includes {header} inside an #if")
