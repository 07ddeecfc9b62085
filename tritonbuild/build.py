"""Execute a Plan into a wheel (edge: writes the build dir, runs scikit-build-core, moves the wheel).

Steps: lock the plan's build dir -> write plugin shims, provenance and the staging pyproject -> run
scikit-build-core's ``build_wheel`` (configure, build ``triton`` only, install our component, package) ->
import smoke test of the wheel -> move it into the output dir under its final name -> link
compile_commands.json -> summary.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tritonbuild import __version__
from tritonbuild.diagnose import explain
from tritonbuild.errors import BuildFailed, EnvironmentProblem, UserError
from tritonbuild.plan import Plan
from tritonbuild.progress import Tracker
from tritonbuild.staging import cmake_build_dir, pyproject, staging_dir

STRAY_ENV_PREFIXES = ("SKBUILD_",)
STRAY_ENV_NAMES = ("CMAKE_ARGS", "CMAKE_GENERATOR", "CMAKE_TOOLCHAIN_FILE", "CMAKE_BUILD_TYPE")

_SKBUILD = (
    "import sys\n"
    "from scikit_build_core.build import build_wheel\n"
    "name = build_wheel(sys.argv[1])\n"
    "print('tritonbuild-wheel:', name, flush=True)\n"
)


@dataclass
class BuildResult:
    wheel: Path
    size: int
    sha256: str
    seconds: float
    timings: dict[str, float]
    ccache: dict[str, int] = field(default_factory=dict)
    ninja_no_work: bool = False
    reconfigured: bool = True
    log: Path | None = None


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def stray_env(env: Mapping[str, str]) -> list[str]:
    return sorted(k for k in env if k.startswith(STRAY_ENV_PREFIXES) or k in STRAY_ENV_NAMES)


def build_env(plan: Plan, env: Mapping[str, str]) -> dict[str, str]:
    """The environment scikit-build-core runs in: stray SKBUILD_*/CMAKE_* removed, the plan's added."""
    out = {k: v for k, v in env.items() if k not in stray_env(env)}
    out.update(dict(plan.cmake.env))
    out.pop("CMAKE_BUILD_PARALLEL_LEVEL", None)  # the plan's -j (build.tool-args) is the one that counts
    return out


def _tool_version(path: str | None) -> str | None:
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else None


def provenance(plan: Plan) -> dict[str, Any]:
    """The wheel's ``triton/_build_info.json``: what was built, from what, with what.

    In reproducible mode it holds no directory of the build machine (the source, plugins and cache are
    named, not located), so the same plan built elsewhere gives the same bytes.
    """
    tc = plan.toolchain

    def where(path: str) -> str:
        if not plan.reproducible:
            return path
        if path.startswith(plan.source.root):
            return "<source>" + path[len(plan.source.root):]
        return next((f"<plugin:{b.name}>" for b in plan.backends if b.path == path), "<elsewhere>")

    return {
        "tritonbuild_version": __version__,
        "plan_key": None if plan.reproducible else plan.key,
        "plan_fingerprint": plan.fingerprint,
        "source": {"root": where(plan.source.root), "commit": plan.source.commit, "dirty": plan.source.dirty,
                   "version": plan.source.version, "generation": plan.source.generation},
        "backends": [{"name": b.name, "origin": b.origin, "path": where(b.path), "commit": b.commit,
                      "dirty": b.dirty} for b in plan.backends],
        "backends_tuple": list(plan.backends_tuple),
        "llvm": {"prefix": plan.llvm.prefix, "version": plan.llvm.version, "pinned_hash": plan.llvm.pinned_hash,
                 "revision": plan.llvm.revision, "is_pinned": plan.llvm.is_pinned,
                 "shared_libllvm": plan.llvm.link_dylib},
        "toolchain": {"compiler": _tool_version(tc.cxx_compiler), "compiler_path": tc.cxx_compiler,
                      "linker": tc.linker, "build_type": tc.build_type, "proton": tc.proton},
        "wheel": {"name": plan.wheel.name, "version": plan.wheel.version, "reproducible": plan.reproducible},
    }


def write_shims(plan: Plan) -> None:
    """A plugin without name.conf gets a wrapper dir with the derived name.conf that add_subdirectory()s it."""
    for shim, real in plan.cmake.plugin_shims:
        name = Path(shim).name.rsplit("-", 1)[0]
        backend = Path(shim) / "backend"
        backend.mkdir(parents=True, exist_ok=True)
        _write_if_changed(backend / "name.conf", name)
        _write_if_changed(
            Path(shim) / "CMakeLists.txt",
            f"# Generated by tritonbuild: {real} has no backend/name.conf\n"
            f'add_subdirectory("{real}" "${{CMAKE_CURRENT_BINARY_DIR}}/plugin")\n',
        )


def _write_if_changed(path: Path, text: str) -> bool:
    if path.is_file() and path.read_text() == text:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return True


def prepare(plan: Plan, *, editable: bool = False) -> Path:
    """Write everything the build reads from the build dir; unchanged files are left untouched."""
    root = Path(plan.cmake.build_dir)
    stage = staging_dir(plan)
    stage.mkdir(parents=True, exist_ok=True)
    write_shims(plan)
    _write_if_changed(root / "plan.json", plan.to_json() + "\n")
    _write_if_changed(root / "build_info.json", json.dumps(provenance(plan), indent=2, sort_keys=True) + "\n")
    _write_if_changed(stage / "pyproject.toml", pyproject(plan, editable=editable))
    return stage


def lock(plan: Plan) -> Any:
    from filelock import FileLock, Timeout

    root = Path(plan.cmake.build_dir)
    root.mkdir(parents=True, exist_ok=True)
    lk = FileLock(str(root / ".tritonbuild.lock"))
    try:
        lk.acquire(timeout=1)
    except Timeout:
        raise EnvironmentProblem(
            f"Another tritonbuild run is using the build dir {root} (its lock is held). Wait for it to finish, "
            "or build another plan."
        ) from None
    return lk


def ccache_stats(plan: Plan) -> dict[str, int]:
    if not plan.toolchain.ccache:
        return {}
    try:
        out = subprocess.run([plan.toolchain.ccache, "--print-stats"], capture_output=True, text=True, timeout=30,
                             check=False)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    stats: dict[str, int] = {}
    for line in out.stdout.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            stats[key] = int(value)
    return stats


def ccache_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    def d(key: str) -> int:
        return after.get(key, 0) - before.get(key, 0)

    hits = d("direct_cache_hit") + d("preprocessed_cache_hit")
    return {"hits": hits, "misses": d("cache_miss"), "remote_hits": d("remote_storage_hit")}


def run_logged(argv: list[str], *, cwd: Path, env: Mapping[str, str], log: IO[str], tracker: Tracker,
               console: Any, label: str) -> int:
    """Run a command, stream its output into the log and the tracker, show a progress bar on a terminal."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    log.write(f"$ cd {cwd} && {' '.join(argv)}\n")
    log.flush()
    proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, bufsize=1, errors="replace")
    assert proc.stdout is not None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(label, total=None)
        for line in proc.stdout:
            log.write(line)
            log.flush()  # the log is what people tail -f during an hour-long build
            tracker.feed(line)
            if tracker.total:
                bar.update(task, completed=tracker.done, total=tracker.total, description=f"{label}: {tracker.phase}")
            else:
                bar.update(task, description=f"{label}: {tracker.phase}")
        rc = proc.wait()
    log.flush()
    return rc


def smoke_test(plan: Plan, wheel: Path, log: IO[str]) -> None:
    """Import the wheel's triton in a clean interpreter: catches a libtriton that aborts at import."""
    target = Path(plan.cmake.build_dir) / "smoke"
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(target)
    code = "import triton, triton._C.libtriton as lt; print('smoke ok', triton.__file__)"
    proc = subprocess.run([plan.python, "-c", code], cwd=target.parent, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    log.write(f"$ smoke test: {plan.python} -c {code!r}\n{proc.stdout}{proc.stderr}\n")
    shutil.rmtree(target, ignore_errors=True)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
        hint = ""
        if "registered more than once" in (proc.stderr or ""):
            hint = (" libtriton carries two copies of LLVM (a shared libLLVM plus static LLVM libraries); "
                    "tritonbuild's LLVM_LINK_LLVM_DYLIB fix was not applied to this build.")
        raise BuildFailed(f"The built wheel does not import (exit code {proc.returncode}).{hint} The wheel was "
                          "not written to the output dir.", tail="\n".join(detail))


def publish(wheel: Path, out_dir: Path) -> Path:
    """Copy the finished wheel into ``out_dir`` under a temporary name, then rename it into place."""
    out_dir.mkdir(parents=True, exist_ok=True)
    final = out_dir / wheel.name
    tmp = out_dir / f".{wheel.name}.{os.getpid()}.partial"
    try:
        shutil.copyfile(wheel, tmp)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final


def link_compile_commands(plan: Plan, db: Path | None = None) -> list[str]:
    """Symlink compile_commands.json into the source root and each plugin root; never replace a user's file."""
    db = db or cmake_build_dir(plan) / "compile_commands.json"
    notes: list[str] = []
    if not db.is_file():
        return notes
    roots = [plan.source.root] + [b.path for b in plan.backends if b.origin == "plugin"]
    for root in roots:
        link = Path(root) / "compile_commands.json"
        if link.is_symlink() or not link.exists():
            if link.is_symlink() and Path(os.readlink(link)) == db:
                continue
            tmp = link.with_name(".compile_commands.json.tritonbuild")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(db)
            os.replace(tmp, link)
        else:
            notes.append(f"{link} is a regular file, left alone (the build's is {db})")
    return notes


def build_wheel(plan: Plan, console: Any, *, env: Mapping[str, str] | None = None,
                smoke: bool = True) -> BuildResult:
    env = dict(os.environ) if env is None else dict(env)
    if plan.llvm.problem:
        raise UserError(plan.llvm.problem)
    for stray in stray_env(env):
        console.print(f"[yellow]note:[/yellow] ignoring {stray}={env[stray]!r} from the environment "
                      "(tritonbuild passes its plan to scikit-build-core itself; use --cmake-arg instead)")
    lk = lock(plan)
    root = Path(plan.cmake.build_dir)
    tmp_wheels = root / "wheel-tmp"
    started = time.monotonic()
    try:
        stage = prepare(plan)
        shutil.rmtree(tmp_wheels, ignore_errors=True)
        tmp_wheels.mkdir()
        log_path = root / "build.log"
        before = ccache_stats(plan)
        tracker = Tracker()
        with open(log_path, "w") as log:
            log.write(f"tritonbuild {__version__} plan {plan.key}\n")
            rc = run_logged([plan.python, "-u", "-c", _SKBUILD, str(tmp_wheels)], cwd=stage,
                            env=build_env(plan, env), log=log, tracker=tracker, console=console,
                            label=f"building {plan.wheel.name}")
            timings = tracker.finish()
            if rc != 0:
                hint = explain(plan, tracker.errors)
                raise BuildFailed(f"The build failed (exit code {rc}) in {tracker.phase}. The build dir "
                                  f"{root} is kept for the next run.{' ' + hint if hint else ''}",
                                  log_path=str(log_path), tail=tracker.failure_tail())
            wheels = sorted(tmp_wheels.glob("*.whl"))
            if len(wheels) != 1:
                raise BuildFailed(f"scikit-build-core finished but produced {len(wheels)} wheels.",
                                  log_path=str(log_path))
            if smoke:
                smoke_test(plan, wheels[0], log)
        final = publish(wheels[0], Path(plan.wheel.out_dir))
        for note in link_compile_commands(plan):
            console.print(f"[cyan]note:[/cyan] {note}")
        result = BuildResult(
            wheel=final, size=final.stat().st_size, sha256=sha256_of(final),
            seconds=round(time.monotonic() - started, 2), timings=timings,
            ccache=ccache_delta(before, ccache_stats(plan)) if plan.toolchain.ccache else {},
            ninja_no_work=tracker.ninja_no_work, log=log_path,
        )
        write_outputs(plan, result)
        return result
    finally:
        shutil.rmtree(tmp_wheels, ignore_errors=True)
        lk.release()


def print_summary(plan: Plan, result: BuildResult, console: Any) -> None:
    from rich.table import Table

    t = Table(title="built", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("wheel", str(result.wheel))
    t.add_row("size", f"{result.size / 2**20:.1f} MiB")
    t.add_row("sha256", result.sha256)
    t.add_row("backends", ", ".join(plan.backend_names) + (" (+proton)" if plan.toolchain.proton else ""))
    t.add_row("time", f"{result.seconds:.1f} s  (" + ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items())
              + ")")
    if result.ccache:
        remote = f", {result.ccache['remote_hits']} from remote storage" if result.ccache.get("remote_hits") else ""
        t.add_row("ccache", f"{result.ccache['hits']} hits, {result.ccache['misses']} misses{remote}")
    if result.ninja_no_work:
        t.add_row("ninja", "no work to do")
    t.add_row("log", str(result.log))
    console.print(t)


def result_dict(plan: Plan, result: BuildResult) -> dict[str, Any]:
    """The build manifest: the wheel, its hash and size, timings, ccache figures, provenance and the plan."""
    return {
        "wheel": str(result.wheel), "size": result.size, "sha256": result.sha256, "seconds": result.seconds,
        "timings": result.timings, "ccache": result.ccache, "ninja_no_work": result.ninja_no_work,
        "log": str(result.log), "plan_key": plan.key, "build_dir": plan.cmake.build_dir,
        "backends": list(plan.backend_names), "backends_tuple": list(plan.backends_tuple),
        "provenance": provenance(plan), "plan": plan.to_dict(),
    }


def write_outputs(plan: Plan, result: BuildResult) -> tuple[Path, Path]:
    """``<wheel>.manifest.json`` next to the wheel, and ``SHA256SUMS`` over every wheel in the output dir."""
    out = result.wheel.parent
    manifest = out / (result.wheel.name.removesuffix(".whl") + ".manifest.json")
    _write_if_changed(manifest, json.dumps(result_dict(plan, result), indent=2, sort_keys=True) + "\n")
    sums = out / "SHA256SUMS"
    lines = [f"{sha256_of(w)}  {w.name}\n" for w in sorted(out.glob("*.whl"))]
    _write_if_changed(sums, "".join(lines))
    return manifest, sums
