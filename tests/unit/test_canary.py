"""The canary compile's choices (#36): which units cover the tree's headers, their syntax-only commands, how the
errors group into causes, when the canary runs; and the include graph it is computed from, on real files."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.execute.diagnose import error_kind
from tritonbuild.gather.includes import include_graph
from tritonbuild.resolve import canary as c

GCC_OVERRIDE = ("\u2018llvm::LogicalResult triton::{}::match(mlir::Operation*) const\u2019 marked "
                "\u2018override\u2019, but does not override")


def _graph(edges: dict[str, list[str]], llvm: dict[str, list[str]] | None = None) -> c.Graph:
    files = set(edges) | {f for fs in edges.values() for f in fs} | set(llvm or {})
    return {f: (tuple(edges.get(f, ())), tuple((llvm or {}).get(f, ()))) for f in files}


def _units(*files: str) -> list[c.Unit]:
    return [c.Unit(f, "/b", ("g++", "-c", f), None) for f in files]


def test_coverage_follows_tree_headers_and_counts_their_llvm_includes_only() -> None:
    graph = _graph({"a.cpp": ["x.h"], "x.h": ["y.h"], "b.cpp": []},
                   {"a.cpp": ["llvm/Own.h"], "y.h": ["mlir/IR/PatternMatch.h"], "b.cpp": ["llvm/B.h"]})
    covers = c.coverage(_units("a.cpp", "b.cpp"), graph)
    assert covers["a.cpp"] == {"x.h", "y.h", "<mlir/IR/PatternMatch.h>"}  # not the unit's own llvm/Own.h
    assert covers["b.cpp"] == frozenset()


def test_the_cover_takes_every_header_once_and_prefers_cheap_units() -> None:
    covers = {
        "big.cpp": frozenset({"a.h", "b.h", "c.h", "d.h"}),
        "small_ab.cpp": frozenset({"a.h", "b.h"}),
        "small_cd.cpp": frozenset({"c.h", "d.h"}),
        "e.cpp": frozenset({"e.h"}),
        "e_heavy.cpp": frozenset({"e.h", "a.h", "b.h"}),  # gains as much as e.cpp once a/b are covered, costs more
        "none.cpp": frozenset(),
    }
    chosen = c.choose(covers)
    assert chosen == ["big.cpp", "e.cpp"]
    assert set().union(*(covers[u] for u in chosen)) == set().union(*covers.values())
    assert c.choose(dict(reversed(list(covers.items())))) == chosen  # the order units come in does not matter
    # on a tie of what they add, the one that reaches fewer headers (cheaper to compile) wins
    assert c.choose({"wide.cpp": frozenset({"a.h", "z.h"}), "narrow.cpp": frozenset({"a.h"}),
                     "z.cpp": frozenset({"z.h"})})[0] == "wide.cpp"
    assert c.choose({"b_wide.cpp": frozenset({"a.h", "q.h"}), "a_narrow.cpp": frozenset({"a.h"})},
                    cap=1) == ["b_wide.cpp"]
    assert c.choose({"x2.cpp": frozenset({"a.h", "b.h", "c.h"}), "x1.cpp": frozenset({"a.h", "b.h"}),
                     "x3.cpp": frozenset({"c.h", "d.h"})}, cap=5) == ["x2.cpp", "x3.cpp"]
    assert c.choose({}) == [] and c.choose({"n.cpp": frozenset()}) == []


def test_a_tie_in_gain_goes_to_the_cheaper_unit() -> None:
    covers = {"heavy.cpp": frozenset({"a.h", "b.h", "c.h"}), "light.cpp": frozenset({"a.h", "b.h"}),
              "c.cpp": frozenset({"c.h"})}
    covers2 = {"heavy.cpp": frozenset({"a.h", "x.h"}), "light.cpp": frozenset({"a.h", "y.h"}),
               "x.cpp": frozenset({"x.h", "y.h", "p.h", "q.h"})}
    assert c.choose(covers) == ["heavy.cpp"]
    # after x.cpp, heavy and light each add a.h only and both reach 2 headers: the name decides
    assert c.choose(covers2) == ["x.cpp", "heavy.cpp"]
    covers3 = {"x.cpp": frozenset({"x.h", "y.h", "p.h", "q.h"}), "heavy.cpp": frozenset({"a.h", "x.h", "p.h"}),
               "light.cpp": frozenset({"a.h"})}
    assert c.choose(covers3) == ["x.cpp", "light.cpp"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from([f"u{i}.cpp" for i in range(12)]),
                       st.lists(st.sampled_from([f"h{i}.h" for i in range(15)]), max_size=6), max_size=12),
       st.dictionaries(st.sampled_from([f"h{i}.h" for i in range(15)]),
                       st.lists(st.sampled_from([f"h{i}.h" for i in range(15)]), max_size=3), max_size=15),
       st.integers(min_value=1, max_value=12))
def test_for_any_include_graph_the_choice_covers_everything_coverable(
        direct: dict[str, list[str]], headers: dict[str, list[str]], cap: int) -> None:
    graph = _graph({**headers, **direct}, {h: ["mlir/" + h] for h in headers})
    units = _units(*sorted(direct))
    covers = c.coverage(units, graph)
    chosen = c.choose(covers, cap=len(units) or 1)
    everything = set().union(*covers.values()) if covers else set()
    assert set().union(*(covers[u] for u in chosen)) == everything if chosen else not everything
    assert len(chosen) == len(set(chosen)) and all(covers[u] for u in chosen)  # no unit twice, none useless
    assert chosen == c.choose(dict(reversed(list(covers.items()))), cap=len(units) or 1)
    capped = c.choose(covers, cap=cap)
    assert len(capped) <= cap and capped == chosen[:len(capped)]


def test_syntax_only_drops_the_launcher_object_and_dependency_file() -> None:
    argv = ["/usr/bin/ccache", "/usr/bin/g++", "-DX=1", "-I/t/include", "-O2", "-MD", "-MT", "o.o", "-MF", "o.d",
            "-o", "CMakeFiles/x.dir/Core.cpp.o", "-c", "/t/lib/Core.cpp"]
    assert c.syntax_only(argv) == ["/usr/bin/g++", "-fsyntax-only", "-DX=1", "-I/t/include", "-O2",
                                   "/t/lib/Core.cpp"]
    assert c.include_dirs(["g++", "-Irel", "-I", "/abs", "-isystem", "/sys", "-iquote/q", "-O2"], "/b") == [
        "/b/rel", "/abs", "/sys", "/q"]


def test_units_come_from_compile_commands_and_bad_entries_are_skipped() -> None:
    entries = [
        {"directory": "/b", "file": "/t/a.cpp", "command": "/usr/bin/g++ -I/t -o CMakeFiles/a.o -c /t/a.cpp",
         "output": "CMakeFiles/a.o"},
        {"directory": "/b", "file": "rel.cc", "arguments": ["g++", "-o", "r.o", "-c", "rel.cc"]},
        {"directory": "/b", "file": "/t/x.S", "command": "as x.S"},  # not C/C++
        {"directory": "/b", "file": "/t/q.cpp", "command": "g++ 'unterminated"},
        {"file": "/t/n.cpp", "command": "g++"}, "junk", 7,
    ]
    units = c.units_of(entries)
    assert [(u.file, u.output) for u in units] == [("/t/a.cpp", "CMakeFiles/a.o"), ("/b/rel.cc", "r.o")]
    assert c.units_of({"not": "a list"}) == []


def test_errors_group_by_cause_across_units_with_one_example() -> None:
    out_a = ("In file included from /t/lib/A.cpp:2:\n"
             f"/t/include/P.h:9:23: error: {GCC_OVERRIDE.format('FoldA')}\n"
             "/t/lib/A.cpp:20:3: error: expected ';' before '}' token\n")
    out_b = (f"/t/include/P.h:9:23: error: {GCC_OVERRIDE.format('FoldA')}\n"
             "/t/lib/B.cpp:1:10: fatal error: llvm/Passes/PassPlugin.h: No such file or directory\n"
             "compilation terminated.\n")
    diags = c.diagnostics("/t/lib/A.cpp", out_a) + c.diagnostics("/t/lib/B.cpp", out_b)
    assert len(diags) == 4
    causes = c.group(diags, {d.message: error_kind(d.message) for d in diags})
    assert [(x.kind, len(x.units)) for x in causes] == [("API change", 2), ("error", 1), ("moved header", 1)]
    top = causes[0]
    assert top.units == ("/t/lib/A.cpp", "/t/lib/B.cpp") and (top.example.file, top.example.line) == (
        "/t/include/P.h", 9)
    assert "FoldA::match() const' marked 'override'" in top.message
    # another class's override is another cause; the parameter list does not split one
    assert c.normalised(GCC_OVERRIDE.format("FoldB")) != c.normalised(GCC_OVERRIDE.format("FoldA"))
    assert c.normalised("no matching function for call to 'f(int, int)'") == c.normalised(
        "no matching function for call to 'f(long)'")


def test_when_the_canary_runs() -> None:
    assert c.plan_canary("auto", "default", True, "a" * 40, "22.1.8").enabled is False
    off_pin = c.plan_canary("auto", "default", False, "abc123def4567", "22.1.8")
    assert off_pin.enabled and "is not the pin" in off_pin.why and "abc123def456" in off_pin.why
    unknown = c.plan_canary("auto", "default", None, "abc", None)
    assert unknown.enabled and "does not record its commit" in unknown.why
    assert not c.plan_canary("off", "cli --canary", False, "abc", "22").enabled
    forced = c.plan_canary("on", "env TRITONBUILD_CANARY", True, "abc", "22")
    assert forced.enabled and forced.why == "on (env TRITONBUILD_CANARY)"


def test_the_include_graph_of_real_files(tmp_path: Path) -> None:
    tree, build, outside = tmp_path / "t", tmp_path / "b", tmp_path / "sys"
    for d in (tree / "include/triton", tree / "lib", build / "include/triton", outside):
        d.mkdir(parents=True)
    (tree / "lib/Core.cpp").write_text('#include "Local.h"\n#include <triton/Core.h>\n#include "vector"\n'
                                       '// #include "triton/Gone.h"\n#include "llvm/ADT/ScopeExit.h"\n')
    (tree / "lib/Local.h").write_text('#pragma once\n#include "triton/Gen.h.inc"\n')
    (tree / "include/triton/Core.h").write_text('#include "mlir/IR/PatternMatch.h"\n#include <outside.h>\n')
    (tree / "include/triton/Gone.h").write_text("")
    (build / "include/triton/Gen.h.inc").write_text('#include "mlir/IR/Dialect.h"\n')
    (outside / "outside.h").write_text('#include "mlir/Never/Counted.h"\n')
    core = str(tree / "lib/Core.cpp")
    graph = include_graph([core], [str(tree / "include"), str(build / "include"), str(outside)],
                          [str(tree), str(build)])
    local, llvm = graph[core]
    assert local == (str(tree / "lib/Local.h"), str(tree / "include/triton/Core.h"))  # not the commented Gone.h
    assert llvm == ("llvm/ADT/ScopeExit.h",)
    assert graph[str(tree / "lib/Local.h")] == ((str(build / "include/triton/Gen.h.inc"),), ())
    assert graph[str(tree / "include/triton/Core.h")] == ((), ("mlir/IR/PatternMatch.h",))  # outside.h: not ours
    covers = c.coverage(_units(core), graph)
    assert covers[core] == {str(tree / "lib/Local.h"), str(tree / "include/triton/Core.h"),
                            str(build / "include/triton/Gen.h.inc"), "<mlir/IR/PatternMatch.h>",
                            "<mlir/IR/Dialect.h>"}


def test_a_unity_source_becomes_its_members_with_its_command() -> None:
    text = ('/* generated by CMake */\n\n/* NOLINTNEXTLINE(bugprone-suspicious-include) */\n'
            '#include "lib/Analysis/AxisInfo.cpp"\n\n#include "/abs/Other.cpp"\n// #include "x.cpp" is a comment\n')
    assert c.unity_members(text) == ["lib/Analysis/AxisInfo.cpp", "/abs/Other.cpp"]
    unity = c.Unit("/b/lib/CMakeFiles/T.dir/Unity/unity_0_cxx.cxx", "/b/lib",
                        ("c++", "-I/s", "-o", "x.o", "-c", "/b/lib/CMakeFiles/T.dir/Unity/unity_0_cxx.cxx"), "x.o")
    assert c.is_unity(unity) and not c.is_unity(c.member_unit(unity, "/s/lib/A.cpp"))
    member = c.member_unit(unity, "/s/lib/A.cpp")
    assert member.argv == ("c++", "-I/s", "-o", "x.o", "-c", "/s/lib/A.cpp") and member.output == "x.o"
    relative = c.Unit(unity.file, "/b/lib", ("c++", "-c", "CMakeFiles/T.dir/Unity/unity_0_cxx.cxx"), None)
    assert c.member_unit(relative, "/s/B.cpp").argv == ("c++", "-c", "/s/B.cpp")


def test_the_bindings_llvm_glue_is_always_compiled_first() -> None:
    """python/src/llvm.cc's body calls LLVM's API directly: on triton-cpu 637ed8b0d with LLVM 19.1 its headers were
    all covered by other units, the canary said everything compiles, and the build failed in it."""
    glue = "/t/python/src/llvm.cc"
    covers = {"/t/lib/wide.cpp": frozenset({"a.h", "b.h", "c.h"}), glue: frozenset({"a.h"}),
              "/t/lib/narrow.cpp": frozenset({"d.h"})}
    assert c.choose(covers) == [glue, "/t/lib/wide.cpp", "/t/lib/narrow.cpp"]
    assert c.choose(covers, cap=1) == [glue]
    assert c.choose({glue: frozenset()}) == [glue]  # even when it covers nothing the others do not
    assert c.choose({"/t/python/src/llvm.cc.bak": frozenset({"a.h"})}) == ["/t/python/src/llvm.cc.bak"]
