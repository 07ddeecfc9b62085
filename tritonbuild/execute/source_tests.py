"""``tritonbuild test``: run the source's lit, C++ unit and Python tests against the develop build (edge)."""

from __future__ import annotations

import os
from pathlib import Path

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.execute.develop import dev_dir, ninja_program
from tritonbuild.execute.lock import lock
from tritonbuild.plan import Plan
from tritonbuild.printable import printable
from tritonbuild.reporter import Reporter
from tritonbuild.system import proc


def _ninja_targets(build: Path) -> set[str]:
    out = proc.run([ninja_program(), "-C", str(build), "-t", "targets", "all"])
    return {line.split(":")[0] for line in out.stdout.splitlines()}


def _ninja(build: Path, targets: list[str], jobs: int) -> None:
    rc = proc.run([ninja_program(), "-C", str(build), f"-j{jobs}", *targets], capture=False).returncode
    if rc != 0:
        raise UserError(f"Building the test dependencies ({' '.join(targets) or 'all'}) failed in {build}.")


# Whether the tests' Python has pytest, then its environment (sys.prefix, last: a path may hold a newline).
_HAS_PYTEST = ("import importlib.util, sys; "
               "sys.stdout.write(str(importlib.util.find_spec('pytest') is not None) + chr(10) + sys.prefix)")


def check_pytest(python: str, env: dict[str, str]) -> None:
    """Refuse (the host lacks a tool, exit 3) when ``python`` has no pytest, before anything runs: its own error
    ("No module named pytest", exit 1) would read as failed tests. A probe that fails otherwise says nothing here:
    the run itself reports that."""
    out = proc.run([python, "-c", _HAS_PYTEST], env=env, timeout=60)
    has, _, prefix = out.stdout.partition("\n")
    if out.ok and has == "False":
        raise EnvironmentProblem(f"pytest is not installed in {printable(prefix)}, the environment of "
                                 f"{printable(python)} that runs the Python tests: {printable(python)} -m pip install "
                                 "pytest (or activate the environment that has it).")


def run(plan: Plan, suite: str, extra: list[str], reporter: Reporter) -> int:
    """Run ``suite`` against the plan's develop build, holding its build dir's lock (Ninja brings the build up to
    date first: no develop may run there meanwhile) and with it the plan's LLVM (lit uses its tools)."""
    build = dev_dir(plan)
    if not (build / "build.ninja").is_file():
        raise UserError(f"No develop build for this plan yet ({build}). Run `tritonbuild develop` with the same "
                        "options first.")
    taken = lock(plan, reporter)
    try:
        return _run(plan, build, suite, extra, reporter)
    finally:
        taken.release()


def _run(plan: Plan, build: Path, suite: str, extra: list[str], reporter: Reporter) -> int:
    env = dict(os.environ)
    if suite == "lit":
        site = build / "test" / "lit.site.cfg.py"
        if not site.is_file():
            raise UserError(f"The source configured no lit suite ({site} is missing).")
        targets = _ninja_targets(build)
        tools = sorted(t for t in targets if t.startswith("triton-") and "/" not in t and "." not in t)
        _ninja(build, tools, plan.toolchain.jobs)
        argv = ["lit", "-v", str(build / "test"), *extra]
    elif suite == "unit":
        _ninja(build, [], plan.toolchain.jobs)
        listing = proc.run(["ctest", "--test-dir", str(build), "-N"])
        if "Total Tests: 0" in listing.stdout:
            raise UserError("This build has no C++ unit tests: the wheel plan sets TRITON_BUILD_UT=OFF. Run "
                            "`tritonbuild develop --cmake-arg=-DTRITON_BUILD_UT=ON` (a separate build dir) and "
                            "then `tritonbuild test unit --cmake-arg=-DTRITON_BUILD_UT=ON`.")
        argv = ["ctest", "--test-dir", str(build), "--output-on-failure", *extra]
    else:
        tests = Path(plan.source.root) / "python" / "test"
        check_pytest(plan.python, env)
        argv = [plan.python, "-m", "pytest", str(tests), *extra]
    reporter.step(f"$ {' '.join(argv)}")
    return proc.run(argv, env=env, capture=False).returncode
