"""Acceptance of a freshly built wheel before it is published (edge: runs the wheel's interpreter).

The import check catches a libtriton that aborts at import; the compile check compiles the plan's kernel
corpus (``tritonbuild.resolve.compilecheck``) and catches one that hangs or fails on real kernels. Either
failure keeps the wheel out of the output dir.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from tritonbuild import proc
from tritonbuild.errors import BuildFailed
from tritonbuild.fileutil import unpack_wheel
from tritonbuild.plan import Plan
from tritonbuild.resolve import compilecheck
from tritonbuild.wheel import compilecheck_run


def smoke_test(plan: Plan, wheel: Path, log: IO[str], *, prefix: Path | None = None,
               console: Any = None) -> dict[str, Any]:
    """Import the wheel's triton in a clean interpreter (catches a libtriton that aborts at import), then compile
    the plan's kernel corpus with it (catches one that hangs or fails on real kernels). A quick rebuild uses the
    install ``prefix`` the wheel was just written from instead of unzipping it. Returns the compile check's report."""
    target = Path(plan.cmake.build_dir) / "smoke"
    shutil.rmtree(target, ignore_errors=True)
    if prefix is not None:  # the prefix has the files; the backends' entry points are in the new wheel's dist-info
        root, extra = prefix, [unpack_wheel(wheel, target, only=".dist-info/")]
    else:
        root, extra = unpack_wheel(wheel, target), []
    try:
        for python in (plan.python, *plan.serves):
            _import_check(plan, root, log, python)
        return compile_check(plan, root, log, console, extra)
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _import_check(plan: Plan, root: Path, log: IO[str], python: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(root)
    code = "import triton, triton._C.libtriton as lt; print('smoke ok', triton.__file__)"
    res = proc.run([python, "-c", code], cwd=Path(plan.cmake.build_dir), env=env, timeout=300)
    log.write(f"$ smoke test: {python} -c {code!r}\n{res.stdout}{res.stderr}\n")
    if not res.ok:
        detail = res.output.splitlines()[-8:]
        hint = ""
        if "registered more than once" in res.stderr:
            hint = (" libtriton carries two copies of LLVM (a shared libLLVM plus static LLVM libraries); "
                    "tritonbuild's LLVM_LINK_LLVM_DYLIB fix was not applied to this build.")
        raise BuildFailed(f"The built wheel does not import with {python} (exit code {res.returncode}).{hint} The "
                          "wheel was not written to the output dir.", tail="\n".join(detail))


def compile_check(plan: Plan, root: Path, log: IO[str], console: Any = None,
                  extra_paths: Sequence[Path] = ()) -> dict[str, Any]:
    """Compile the plan's corpus with the wheel unpacked (or installed) at ``root``; raise BuildFailed on a
    failure or a hang. The report (counts, each case, and the LLVM it was built with) goes into the manifest."""
    check = plan.compile_check
    if check is None or not check.enabled:
        return {"enabled": False, "why": check.why_off if check else "not planned"}
    if console is not None:
        console.print(f"[cyan]compile check:[/cyan] {check.describe()}")
    start = time.monotonic()
    log.write(f"$ compile check: {plan.python} {compilecheck_run.SCRIPT} ({len(check.cases)} cases)\n")
    try:
        results = compilecheck_run.run_check(plan.python, root, check, extra_paths=extra_paths,
                                             log=lambda line: print(line, file=log))
    except RuntimeError as exc:
        raise BuildFailed(f"The compile check could not run: {exc}. The wheel was not written to the output dir "
                          "(--no-compile-check skips the check).") from None
    report = compile_report(plan, results, time.monotonic() - start)
    if compilecheck.failures(results):
        note = compilecheck.llvm_note(plan.llvm.pinned_hash, plan.llvm.is_pinned, plan.llvm.version)
        raise BuildFailed(compilecheck.failure_message(results, llvm_note=note),
                          tail="\n".join(compilecheck.describe_result(r) for r in compilecheck.failures(results)))
    return report


def compile_report(plan: Plan, results: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {"enabled": True, "seconds": round(seconds, 2), "counts": compilecheck.summarize(results),
            "llvm": {"version": plan.llvm.version, "pinned_hash": plan.llvm.pinned_hash,
                     "is_pinned": plan.llvm.is_pinned},
            "cases": [{k: v for k, v in r.items() if k != "traceback"} for r in results]}
