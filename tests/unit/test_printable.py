"""Hostile names formatted into messages (#36): ``printable`` and the include preflight's lines that use it."""

from __future__ import annotations

from tritonbuild.printable import printable, printable_text
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


def test_a_message_keeps_its_lines_and_tabs_but_no_control_character_reaches_the_terminal() -> None:
    assert printable_text("plain\n\tindented [markup]") == "plain\n\tindented [markup]"
    assert printable_text("a\x1b]0;title\x07b\rc\x7fd\x9be") == "a\\x1b]0;title\\x07b\\rc\\x7fd\\x9be"


def test_every_text_the_console_renders_is_escaped_tables_and_plain_prints_too() -> None:
    import io

    from rich.table import Table

    from tritonbuild.report import render

    out = render.console()
    out.file = io.StringIO()
    table = Table()
    table.add_column("member")
    table.add_row("lib\x1b[2J.so")
    out.print("[red]error:[/red] name\x1b]0;owned\x07 here")
    out.print(table)
    out.print("tail\x1b[31m", markup=False)
    text = out.file.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "name\\x1b]0;owned\\x07 here" in text and "lib\\x1b[2J.so" in text and "tail\\x1b[31m" in text


def test_a_command_word_is_shell_quoted_only_when_it_prints() -> None:
    from tritonbuild.printable import quoted

    assert quoted("/src/my tree") == "'/src/my tree'"
    assert quoted("/x\nFORGED") == "'/x\\nFORGED'" and "\n" not in quoted("/x\nFORGED")
