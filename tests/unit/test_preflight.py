"""The include preflight: the scan of one file's includes, the scan of a tree against an LLVM's include dir (real
files in temporary dirs), and the findings the plan makes of them (#36)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.gather import includes
from tritonbuild.resolve import preflight as pf

OLD = "llvm/Passes/PassPlugin.h"
NEW = "llvm/Plugins/PassPlugin.h"
D8_UTILITY = {"lib/Dialect/TritonGPU/Transforms/Utility.cpp":
              "x && yieldOperand.value() != forOp.getInitArgs()[yieldOperand.index()];\n"
              "yieldOp.setOperand(deadArgIdx, arg);\n"
              "patterns.add<ForOpDeadArgElimination>(ctx);"}


def test_scan_takes_llvm_mlir_lld_includes_with_their_lines() -> None:
    text = (b'#include "triton/Core.h"\n#include "llvm/IR/Module.h"\n  #  include <mlir/IR/MLIRContext.h>\n'
            b'#include <vector>\n// #include "llvm/Commented.h"\n#include "lld/Common/Driver.h"\n'
            b'#include "llvm-c/Core.h"\n#include "mlir-c/IR.h"\n#include "llvmfoo/X.h"\n')
    assert includes.scan(text) == [("llvm/IR/Module.h", 2, False), ("mlir/IR/MLIRContext.h", 3, False),
                                   ("lld/Common/Driver.h", 6, False), ("llvm-c/Core.h", 7, False),
                                   ("mlir-c/IR.h", 8, False)]
    assert includes.scan(b'#include "triton/Core.h"\n#include <vector>\n') == []


def test_scan_guard_is_not_a_condition_but_if_is_and_if_0_and_has_include_are_skipped() -> None:
    text = b"""#ifndef TRITON_X_H
#define TRITON_X_H
#include "llvm/A.h"
#if LLVM_VERSION_MAJOR < 22
#include "llvm/Passes/PassPlugin.h"
#else
#include "llvm/Plugins/PassPlugin.h"
#endif
#if 0
#include "llvm/Dead.h"
#else
#include "llvm/Live.h"
#endif
#if __has_include(<llvm/Plugins/PassPlugin.h>)
#include "llvm/Plugins/PassPlugin.h"
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#ifdef FOO
#if 0
#include "llvm/Dead2.h"
#endif
#include "llvm/Foo.h"
#endif
#endif
"""
    assert includes.scan(text) == [("llvm/A.h", 3, False), (OLD, 5, True), (NEW, 7, True), ("llvm/Live.h", 12, False),
                                   ("llvm/Foo.h", 23, True)]
    # no guard: the first #ifndef is a condition like any other
    assert includes.scan(b'#ifndef X\n#include "llvm/A.h"\n#endif\n') == [("llvm/A.h", 2, True)]
    # an #endif too many does not break the scan
    assert includes.scan(b'#endif\n#include "llvm/A.h"\n') == [("llvm/A.h", 2, False)]


def test_scan_of_tablegen_includes() -> None:
    text = b'include "mlir/IR/OpBase.td"\ninclude "triton/Dialect.td"\n  include "mlir/Interfaces/X.td"\n'
    assert includes.scan(text, tablegen=True) == [("mlir/IR/OpBase.td", 1, False), ("mlir/Interfaces/X.td", 3, False)]


@pytest.mark.parametrize("name", ["llvm/../../etc/passwd", "llvm//X.h", "llvm/./X.h", "/llvm/X.h", "llvm",
                                  "triton/X.h", "mlir/IR/Ops.h.inc", "llvm\\X.h", "mlir/Dialect/X.cpp.inc"])
def test_header_names_not_asked_about(name: str) -> None:
    assert not pf.header_path_ok(name)


def test_header_names_asked_about() -> None:
    assert pf.header_path_ok(OLD) and pf.header_path_ok("mlir/IR/OpBase.td") and pf.header_path_ok("lld/Common/X.h")
    assert pf.header_path_ok("llvm/IR/Instruction.def")


def test_moved_to_prefers_the_same_top_dir_and_shared_components() -> None:
    assert pf.moved_to(OLD, ["mlir/Tools/Plugins/PassPlugin.h", NEW]) == (NEW, "mlir/Tools/Plugins/PassPlugin.h")
    assert pf.moved_to("mlir/Dialect/X/IR/A.h", ["mlir/Other/A.h", "mlir/Dialect/Y/IR/A.h"])[0] == \
        "mlir/Dialect/Y/IR/A.h"
    assert pf.moved_to(OLD, []) == ()


def _facts(*uses: pf.Include, missing: tuple[str, ...] = (OLD,),
           elsewhere: tuple[tuple[str, tuple[str, ...]], ...] = ((OLD, (NEW,)),)) -> pf.IncludeFacts:
    return pf.IncludeFacts(files=3, headers=3, uses=uses,
                           llvms=(pf.LLVMHeaders("/llvm", True, missing, elsewhere),))


BUILT = pf.Built(("nvidia",), ("nvidia", "amd"), proton=False, plugins=("/plugins/shared",))


def test_built_scopes() -> None:
    def inc(scope: str, file: str = "x.cc") -> pf.Include:
        return pf.Include(OLD, file, 1, scope)
    assert BUILT.compiles(inc("core")) and BUILT.compiles(inc("third_party/nvidia"))
    assert not BUILT.compiles(inc("third_party/amd"))  # an in-tree backend not selected is not built
    assert BUILT.compiles(inc("third_party/f2reduce"))  # not a backend: always built
    assert not BUILT.compiles(inc("third_party/proton", "third_party/proton/csrc/a.cc"))
    assert BUILT.compiles(inc("third_party/proton", "third_party/proton/Dialect/lib/a.cc"))  # always built
    assert not BUILT.compiles(inc("bin")) and pf.Built((), (), False, bin=True).compiles(inc("bin"))
    assert BUILT.compiles(inc("plugin:/plugins/shared")) and not BUILT.compiles(inc("plugin:/plugins/other"))


def test_every_missing_header_and_every_known_issue_in_one_message() -> None:
    facts = _facts(pf.Include(OLD, "python/src/llvm.cc", 20, "core"),
                   pf.Include(OLD, "test/lib/Instrumentation/GPUHello.cpp", 6, "core"),
                   pf.Include("mlir/Gone.h", "lib/A.cpp", 3, "core"),
                   pf.Include(OLD, "third_party/amd/a.cc", 9, "third_party/amd"),  # not built: not reported
                   missing=(OLD, "mlir/Gone.h"), elsewhere=((OLD, (NEW, "mlir/Tools/Plugins/PassPlugin.h")),))
    found = pf.check(facts, ("for-op-dead-arg-ping-pong",), ("for-op-dead-arg-ping-pong",), "/llvm",
                     "22.1.8 at /llvm", True, BUILT)
    assert found.headers_missing == 2 and found.known == ("for-op-dead-arg-ping-pong",) and not found.warnings
    text = pf.error_text(found, "22.1.8 at /llvm", "0729a74e66ae0000")
    assert text is not None
    lines = text.splitlines()
    assert lines[0].startswith("This source will not build with LLVM 22.1.8 at /llvm: 2 included headers this LLVM "
                               "lacks and 1 known issue") and "pinned LLVM (0729a74e66ae)" in lines[0]
    assert lines[1:3] == [f"  - python/src/llvm.cc:20, test/lib/Instrumentation/GPUHello.cpp:6 include {OLD}: moved "
                          f"to {NEW} in this LLVM",
                          "  - lib/A.cpp:3 includes mlir/Gone.h: this LLVM has no header of that name (one added after "
                          "this LLVM, or removed before it)"]
    assert lines[3].startswith("  - Known problem with LLVM 22.1.8 at /llvm (for-op-dead-arg-ping-pong)")
    assert "amd" not in text


def test_without_the_compile_check_a_known_issue_warns_and_headers_still_refuse() -> None:
    facts = _facts(pf.Include(OLD, "python/src/llvm.cc", 20, "core"))
    found = pf.check(facts, ("for-op-dead-arg-ping-pong",), ("for-op-dead-arg-ping-pong",), "/llvm", "22", False,
                     BUILT)
    assert len(found.errors) == 1 and "Known problem" in found.warnings[0]
    alone = pf.check(_facts(), ("for-op-dead-arg-ping-pong",), ("for-op-dead-arg-ping-pong",), "/llvm", "22", True,
                     BUILT)
    assert pf.error_text(alone, "22", None) == alone.errors[0]  # a single known issue keeps its own message
    assert pf.error_text(pf.check(_facts(), (), (), "/llvm", "22", True, BUILT), "22", None) is None


def test_an_include_behind_an_if_warns_and_many_places_are_counted() -> None:
    uses = [pf.Include(OLD, f"lib/F{i}.cpp", i, "core") for i in range(1, 7)]
    found = pf.check(_facts(*uses, pf.Include(OLD, "lib/G.cpp", 4, "core", conditional=True)), (), (), "/llvm",
                     "22.1.8 at /llvm", True, BUILT)
    assert found.errors == (f"lib/F1.cpp:1, lib/F2.cpp:2, lib/F3.cpp:3, lib/F4.cpp:4 and 2 more include {OLD}: "
                            f"moved to {NEW} in this LLVM",)
    assert found.warnings == (f"with LLVM 22.1.8 at /llvm, lib/G.cpp:4 includes {OLD} inside an #if: moved to {NEW} "
                              "in this LLVM; the compile fails if the preprocessor reaches it",)


def test_another_llvm_or_one_without_headers_finds_nothing() -> None:
    facts = _facts(pf.Include(OLD, "python/src/llvm.cc", 20, "core"))
    assert pf.check(facts, (), (), "/other", "x", True, BUILT).errors == ()
    unchecked = pf.IncludeFacts(uses=facts.uses, llvms=(pf.LLVMHeaders("/llvm", False),))
    assert pf.check(unchecked, (), (), "/llvm", "x", True, BUILT).errors == ()


def _llvm(root: Path, headers: list[str]) -> Path:
    for h in headers:
        (root / "include" / h).parent.mkdir(parents=True, exist_ok=True)
        (root / "include" / h).write_text("// header\n")
    return root


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_gather_against_a_real_include_dir(tmp_path: Path) -> None:
    llvm = _llvm(tmp_path / "llvm", ["llvm/IR/Module.h", NEW, "mlir/Tools/Plugins/PassPlugin.h", "mlir/IR/X.h"])
    (llvm / "include" / "mlir" / "loop").symlink_to("..")  # a link back up is walked once, not forever
    tree = _tree(tmp_path / "src", {
        "python/src/llvm.cc": f'#include "llvm/IR/Module.h"\n#include "{OLD}"\n',
        "lib/A.cpp": '#include "mlir/IR/X.h"\n#include "mlir/IR/Ops.h.inc"\n#include "mlir/Own/Thing.h"\n',
        "include/mlir/Own/Thing.h": "// the tree's own header under a name like MLIR's\n",
        "third_party/amd/lib/B.cpp": '#include "lld/Common/Driver.h"\n',
        "third_party/amd/include/Dialect.td": 'include "mlir/IR/OpBase.td"\n',
        "docs/ignored.cpp": '#include "llvm/Never.h"\n',
    })
    plugin = _tree(tmp_path / "plugin", {"CMakeLists.txt": "", "lib/P.cpp": '#include "llvm/Gone/P.h"\n'})
    not_a_plugin = _tree(tmp_path / "nothing", {"P.cpp": '#include "llvm/NotScanned.h"\n'})
    facts = includes.gather(tree, [plugin, not_a_plugin], [str(llvm), str(tmp_path / "empty")], None)
    assert facts.files == 6
    [have, empty] = facts.llvms
    assert have.missing == ("lld/Common/Driver.h", "llvm/Gone/P.h", OLD, "mlir/IR/OpBase.td")
    assert dict(have.elsewhere)[OLD] == (NEW, "mlir/Tools/Plugins/PassPlugin.h")
    assert not empty.checked and empty.missing == ()
    where = {(u.header, u.file, u.line, u.scope) for u in facts.uses}
    assert where == {(OLD, "python/src/llvm.cc", 2, "core"),
                     ("lld/Common/Driver.h", "third_party/amd/lib/B.cpp", 1, "third_party/amd"),
                     ("mlir/IR/OpBase.td", "third_party/amd/include/Dialect.td", 1, "third_party/amd"),
                     ("llvm/Gone/P.h", str(plugin / "lib/P.cpp"), 1, f"plugin:{plugin}")}


def test_the_scan_is_cached_by_size_and_mtime_and_a_damaged_cache_is_rescanned(tmp_path: Path) -> None:
    llvm = _llvm(tmp_path / "llvm", [NEW])
    tree = _tree(tmp_path / "src", {"python/src/llvm.cc": f'#include "{OLD}"\n'})
    cache = tmp_path / "cache" / "apicheck"
    assert includes.gather(tree, [], [str(llvm)], cache).llvms[0].missing == (OLD,)
    assert not cache.exists()  # no cache root: nothing written
    cache.parent.mkdir()
    includes.gather(tree, [], [str(llvm)], cache)
    [store] = cache.iterdir()
    whole = json.loads(store.read_text())
    assert whole["scanner"] == includes.SCANNER
    kept = whole["files"]
    entry = kept[str(tree / "python/src/llvm.cc")]
    assert list(kept) == [str(tree / "python/src/llvm.cc")] and entry[0] == len(f'#include "{OLD}"\n')
    assert entry[2] == [[OLD, 1, False]]
    # the cache is what is read: a file whose size and mtime are unchanged is not scanned again
    path = tree / "python/src/llvm.cc"
    st = path.stat()
    path.write_text('#include "llvm/Passes/PassPlugiX.h"\n')  # as long as before
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert includes.gather(tree, [], [str(llvm)], cache).llvms[0].missing == (OLD,)
    # a changed file is scanned again
    path.write_text(f'#include "{NEW}"\n')
    assert includes.gather(tree, [], [str(llvm)], cache).llvms[0].missing == ()
    files = {str(path): [1, 2, [["a", "b", "c"]]]}
    for damaged in ('[1, 2]', '{"x": 1}', json.dumps({"scanner": includes.SCANNER, "files": files}), "not json",
                    json.dumps({"scanner": includes.SCANNER, "files": [1]})):
        store.write_text(damaged)
        path.write_text(f'#include "{OLD}"\n')
        assert includes.gather(tree, [], [str(llvm)], cache).llvms[0].missing == (OLD,)


def test_odd_files_are_skipped_not_hung_on(tmp_path: Path) -> None:
    llvm = _llvm(tmp_path / "llvm", [NEW])
    tree = _tree(tmp_path / "src", {"lib/ok.cpp": f'#include "{OLD}"\n'})
    os.mkfifo(tree / "lib" / "fifo.cpp")  # would block a plain open
    (tree / "lib" / "link.cpp").symlink_to("/dev/zero")  # would never end
    (tree / "lib" / "dangling.h").symlink_to(tmp_path / "nowhere")
    facts = includes.gather(tree, [], [str(llvm)], None)
    assert [(u.file, u.line) for u in facts.uses] == [("lib/ok.cpp", 1)]


def test_every_matching_known_issue_is_reported_not_the_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from tritonbuild.resolve import knownissues as ki

    second = ki.KnownIssue(id="second-issue", source_file="lib/B.cpp", source_marker="old()", source_also=(),
                           llvm_header="llvm/B.h",
                           llvm_marker="new()", what="the second problem", fix="the second fix")
    monkeypatch.setattr(ki, "ISSUES", (*ki.ISSUES, second))
    source = ki.source_markers({**D8_UTILITY, "lib/B.cpp": "old();"})
    llvm = ki.llvm_markers({"mlir/Interfaces/ControlFlowInterfaces.h":
                            "void populateRegionBranchOpInterfaceCanonicalizationPatterns();", "llvm/B.h": "new()"})
    found = pf.check(pf.IncludeFacts(), source, llvm, "/llvm", "22.1.8 at /llvm", True, BUILT)
    assert found.known == ("for-op-dead-arg-ping-pong", "second-issue") and found.headers_missing == 0
    text = pf.error_text(found, "22.1.8 at /llvm", None)
    assert text is not None and "2 known issues" in text
    assert "(for-op-dead-arg-ping-pong)" in text and "(second-issue): the second problem. Fix: the second fix" in text


# --- comments, literals and continued lines (#36) -----------------------------------------------------------------

P = f'"{OLD}"'.encode()


@pytest.mark.parametrize(("text", "expected"), [
    # an include inside a block comment, on its own lines or after other text, is none
    (b"/*\n#include " + P + b"\n*/\n#include <llvm/A.h>\n", [("llvm/A.h", 4, False)]),
    (b"int x; /* start\n#include " + P + b"\n end */ int y;\n", []),
    (b"/** doc\n * #include " + P + b"\n */\n", []),
    # a comment before the include on its line is whitespace to the preprocessor: the include counts
    (b"/* x */ #include " + P + b"\n", [(OLD, 1, False)]),
    (b"  /* a */  #  /* b */ include " + P + b" /* c */\n", [(OLD, 1, False)]),
    (b"// #include " + P + b"\n#include <llvm/A.h> // see llvm/B.h\n", [("llvm/A.h", 2, False)]),
    # the line a multi-line comment closes on is still the line it opened on (gcc -E agrees)
    (b"int a; /* x\n*/ #include " + P + b"\n/* y\n*/ #include <llvm/Y.h>\n", [("llvm/Y.h", 4, False)]),
    # comment markers inside literals are not comments
    (b'const char *s = "/*";\n#include ' + P + b'\nconst char *t = "*/"; // "\n', [(OLD, 2, False)]),
    (b"char c = '\"'; char d = '/'; /* x */\n#include " + P + b"\n", [(OLD, 2, False)]),
    (b'const char *u = "a \\" /* b";\n#include ' + P + b"\n", [(OLD, 2, False)]),
    (b"int n = 1'000'000; /* x */\n#include " + P + b"\n", [(OLD, 2, False)]),
    # a raw string is not code, whatever lines it holds
    (b'auto s = R"cpp(\n#include ' + P + b'\n)cpp";\n#include <llvm/A.h>\n', [("llvm/A.h", 4, False)]),
    (b'auto s = u8R"(/*)";\n#include ' + P + b"\n", [(OLD, 2, False)]),
    # #if 0 with a comment after it is still #if 0
    (b"#if 0 /* off */\n#include " + P + b"\n#endif\n#if 0 // off\n#include <llvm/B.h>\n#endif\n", []),
    # an unterminated comment hides the rest of the file, as it does from the compiler
    (b"#include <llvm/A.h>\n/* never closed\n#include " + P + b"\n", [("llvm/A.h", 1, False)]),
])
def test_scan_reads_comments_and_literals_as_the_preprocessor_does(text: bytes, expected: list[object]) -> None:
    assert includes.scan(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    (b"#include \\\n" + P + b"\n#include <llvm/A.h>\n", [(OLD, 1, False), ("llvm/A.h", 3, False)]),
    (b"int x;\n#include \\\r\n  " + P + b"\r\n", [(OLD, 2, False)]),
    (b"#\\\ninclude \\\n\\\n" + P + b"\n\n#include <llvm/B.h>\n", [(OLD, 1, False), ("llvm/B.h", 6, False)]),
    # a // comment continued onto the next line takes that line with it
    (b"// note \\\n#include " + P + b"\n#include <llvm/A.h>\n", [("llvm/A.h", 3, False)]),
    # a continued #if condition: the include under it is conditional, on its own line number
    (b"#if defined(A) && \\\n    defined(B)\n#include " + P + b"\n#endif\n", [(OLD, 3, True)]),
    (b"#define M(x) \\\n  x\n#if 0 \\\n\n#include " + P + b"\n#endif\n#include <llvm/C.h>\n", [("llvm/C.h", 7, False)]),
])
def test_scan_joins_continued_lines_and_keeps_line_numbers(text: bytes, expected: list[object]) -> None:
    assert includes.scan(text) == expected


def test_tablegen_comments_and_code_blocks_hold_no_includes() -> None:
    text = (b'/*\ninclude "mlir/Old.td"\n*/\ninclude "mlir/IR/OpBase.td" // "x"\n// include "mlir/C.td"\n'
            b'def X { code c = [{\ninclude "mlir/Code.td"\n}]; string s = "/*"; }\ninclude "mlir/Last.td"\n')
    assert includes.scan(text, tablegen=True) == [("mlir/IR/OpBase.td", 4, False), ("mlir/Last.td", 9, False)]


def test_a_scan_kept_by_the_older_scanner_is_not_reused(tmp_path: Path) -> None:
    """The old store (a bare {path: [size, mtime, uses]}) read comments as includes: its entries are rescanned."""
    llvm = _llvm(tmp_path / "llvm", [NEW])
    tree = _tree(tmp_path / "src", {"python/src/ir.cc": f'/*\n#include "{OLD}"\n*/\n'})
    cache = tmp_path / "cache" / "apicheck"
    cache.mkdir(parents=True)
    path = tree / "python/src/ir.cc"
    st = path.stat()
    store = cache / ("includes-" + __import__("hashlib").sha256(str(tree).encode()).hexdigest()[:16] + ".json")
    store.write_text(json.dumps({str(path): [st.st_size, st.st_mtime_ns, [[OLD, 2, False]]]}))
    assert includes.gather(tree, [], [str(llvm)], cache).llvms[0].missing == ()
    assert json.loads(store.read_text()) == {"scanner": includes.SCANNER, "files": {str(path): [st.st_size,
                                                                                               st.st_mtime_ns, []]}}


@pytest.mark.parametrize(("text", "expected"), [
    (b'#include "mlir/IR/X.h"\n#define GEN_PASS_CLASSES\n#include "Passes.h.inc"\n',
     [("mlir/IR/X.h", 1, False), (pf.GEN_PASS_CLASSES, 2, False)]),
    # no MLIR include in the file at all, and the define far below the includes: still found
    (b"// x\n" * 300 + b"#define GEN_PASS_CLASSES\n", [(pf.GEN_PASS_CLASSES, 301, False)]),
    (b"#ifdef WITH_OLD\n#  define GEN_PASS_CLASSES  \n#endif\n", [(pf.GEN_PASS_CLASSES, 2, True)]),
    (b"#if 0\n#define GEN_PASS_CLASSES\n#endif\n", []),
    (b"// #define GEN_PASS_CLASSES\n/* #define GEN_PASS_CLASSES */\n", []),
    (b'const char *s = "#define GEN_PASS_CLASSES";\n', []),
    (b"#define GEN_PASS_CLASSES_OLD\n#define GEN_PASS_DECL\n#define GEN_PASS_DEF_X\n#undef GEN_PASS_CLASSES\n", []),
])
def test_scan_records_a_define_of_gen_pass_classes(text: bytes, expected: list[object]) -> None:
    """LLVM 22's mlir-tblgen answers GEN_PASS_CLASSES with an #error (triton-shared 22a7b0e: 12 files, found by the
    canary after 86 s): the scan records each define like an include, so the plan names them all at once."""
    assert includes.scan(text) == expected


def test_an_llvm_whose_tblgen_refuses_gen_pass_classes_is_named_with_every_site(tmp_path: Path) -> None:
    new = _llvm(tmp_path / "llvm22", ["llvm/IR/Module.h"])
    (new / "include/mlir/Transforms").mkdir(parents=True)
    (new / "include/mlir/Transforms/Passes.h.inc").write_text(
        '#ifdef GEN_PASS_CLASSES\n#error "GEN_PASS_CLASSES is deprecated; use per-pass macros"\n#endif\n')
    old = _llvm(tmp_path / "llvm19", ["llvm/IR/Module.h", "mlir/Transforms/Passes.h.inc"])
    plugin = _tree(tmp_path / "plugin", {"CMakeLists.txt": "",
                                         **{f"lib/P{i}.cpp": "#define GEN_PASS_CLASSES\n" for i in range(6)}})
    tree = _tree(tmp_path / "src", {"lib/A.cpp": '#include "llvm/IR/Module.h"\n'})
    facts = includes.gather(tree, [plugin], [str(new), str(old)], None)
    assert [h.missing for h in facts.llvms] == [(pf.GEN_PASS_CLASSES,), ()]
    built = pf.Built((), (), False, plugins=(str(plugin),))
    found = pf.check(facts, (), (), str(new), "22.1.8", True, built)
    assert found.api == (pf.GEN_PASS_CLASSES,) and found.headers_missing == 0
    text = pf.error_text(found, "22.1.8", "49d5bb0ad0cb")
    assert text is not None and "GEN_PASS_CLASSES, which this LLVM's mlir-tblgen no longer emits" in text
    assert f"{plugin}/lib/P0.cpp:1" in text and "and 2 more define GEN_PASS_CLASSES" in text
    assert "GEN_PASS_DEF_<PASS>" in text and "included header" not in text
    assert pf.check(facts, (), (), str(old), "19.1.7", True, built).errors == ()
    unbuilt = pf.check(facts, (), (), str(new), "22.1.8", True, pf.Built((), (), False))
    assert unbuilt.errors == () and unbuilt.api == ()  # a plugin this build does not compile


FRAGMENTS = [b"#include \"mlir/IR/X.h\"", b"#include <llvm/A.h>", b"#define GEN_PASS_CLASSES", b"#if 0", b"#ifdef Y",
             b"#else", b"#endif", b"#ifndef G", b"#define G", b"/*", b"*/", b"//", b"\"", b"'", b"R\"x(", b")x\"",
             b"\\", b"\n", b"\r\n", b" ", b"\t", b"#", b"\x00", b"\xff", b"mlir/", b"GEN_PASS_CLASSES",
             b"class A", b" : public ", b"SparseBackwardDataFlowAnalysis<", b"{", b";", b"visitNonControlFlowArguments"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=80), st.integers(0, 3))
def test_scan_of_hostile_bytes_never_raises_and_names_real_lines(parts: list[bytes], repeat: int) -> None:
    """A hostile tree's file (any bytes, unbalanced comments, literals, #ifs and continuations): the scan returns
    includes and GEN_PASS_CLASSES defines, each on a line the file has, in bounded time."""
    data = b"".join(parts) * (1 + repeat)
    start = time.monotonic()
    found = includes.scan(data)
    assert time.monotonic() - start < 2
    lines = data.count(b"\n") + 1
    for header, line, conditional in found:
        assert isinstance(header, str) and isinstance(conditional, bool) and 1 <= line <= lines
        assert header in pf.API_USES or header.split("/")[0] in pf.NAMESPACES


USE_ANALYSIS = ("#include \"mlir/Analysis/DataFlow/SparseAnalysis.h\"\nnamespace mlir {\n"
                "class UseAnalysis : public dataflow::SparseBackwardDataFlowAnalysis<UseInfo> {\npublic:\n"
                "  void visitCallOperand(OpOperand &operand) override { return; }\n};\n}\n")


@pytest.mark.parametrize(("text", "expected"), [
    (USE_ANALYSIS.encode(), [("mlir/Analysis/DataFlow/SparseAnalysis.h", 1, False), (pf.BACKWARD_ANALYSIS, 3, False)]),
    # the base clause on the next lines, a struct, no MLIR include in the file
    (b"struct TaskIdBackwardPropagation final\n    : public\n  SparseBackwardDataFlowAnalysis<L> {};\n",
     [(pf.BACKWARD_ANALYSIS, 1, False)]),
    (USE_ANALYSIS.replace("public:\n", "public:\n  void visitNonControlFlowArguments(RegionSuccessor &s, "
                          "ArrayRef<BlockArgument> a) override {}\n").encode(),
     [("mlir/Analysis/DataFlow/SparseAnalysis.h", 1, False)]),
    (b"// class A : public SparseBackwardDataFlowAnalysis<L> {};\nusing B = SparseBackwardDataFlowAnalysis<L>;\n", []),
])
def test_scan_records_a_backward_analysis_without_the_override(text: bytes, expected: list[object]) -> None:
    """LLVM 22.1 made SparseBackwardDataFlowAnalysis::visitNonControlFlowArguments pure virtual: d8da7c998's
    TaskIdBackwardPropagation (a known issue) and triton-shared's UseAnalysis (found only after 60 min of build)
    are abstract classes with it. The scan records each such class like an include."""
    assert includes.scan(text) == expected


def test_a_backward_analysis_in_a_plugin_is_named_and_a_known_issue_s_file_is_not_named_twice(tmp_path: Path) -> None:
    new = _llvm(tmp_path / "llvm22", ["llvm/IR/Module.h", "mlir/Analysis/DataFlow/SparseAnalysis.h"])
    (new / "include/mlir/Analysis/DataFlow/SparseAnalysis.h").write_text(
        "virtual void visitNonControlFlowArguments(RegionSuccessor &successor,\n"
        "                                    ArrayRef<BlockArgument> arguments) = 0;\n")
    old = _llvm(tmp_path / "llvm19", ["llvm/IR/Module.h", "mlir/Analysis/DataFlow/SparseAnalysis.h"])
    plugin = _tree(tmp_path / "plugin", {"CMakeLists.txt": "", "include/UseAnalysis.h": USE_ANALYSIS})
    task_id = "third_party/nvidia/hopper/lib/Transforms/WarpSpecialization/TaskIdPropagation.h"
    tree = _tree(tmp_path / "src", {task_id: "class TaskIdBackwardPropagation\n    : public dataflow::"
                                             "SparseBackwardDataFlowAnalysis<TaskIdLattice> {};\n"})
    facts = includes.gather(tree, [plugin], [str(new), str(old)], None)
    assert [h.missing for h in facts.llvms] == [(pf.BACKWARD_ANALYSIS,), ()]
    built = pf.Built(("nvidia",), ("nvidia",), False, plugins=(str(plugin),))
    found = pf.check(facts, (), (), str(new), "22.1.8", True, built)
    text = pf.error_text(found, "22.1.8", None)
    assert found.api == (pf.BACKWARD_ANALYSIS,) and text is not None
    assert f"{plugin}/include/UseAnalysis.h:3" in text and f"{task_id}:1" in text and "override {}" in text
    # with the known issue matched, its own file keeps the known issue's message only; the plugin's is still named
    found = pf.check(facts, ("task-id-backward-pure-virtual",), ("task-id-backward-pure-virtual",), str(new),
                     "22.1.8", True, built)
    text = pf.error_text(found, "22.1.8", None) or ""
    assert found.known == ("task-id-backward-pure-virtual",) and f"{task_id}:1" not in text
    assert f"{plugin}/include/UseAnalysis.h:3" in text
    assert pf.check(facts, (), (), str(old), "19.1.7", True, built).errors == ()
