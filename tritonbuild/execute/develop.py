"""``develop``: incremental build in the plan's build dir and an editable install (edge).

Configure runs only when the configuration recorded in ``<build dir>/dev/.tritonbuild-configure.json``
differs from the plan's (a change of a cached setting gives a *clean* reconfigure, never a mixed build);
then Ninja builds the ``triton`` target; then the editable files are rewritten only if their content changed.
A no-op ``develop`` therefore costs tritonbuild's start-up plus Ninja's own no-op.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tritonbuild.errors import BuildFailed, EnvironmentProblem, UserError
from tritonbuild.execute import editable, unity
from tritonbuild.execute.diagnose import explain
from tritonbuild.execute.lock import lock
from tritonbuild.execute.prepare import (
    build_env,
    link_compile_commands,
    made_by_tritonbuild,
    place_link,
    place_views,
    target_outputs,
    write_shims,
)
from tritonbuild.gather.source import discovers_backends_by_directory
from tritonbuild.nvidia.stage import stage as stage_nvidia
from tritonbuild.plan import VOLATILE_DEFINES, Plan
from tritonbuild.reporter import Reporter
from tritonbuild.system.fileutil import write_if_changed
from tritonbuild.system.proc import run, run_logged, tool
from tritonbuild.system.progress import Tracker

STAMP = ".tritonbuild-configure.json"


@dataclass
class DevelopResult:
    configured: str  # "no", "yes", "clean"
    ninja_no_work: bool
    installed: bool  # whether any editable file was (re)written
    site: str
    seconds: float
    log: Path
    targets: dict[str, str | None] = field(default_factory=dict)  # --target name -> its output


def dev_dir(plan: Plan) -> Path:
    return Path(plan.cmake.build_dir) / "dev"


def lib_dir(plan: Plan) -> Path:
    """Where Ninja links libtriton.so (the injected CMake's default CMAKE_LIBRARY_OUTPUT_DIRECTORY)."""
    return dev_dir(plan) / "tritonbuild-stage" / "triton" / "_C"


def _is_library(name: str) -> bool:
    return name.startswith("lib") and (".so" in name or name.endswith(".dylib"))


def _link_set(dest: Path, wanted: dict[str, Path], ours: Callable[[Path], bool]) -> list[str]:
    """Make ``dest/<name>`` links to ``wanted[name]``; drop links ``ours(target)`` claims that are no longer
    wanted; leave what is not a link alone (returned as notes)."""
    if dest.is_dir():
        for link in dest.iterdir():
            if link.is_symlink() and link.name not in wanted and ours(Path(os.readlink(link))):
                link.unlink()
    if wanted:
        dest.mkdir(parents=True, exist_ok=True)
    notes = [place_link(dest / name, target, ours) for name, target in sorted(wanted.items())]
    return [n for n in notes if n]


def unlink_from_checkout(plan: Plan) -> list[str]:
    """With ``--patch`` develop builds and links tritonbuild's patched copy: the links an earlier develop or build
    made in the user's checkout lead into another build dir, which the editor and the checkout's code would go on
    using. Remove them; return a note for each."""
    if not plan.source.checkout or Path(plan.source.checkout).resolve() == Path(plan.source.root).resolve():
        return []
    from tritonbuild.execute.builddirs import checkout_links

    mine = Path(plan.cmake.build_dir).resolve()
    notes = []
    for link, d in checkout_links(Path(plan.source.checkout), Path(plan.cache_root) / "build"):
        if d.resolve() != mine:
            link.unlink(missing_ok=True)
            notes.append(f"removed the link {link} into build dir {d}: this develop builds the patched copy "
                         f"{plan.source.root}, whose links are there")
    return notes


def link_into_source(plan: Plan) -> list[str]:
    """Link what a tree's own Python code looks for inside its package dir, which in an editable install is
    the source tree; return notes. setup.py's own editable install builds or links the same things there, and
    the trees git-ignore them.

    - Every library Ninja linked into the build's ``triton/_C`` into the source's ``python/triton/_C``:
      ``triton_key()`` hashes ``_C/libtriton.so`` there, and triton-cpu's driver links libTritonCPURuntime from
      ``importlib.resources.files(triton) / "_C"``. (The finder still maps ``triton._C`` to the build dir.)
    - For 2024 trees that discover backends by listing ``triton/backends``, each backend's ``backend/`` dir.
    """
    built = lib_dir(plan)
    libs = {p.name: built / p.name for p in built.iterdir() if _is_library(p.name)} if built.is_dir() else {}
    py = Path(plan.source.root) / "python" / "triton"
    tb = made_by_tritonbuild(plan)  # a library link of another plan's build dir is replaced, a user's is not
    notes = [f"{n}: the checkout's Triton uses that file, not the build's (triton_key() hashes it, triton-cpu loads "
             "its runtime from _C); remove it if it is left from `pip install -e .`, and run develop again"
             for n in _link_set(py / "_C", libs, lambda t: t.parent == built or tb(py / "_C" / t))]
    if discovers_backends_by_directory(Path(plan.source.root)):
        dirs = {b.name: Path(b.path) / "backend" for b in plan.backends}
        notes += _link_set(py / "backends", dirs, lambda t: t.name == "backend")
    return notes


def ninja_program() -> str:
    found = tool("ninja")
    if not found:
        raise EnvironmentProblem("couldn't find ninja next to this Python or on PATH; install it (pip install "
                                 "ninja, or ninja-build).")
    return found


def configure_argv(plan: Plan, ninja: str) -> list[str]:
    argv = ["cmake", "-S", plan.cmake.source_dir, "-B", str(dev_dir(plan)), "-G", plan.cmake.generator,
            f"-DCMAKE_BUILD_TYPE={plan.toolchain.build_type}", f"-DCMAKE_MAKE_PROGRAM={ninja}",
            f"-DPython3_EXECUTABLE={plan.python}", f"-DPython_EXECUTABLE={plan.python}"]  # both, as scikit-build-core
    return argv + [f"-D{k}={v}" for k, v in plan.cmake.defines] + list(plan.cmake.extra_args)


def _stable(argv: list[str]) -> list[str]:
    return [a for a in argv if not any(a.startswith(f"-D{v}=") for v in VOLATILE_DEFINES)]


def configure_action(build: Path, argv: list[str]) -> str:
    """"no" when the build dir is configured with exactly ``argv``, "yes" to (re)configure, "clean" to
    wipe the CMake cache first because a cached setting changed."""
    stamp = build / STAMP
    if not (build / "CMakeCache.txt").is_file() or not (build / "build.ninja").is_file():
        return "yes"
    try:
        recorded = json.loads(stamp.read_text())["argv"]
    except (OSError, ValueError, KeyError):
        return "clean"
    if recorded == argv:
        return "no"
    return "yes" if _stable(recorded) == _stable(argv) else "clean"


def site_packages(python: str) -> str:
    # A venv's python is a symlink to the base interpreter: compare the paths as given, not resolved.
    if os.path.abspath(python) == os.path.abspath(sys.executable):  # noqa: PTH100 (resolve() follows the link)
        return sysconfig.get_paths()["purelib"]
    out = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], timeout=60)
    if not out.ok:
        raise UserError(f"Cannot ask {python} for its site-packages ({out.output or out.returncode}). Pass --python "
                        "with a working interpreter.")
    return out.stdout.strip()


def install_editable(plan: Plan, site: Path) -> bool:
    """Write the finder, the .pth and the dist-info; return whether anything changed."""
    name = plan.wheel.name.replace("-", "_").lower()
    ours = editable.dist_info_name(plan)
    for other in site.glob("*.dist-info"):
        if other.name.split("-")[0].lower() != name or other.name == ours:
            continue
        installer = other / "INSTALLER"
        if installer.is_file() and installer.read_text().strip() == "tritonbuild":
            shutil.rmtree(other)  # our own editable install of another version
        else:
            by = installer.read_text().strip() if installer.is_file() else "another tool"
            raise UserError(
                f"{site} already has {other.name} installed by {by}; it would shadow the editable build. Remove "
                f"it first ({plan.python} -m pip uninstall {plan.wheel.name})."
            )
    changed = write_if_changed(site / f"{editable.FINDER_MODULE}.py", editable.finder_module(plan, str(lib_dir(plan))))
    changed |= write_if_changed(site / editable.PTH_NAME, editable.pth_file())
    files = editable.dist_info_files(plan)
    record = "".join(f"{ours}/{n},,\n" for n in sorted(files)) + f"{ours}/RECORD,,\n"
    record += f"{editable.FINDER_MODULE}.py,,\n{editable.PTH_NAME},,\n"
    for fname, text in {**files, "RECORD": record}.items():
        changed |= write_if_changed(site / ours / fname, text)
    return changed


def configure(plan: Plan, argv: list[str], action: str, *, env: Mapping[str, str], log: IO[str], tracker: Tracker,
              reporter: Reporter) -> None:
    """Configure the dev dir with ``argv`` (``configure_action`` said "yes" or "clean"), then stamp it."""
    build = dev_dir(plan)
    place_views(plan)
    write_shims(plan)
    if action == "clean":
        reporter.warn("the build dir was configured differently; reconfiguring from a clean CMake cache", topic="note")
        (build / "CMakeCache.txt").unlink(missing_ok=True)
        shutil.rmtree(build / "CMakeFiles", ignore_errors=True)
    (build / STAMP).unlink(missing_ok=True)
    rc = run_logged(argv, cwd=build, env=env, log=log, tracker=tracker, reporter=reporter, label="configure")
    if rc != 0:
        raise BuildFailed(f"CMake configure failed (exit code {rc}).", log_path=log.name,
                          tail=tracker.failure_tail())
    (build / STAMP).write_text(json.dumps({"argv": argv, "key": plan.key}, indent=1))


def develop(plan: Plan, reporter: Reporter, *, env: Mapping[str, str]) -> DevelopResult:
    env = dict(env)  # the request's environment (the edge's): never os.environ here
    if plan.llvm.problem:
        raise UserError(plan.llvm.problem)
    started = time.monotonic()
    lk = lock(plan, reporter)
    try:
        build = dev_dir(plan)
        build.mkdir(parents=True, exist_ok=True)
        write_if_changed(Path(plan.cmake.build_dir) / "plan.json", plan.to_json() + "\n")  # for status and clean
        ninja = ninja_program()
        argv = configure_argv(plan, ninja)
        action = configure_action(build, argv)
        log_path = build / "develop.log"
        tracker = Tracker()
        run_env = build_env(plan, env)
        with open(log_path, "w") as log:
            stage_nvidia(plan, lambda m: reporter.note(m, topic="nvidia"))
            unity.seed(plan)  # a list another build learned: CMake depends on it, so it re-configures
            if action != "no":
                configure(plan, argv, action, env=run_env, log=log, tracker=tracker, reporter=reporter)
            rc = run_logged([ninja, "-C", str(build), f"-j{plan.toolchain.jobs}", *plan.cmake.build_targets],
                            cwd=build, env=run_env, log=log, tracker=tracker, reporter=reporter, label="build")
            if rc != 0:
                hint = explain(plan, tracker.errors)
                raise BuildFailed(f"The build failed (exit code {rc}); the build dir {build} is kept for the next "
                                  f"run.{' ' + hint if hint else ''}", log_path=str(log_path),
                                  tail=tracker.failure_tail())
        site = Path(site_packages(plan.python))
        installed = install_editable(plan, site)
        db = build / "compile_commands.json"
        for note in link_compile_commands(plan, db):
            reporter.note(note)
        for note in link_into_source(plan):  # a file of the user's where the build's library goes: still in use
            reporter.warn(note)
        for note in unlink_from_checkout(plan):
            reporter.note(note)
        return DevelopResult(configured=action, ninja_no_work=tracker.ninja_no_work, installed=installed,
                             site=str(site), seconds=round(time.monotonic() - started, 3), log=log_path,
                             targets=target_outputs(build, plan.cmake.build_targets[1:]))
    finally:
        lk.release()
