"""Probe an LLVM prefix (edge: runs llvm-config and mlir-tblgen, reads CMake package files)."""

from __future__ import annotations

import glob
import re
import shutil
from pathlib import Path

from tritonbuild.resolve.facts import LLVMInstall
from tritonbuild.system import probememo
from tritonbuild.system.proc import run

MARKER = "tritonbuild-llvm.json"  # written by tritonbuild's own providers next to an LLVM they installed


def _run(argv: list[str]) -> tuple[bool, str]:
    proc = run(argv, timeout=60)
    if not proc.ok:
        return False, proc.output.splitlines()[-1] if proc.output else f"exit code {proc.returncode}"
    return True, proc.stdout.strip()


def _revision(prefix: Path) -> str | None:
    marker = prefix / MARKER
    if marker.is_file():
        m = re.search(r'"llvm_hash"\s*:\s*"([0-9a-f]{40})"', marker.read_text())
        if m:
            return m.group(1)
    vcs = prefix / "include" / "llvm" / "Support" / "VCSRevision.h"
    if vcs.is_file():
        m = re.search(r'#define\s+LLVM_REVISION\s+"([0-9a-f]{7,40})"', vcs.read_text())
        if m:
            return m.group(1)
    return None


def _static_missing(prefix: Path) -> tuple[str, ...]:
    """The archives a static LLVM link needs that this prefix lacks. Besides the component archives: an LLVM built
    with Polly linked in (Debian's) has LLVMExtensions and LLVMLTO reference Polly's plugin, so libPolly.a and
    libPollyISL.a are needed too (Debian: libpolly-NN-dev)."""
    lib = prefix / "lib"
    wanted = ["libLLVMSupport.a", "libLLVMCore.a", "libMLIRIR.a"]
    exports = lib / "cmake" / "llvm" / "LLVMExports.cmake"
    if exports.is_file() and "add_library(Polly STATIC IMPORTED)" in exports.read_text(errors="replace"):
        wanted += ["libPolly.a", "libPollyISL.a"]
    return tuple(n for n in wanted if not (lib / n).is_file())


def probe(prefix: Path, found_by: str = "") -> LLVMInstall:
    prefix = prefix.resolve()
    llvm_config = prefix / "bin" / "llvm-config"
    if not llvm_config.is_file():
        return LLVMInstall(str(prefix), runs=False, error=f"{llvm_config} does not exist", found_by=found_by)
    ok, version, targets = _config_answers(llvm_config)
    if not ok:
        return LLVMInstall(str(prefix), runs=False, error=f"llvm-config does not run: {version}", found_by=found_by)
    cmake_llvm = prefix / "lib" / "cmake" / "llvm" / "LLVMConfig.cmake"
    link_dylib = cmake_llvm.is_file() and bool(
        re.search(r"set\(LLVM_LINK_LLVM_DYLIB\s+ON\)", cmake_llvm.read_text(errors="replace"))
    )
    tblgen = prefix / "bin" / "mlir-tblgen"
    tblgen_ok = tblgen.is_file() and _tblgen_runs(tblgen)
    return LLVMInstall(
        prefix=str(prefix),
        runs=True,
        version=version,
        targets_built=tuple(targets.split()),
        has_mlir=(prefix / "lib" / "cmake" / "mlir" / "MLIRConfig.cmake").is_file(),
        has_lld=(prefix / "lib" / "cmake" / "lld" / "LLDConfig.cmake").is_file(),
        mlir_tblgen_runs=tblgen_ok,
        link_dylib=link_dylib,
        static_libs=not _static_missing(prefix),
        static_missing=_static_missing(prefix),
        revision=_revision(prefix),
        found_by=found_by,
    )


def _tool_key(tool: Path) -> dict[str, object]:
    """A prefix tool's memo key: the tool and its prefix's lib/ (a library it loads added, removed or replaced by
    a package upgrade changes the dir)."""
    real = tool.resolve()
    return {"files": probememo.files_key([real, real.parent.parent / "lib"])}


def _texts(value: object, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(isinstance(v, str) and len(v) < 4096 for v in value)


def _config_answers(llvm_config: Path) -> tuple[bool, str, str]:
    """``llvm-config --version`` and ``--targets-built`` (both compiled into it): ``(runs, version or why not,
    targets)``, from the memo when the tool and its prefix's lib/ are as they were."""
    key = _tool_key(llvm_config)
    memo = probememo.recall("llvm-config", key, lambda v: _texts(v, 2) and bool(v[0]))
    if memo is not None:
        return True, memo[0], memo[1]
    ok, out = _run([str(llvm_config), "--version"])
    if not ok:
        return False, out, ""
    targets_ok, targets = _run([str(llvm_config), "--targets-built"])
    if targets_ok and out.strip():
        probememo.remember("llvm-config", key, [out.strip(), targets])
    return True, out.strip(), targets


def _tblgen_runs(tblgen: Path) -> bool:
    key = _tool_key(tblgen)
    if probememo.recall("mlir-tblgen", key, lambda v: v is True):
        return True
    ok = _run([str(tblgen), "--version"])[0]
    if ok:
        probememo.remember("mlir-tblgen", key, True)
    return ok


def _version_key(path: str) -> tuple[int, ...]:
    m = re.search(r"llvm-(\d+)", path)
    return (int(m.group(1)),) if m else (0,)


def system_prefixes() -> list[tuple[str, str]]:
    """LLVM prefixes installed system-wide, newest first: ``(prefix, how it was found)``."""
    out: list[tuple[str, str]] = []
    on_path = shutil.which("llvm-config")
    if on_path:
        key = _tool_key(Path(on_path))
        memo = probememo.recall("llvm-prefix", key, lambda v: _texts(v, 1) and bool(v[0]))
        ok, prefix = (True, memo[0]) if memo else _run([on_path, "--prefix"])
        if ok and not memo:
            probememo.remember("llvm-prefix", key, [prefix])
        if ok:
            out.append((str(Path(prefix).resolve()), "llvm-config on PATH"))
    for cfg in sorted(glob.glob("/usr/lib/llvm-*/bin/llvm-config"), key=_version_key, reverse=True):
        prefix = str(Path(cfg).parent.parent.resolve())
        if prefix not in (p for p, _ in out):
            out.append((prefix, "/usr/lib/llvm-*"))
    return out
