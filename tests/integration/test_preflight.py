"""The include preflight through the real CLI on the example tree against Debian's LLVM 22 (#36): a tree written
against an older LLVM (``old_includes``: llvm/Passes/PassPlugin.h, which 22.1 moved to llvm/Plugins/) is refused at
plan time with every include site and every known issue in one message; only what the build compiles counts."""

from __future__ import annotations

from pathlib import Path

from tritonbuild import example

from .conftest import LLVM, flat, run_cli

OLD, NEW = example.OLD_PASS_PLUGIN, "llvm/Plugins/PassPlugin.h"
HANG = ("  if (!outside && yieldOperand.value() != forOp.getInitArgs()[yieldOperand.index()]) continue;\n"
        "  yieldOp.setOperand(deadArgIdx, arg);\n"
        "void populateForOpDeadArgumentElimination(RewritePatternSet &patterns) {\n"
        "  patterns.add<ForOpDeadArgElimination>(patterns.getContext());\n}\n")


def _plan(tree: Path, tmp_path: Path, *args: str, check: bool = False) -> tuple[int, str]:
    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)  # a cache root that exists: the scan is kept there
    proc = run_cli("plan", "--source", str(tree), "--llvm", str(LLVM), "--cache-dir", str(cache), "--offline",
                   *args, cwd=tmp_path, check=check)
    return proc.returncode, flat(proc.stdout + proc.stderr)


def _add(tree: Path, rel: str, text: str) -> Path:
    path = tree / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_moved_include_and_known_issue_all_in_one_refusal(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", old_includes=True)
    _add(tree, "lib/Dialect/TritonGPU/Transforms/Utility.cpp", HANG)
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia;amd")
    assert rc == 2 and "Traceback" not in out
    assert "1 included header this LLVM lacks and 1 known issue, found before building" in out
    assert (f"python/src/ir.cc:2, test/lib/Instrumentation/Hello.cpp:2 include {OLD}: moved to {NEW} in this "
            "LLVM") in out
    assert "(for-op-dead-arg-ping-pong)" in out
    # the compile check off: the hang is only a warning, the missing header still refuses the plan
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia;amd", "--no-compile-check")
    assert rc == 2 and f"include {OLD}: moved to {NEW}" in out and "for-op-dead-arg-ping-pong" not in out


def test_fixing_the_include_passes_the_warm_plan(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton", old_includes=True)
    assert _plan(tree, tmp_path)[0] == 2
    assert list((tmp_path / "cache" / "apicheck").glob("includes-*.json"))  # the scan was kept
    for rel in example.OLD_INCLUDE_FILES:
        (tree / rel).write_text((tree / rel).read_text().replace(OLD, NEW))
    rc, out = _plan(tree, tmp_path)
    assert rc == 0 and "PassPlugin" not in out  # the kept scan did not hide the edit


def test_only_what_the_build_compiles_counts(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    _add(tree, "third_party/cpu/lib/Old.cpp", f'#include "{OLD}"\n')
    _add(tree, "bin/Old.cpp", '#include "mlir/Gone/Tool.h"\n')
    assert _plan(tree, tmp_path, "--backends", "nvidia")[0] == 0  # cpu is not built, bin/ not by `triton`
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia;cpu")
    assert rc == 2 and f"third_party/cpu/lib/Old.cpp:1 includes {OLD}: moved to {NEW}" in out
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia", "--target", "triton-opt")
    assert rc == 2 and "bin/Old.cpp:1 includes mlir/Gone/Tool.h: this LLVM has no header of that name" in out


def test_a_plugin_is_checked_too(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    plugin = example.write_plugin(tmp_path / "shared")
    _add(plugin, "lib/Old.cpp", f'// a plugin written for LLVM 21\n#include "{OLD}"\n')
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia", "--plugin-dir", str(plugin))
    assert rc == 2 and f"{plugin}/lib/Old.cpp:2 includes {OLD}: moved to {NEW}" in out


def test_an_include_behind_an_if_warns_and_one_behind_has_include_is_fine(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    _add(tree, "lib/Versioned.cpp", f'#if LLVM_VERSION_MAJOR < 22\n#include "{OLD}"\n#else\n#include "{NEW}"\n'
                                    f'#endif\n#if __has_include(<{NEW}>)\n#include "{NEW}"\n#else\n'
                                    f'#include "{OLD}"\n#endif\n')
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia", check=True)
    assert rc == 0
    assert f"lib/Versioned.cpp:2 includes {OLD} inside an #if: moved to {NEW}" in out
    assert "Versioned.cpp:9" not in out


# --- comments and continued lines are read as the preprocessor reads them (#36) ------------------------------------

def _prepend(path: Path, text: str) -> None:
    path.write_text(text + path.read_text())


def test_an_include_inside_a_comment_does_not_refuse_a_tree_that_compiles(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    _prepend(tree / "python/src/ir.cc", f'/*\n#include "{OLD}"\n*/\n/* was: */ // #include "{OLD}"\n'
                                        f'static const char *kNote = "/* not a comment";\n')
    _add(tree, "lib/Commented.cpp", f'int x; /* LLVM 21 needed\n#include "{OLD}"\n  */\n'
                                    f'auto s = R"(\n#include "{OLD}"\n)";\n')
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia")
    assert rc == 0 and "PassPlugin" not in out, out
    # a comment before an include on its line is whitespace: that include is real, on its own line
    _add(tree, "lib/Real.cpp", f'/* moved in 22 */ #include "{OLD}"\n')
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia")
    assert rc == 2 and f"lib/Real.cpp:1 includes {OLD}: moved to {NEW}" in out, out
    assert "ir.cc" not in out and "Commented.cpp" not in out


def test_an_include_continued_onto_the_next_line_is_refused_on_its_line(tmp_path: Path) -> None:
    tree = example.write_tree(tmp_path / "triton")
    assert _plan(tree, tmp_path, "--backends", "nvidia")[0] == 0  # a kept scan of the tree, before the edit
    _prepend(tree / "python/src/ir.cc", f'#include \\\n"{OLD}"\n')
    rc, out = _plan(tree, tmp_path, "--backends", "nvidia")
    assert rc == 2 and f"python/src/ir.cc:1 includes {OLD}: moved to {NEW}" in out, out


def test_a_known_compile_failure_refuses_even_without_the_compile_check(tmp_path: Path) -> None:
    """d8da7c998's TaskIdBackwardPropagation against LLVM 22.1's new pure virtual: the build would fail to compile,
    so --no-compile-check (which lets the run-time hang through as a warning) does not let it through."""
    tree = example.write_tree(tmp_path / "triton")
    _add(tree, "third_party/nvidia/hopper/lib/Transforms/WarpSpecialization/TaskIdPropagation.h",
         "class TaskIdBackwardPropagation\n    : public dataflow::SparseBackwardDataFlowAnalysis<TaskIdLattice> {};\n")
    for extra in ((), ("--no-compile-check",)):
        rc, out = _plan(tree, tmp_path, "--backends", "nvidia", *extra)
        assert rc == 2 and "(task-id-backward-pure-virtual)" in out and "would fail to compile" in out, out
