"""Compile acceptance (edge): run ``corpus_kernels.py`` with a wheel's interpreter and time each case.

One child process compiles the cases one after another and prints a JSON line as each starts, enters a stage and
ends. A case that gives no result within the time limit is a hang: the child is stopped with its session (ptxas
and friends; ``proc.start``/``proc.end``) and a new one goes on with the cases left, so one hang costs one time
limit, not the check; likewise after a case that kills the interpreter (an assertion in libtriton).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tritonbuild.plan import Case, CompileCheckPlan, Plan
from tritonbuild.resolve.compilecheck import judge
from tritonbuild.system import proc
from tritonbuild.system.fileutil import read_owned_json, sha256_of
from tritonbuild.wheel import reaper

SCRIPT = Path(__file__).resolve().parent / "corpus_kernels.py"
# The child sees only the wheel: no caller PYTHON* variable, no user site, a private kernel cache.
_DROP = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE")


def child_env(env: Mapping[str, str], root: Path, on_path: bool, cache: Path,
              extra_paths: Sequence[Path] = (), ptxas_memo: Path | None = None) -> dict[str, str]:
    """The check's environment: the caller's without PYTHON*, TRITON_* and TRITONBUILD_* settings (a user's
    TRITON_INTERPRET or cache dir must not change what is checked), ``root`` (the dir holding ``triton/``) on
    PYTHONPATH when the wheel is unpacked rather than installed, a private kernel cache, a ptxas, and the dir of
    ptxas's kept answers when one is given (``ptxas_memo.py``)."""
    out = {k: v for k, v in env.items() if k not in _DROP and not k.startswith(("TRITON_", "TRITONBUILD_"))}
    if ptxas_memo is not None:
        out["TRITONBUILD_PTXAS_MEMO"] = str(ptxas_memo)
    if on_path:
        out["PYTHONPATH"] = os.pathsep.join(str(p) for p in (root, *extra_paths))
        out["TRITONBUILD_CHECKED_ROOT"] = str(root)  # the check's triton must be this one (not an editable install)
    out.update({"PYTHONNOUSERSITE": "1", "TRITON_CACHE_DIR": str(cache), "TRITON_ALWAYS_COMPILE": "1",
                "PYTHONDONTWRITEBYTECODE": "1"})
    # the nvidia backend asks ptxas for its version even to write PTX: the wheel's bundled one comes first in
    # Triton's own lookup; a toolkit's is the fallback for a wheel built without it
    for var, bundled in (("TRITON_PTXAS_PATH", "ptxas"), ("TRITON_PTXAS_BLACKWELL_PATH", "ptxas-blackwell")):
        if var in env:
            out[var] = env[var]
        elif not _bundled(root, bundled) and (found := _toolkit_tool(env, "ptxas")):
            out[var] = found  # CUDA 12.8+'s ptxas also assembles sm_100
    if "TRITON_PTXAS_BLACKWELL_PATH" in out:  # Triton before late 2025 (acd810499) reads this spelling (knobs.py)
        out["TRITON_PTXAS-BLACKWELL_PATH"] = out["TRITON_PTXAS_BLACKWELL_PATH"]
    # amd backends before mid-2025 link with an external ld.lld (TRITON_HIP_LLD_PATH, else /opt/rocm's)
    if "TRITON_HIP_LLD_PATH" in env:
        out["TRITON_HIP_LLD_PATH"] = env["TRITON_HIP_LLD_PATH"]
    elif lld := _host_lld():
        out["TRITON_HIP_LLD_PATH"] = lld
    return out


def _host_lld() -> str | None:
    found = shutil.which("ld.lld")
    if found:
        return found
    candidates = sorted(Path("/usr/lib").glob("llvm-*/bin/ld.lld"), reverse=True)
    return str(candidates[0]) if candidates else None


def _bundled(root: Path, name: str) -> bool:
    return os.access(root / "triton/backends/nvidia/bin" / name, os.X_OK)


def _toolkit_tool(env: Mapping[str, str], name: str) -> str | None:
    for root in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.access(Path(root) / "bin" / name, os.X_OK):
            return str(Path(root) / "bin" / name)
    return None


def _start(python: str, cases: Sequence[Case], env: Mapping[str, str], cwd: Path, timeout: int
           ) -> subprocess.Popen[str]:
    """The child, started as every long child is (``proc.start``: a session of its own, the death signal, a
    watchdog, the lock dir's record), so a hang, Ctrl-C, SIGTERM or tritonbuild's own death (SIGKILL, the OOM
    killer) stops it with its compilers; the caller ``proc.end``s it on every way out. It is started from a worker
    thread that outlives it (``run_check``'s pool ends each child before its task returns), as the death signal
    needs."""
    payload = json.dumps([c.to_json() for c in cases])
    limit = len(cases) * timeout + 120  # a backstop: the caller stops a case that runs past its own limit
    return proc.start([*reaper.argv(limit), python, "-u", str(SCRIPT), payload], cwd=cwd, env=env)


class _Watch:
    """Reads one child's lines, keeping the case it is on, the stage it entered and when the case started. It
    reads the pipe's bytes itself (its file descriptor, not the text wrapper): a buffered readline() could hold
    lines the selector no longer sees."""

    def __init__(self, child: subprocess.Popen[str], log: Callable[[str], None]) -> None:
        self.child, self.log = child, log
        self.case: str | None = None
        self.stage: str | None = None
        self.started = time.monotonic()
        assert child.stdout is not None
        self.fd = child.stdout.fileno()
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)
        self.buffer, self.lines, self.ended = b"", list[str](), False
        self.tail: list[str] = []

    def _line(self, deadline: float) -> str | None:
        """The next line; "" at the end of the output; None when the deadline passed."""
        while not self.lines:
            if self.ended:
                return ""
            left = deadline - time.monotonic()
            if left <= 0 or not self.sel.select(timeout=left):
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.ended, chunk = True, b"\n" if self.buffer else b""
            *done, self.buffer = (self.buffer + chunk).split(b"\n")
            self.lines += [d.decode(errors="replace") for d in done]
        return self.lines.pop(0)

    def next_event(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON event, ``{}`` at the end of the child's output, None when the deadline passed."""
        while True:
            line = self._line(deadline)
            if line is None:
                return None
            if line == "" and self.ended and not self.lines:
                return {}
            self.log(line)
            try:
                event = json.loads(line)
            except ValueError:
                self.tail = [*self.tail[-20:], line]  # stray output (warnings) kept for errors
                continue
            if isinstance(event, dict):
                return event


def _result(event: Mapping[str, Any]) -> dict[str, Any]:
    if event["event"] == "skip":
        return {"case": event["case"], "status": "skipped", "reason": event.get("reason")}
    status = "ok" if event.get("ok") else "failed"
    out = {"case": event["case"], "status": status, "seconds": event.get("seconds"),
           "stages": event.get("stages", [])}
    if status == "failed":
        out.update(error=event.get("error"), traceback=event.get("traceback"))
    if event.get("facts"):
        out["facts"] = event["facts"]
    return out


def _run_child(python: str, todo: list[Case], env: Mapping[str, str], timeout: int, cwd: Path,
               log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Run the child over ``todo`` until it ends or a case hangs; the results it gave (a hang is the last one)."""
    child = _start(python, todo, env, cwd, timeout)
    watch, results = _Watch(child, log), []
    ready_by = time.monotonic() + max(timeout, 60)  # importing triton
    deadline = ready_by
    try:
        while True:
            event = watch.next_event(deadline)
            if event is None:
                if watch.case is None:
                    raise RuntimeError(f"the wheel's interpreter did not start the check within {max(timeout, 60)} s")
                results.append({"case": watch.case, "status": "timeout", "seconds": round(
                    time.monotonic() - watch.started, 1), "stage": watch.stage})
                return results
            if event == {}:
                if watch.case is not None and watch.case not in {r["case"] for r in results}:
                    results.append({"case": watch.case, "status": "failed", "stage": watch.stage,
                                    "error": f"the interpreter exited (code {child.wait()}) during this case: "
                                             + " | ".join(watch.tail[-3:])})
                return results
            kind = event.get("event")
            if kind == "fatal":
                raise RuntimeError(f"the wheel's triton cannot run the check: {event.get('error')}")
            if kind == "start":
                watch.case, watch.stage, watch.started = event["case"], None, time.monotonic()
                deadline = watch.started + timeout
            elif kind == "stage":
                watch.stage = event.get("stage")
            elif kind in ("done", "skip"):
                result = _result(event)
                if result["status"] == "failed":
                    result["stage"] = watch.stage
                results.append(result)
    finally:
        proc.end(child)  # a hang or an unwinding error: its whole session stopped; the record forgets it
        watch.sel.close()
        if child.stdout is not None:
            child.stdout.close()


CHECK_WORKERS = 2  # children compiling at once (each imports triton once: ~1 s): 18 s to about 9 s on d8da7c998


def run_check(python: str, root: Path, plan: CompileCheckPlan, *, on_path: bool = True,
              extra_paths: Sequence[Path] = (), ptxas_memo: Path | None = None,
              log: Callable[[str], object]) -> list[dict[str, Any]]:
    """Compile every case of ``plan`` with ``python``; ``root`` holds the wheel's ``triton/`` (an unpacked wheel,
    put on PYTHONPATH, or with ``on_path=False`` the site-packages it is installed in). One result per case, in
    the plan's order, each compiled one checked against its target's launch limits (shared memory, registers:
    ``compilecheck.judge``). ``extra_paths`` follow ``root`` on PYTHONPATH (a quick rebuild's dist-info, where the
    backends' entry points are). ``ptxas_memo``: a dir where ptxas's answers are kept and found (a build dir's;
    never for a wheel from elsewhere, whose code could plant answers). Raises RuntimeError when triton does not
    load."""
    results: dict[str, dict[str, Any]] = {}
    workers = max(1, min(os.cpu_count() or 1, CHECK_WORKERS, len(plan.cases)))
    groups = [list(plan.cases[i::workers]) for i in range(workers)]  # round robin: each target in every group
    lock = threading.Lock()

    def said(line: str) -> None:  # the children's lines whole, never two interleaved in the log
        with lock:
            log(line)

    with tempfile.TemporaryDirectory(prefix="tritonbuild-compile-") as tmp:
        def one(i: int) -> dict[str, dict[str, Any]]:
            work = Path(tmp) / str(i)  # each child its own kernel cache: no two write one entry
            work.mkdir()
            cenv = child_env(os.environ, root, on_path, work / "cache", extra_paths, ptxas_memo)
            return _run_group(python, groups[i], cenv, plan.timeout, work, said)

        for got in proc.thread_map(one, range(workers), workers):  # Ctrl-C stops the children at once
            results.update(got)
    return [judge(results[c.id], c.id.partition("@")[2]) for c in plan.cases if c.id in results]


def _run_group(python: str, cases: list[Case], cenv: Mapping[str, str], timeout: int, cwd: Path,
               log: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """The results of ``cases``, one child after another: a hang is killed or a dead interpreter replaced, and a new
    one goes on with the cases left, until none is left or a child gives nothing at all."""
    results: dict[str, dict[str, Any]] = {}
    todo = list(cases)
    while todo:
        got = _run_child(python, todo, cenv, timeout, cwd, log)
        results.update((r["case"], r) for r in got)
        todo = [c for c in todo if c.id not in results]
        if not got:  # the interpreter gave nothing at all: it will not for the cases left either
            results.update((c.id, {"case": c.id, "status": "failed", "error": "the check ended before this case"})
                           for c in todo)
            todo = []
    return results


PTXAS_MEMO = "compile-check-ptxas"  # in the build dir: ptxas's answers (ptxas_memo.py)


def ptxas_memo_dir(plan: Plan) -> Path | None:
    """The build dir's dir of ptxas's kept answers, made this user's (0700) and pruned to its budget; None when it
    cannot be (then ptxas runs every time)."""
    from tritonbuild.wheel import ptxas_memo

    path = Path(plan.cmake.build_dir) / PTXAS_MEMO
    with contextlib.suppress(OSError):
        path.mkdir(mode=0o700, exist_ok=True)
    if not ptxas_memo.usable(str(path)):
        return None
    ptxas_memo.prune(str(path))
    return path


# --- a passing compile check is not run again while nothing it judges changed ---------------------------------------

PASSED = "compile-check-passed.json"  # in the build dir: what the last passing check judged, and its report
_RECORD_LIMIT = 4 << 20  # bytes: a record holds one report (a few KB per case)


RACY_NS = 2_000_000_000  # a file changed this close to its hashing is hashed again next time (git's racily clean)


def _record(plan: Plan) -> dict[str, Any]:
    """The last passing check's record in the build dir (read as hostile: this user's file, capped); {} if none."""
    record = read_owned_json(Path(plan.cmake.build_dir) / PASSED, _RECORD_LIMIT)
    return record if isinstance(record, dict) else {}


def _known(record: Mapping[str, Any]) -> dict[str, tuple[list[int], str]]:
    """The record's ``files``: each hashed file's stat key and sha256, as the last passing check saw them."""
    files = record.get("files")
    if not isinstance(files, dict):
        return {}
    return {k: (v[0], v[1]) for k, v in files.items() if isinstance(v, list) and len(v) == 2 and isinstance(v[0], list)
            and all(type(n) is int for n in v[0]) and isinstance(v[1], str) and len(v[1]) == 64}


def wheel_digest(root: Path, extra_paths: Sequence[Path] = (), known: Mapping[str, tuple[list[int], str]] = {},
                 seen: dict[str, list[Any]] | None = None) -> str | None:
    """What of the wheel's ``triton/`` (and ``extra_paths``: a quick rebuild's dist-info) the compile check runs:
    the sha256 of every library, Python file and executable (libtriton, the compiler's and backends' code, ptxas), the
    size of every other file; None when it cannot be read. A file whose stat key (device, inode, size, mtime) is
    the one ``known`` gives is not read again; ``seen`` gets this run's keys and hashes, but not of a file changed
    within ``RACY_NS`` of now (a change in the same clock tick keeps its stat key)."""
    h, racy = hashlib.sha256(), time.time_ns() - RACY_NS
    try:
        for top in (root / "triton", *extra_paths):
            for here, dirs, files in os.walk(top):
                dirs.sort()
                for name in sorted(files):
                    p = Path(here, name)
                    st = p.lstat()
                    whole = name.endswith((".py", ".so")) or ".so." in name or bool(st.st_mode & 0o111) \
                        or top != root / "triton"
                    digest = f"size {st.st_size}"
                    if whole:
                        key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
                        old = known.get(str(p))
                        digest = old[1] if old is not None and old[0] == key else sha256_of(p)
                        if seen is not None and st.st_mtime_ns < racy:
                            seen[str(p)] = [key, digest]
                    h.update(f"{p.relative_to(top)}\0{digest}\n".encode())
    except (OSError, ValueError):
        return None
    return h.hexdigest()


def judged(plan: Plan, root: Path, extra_paths: Sequence[Path] = ()) -> dict[str, Any] | None:
    """What a passing check's record must match to be used again: the build dir (the plan's key), the interpreter,
    the LLVM, the corpus (its cases, their time limit, the runner's code) and the wheel (``wheel_digest``, reading
    only the files changed since the record's); under ``files``, what ``remember`` keeps for the next time."""
    check, files = plan.compile_check, dict[str, list[Any]]()
    digest = wheel_digest(root, extra_paths, _known(_record(plan)), files)
    if check is None or digest is None:
        return None
    corpus = hashlib.sha256(json.dumps([[c.to_json() for c in check.cases], check.timeout], sort_keys=True).encode())
    for code in (SCRIPT, SCRIPT.with_name("ptxas_memo.py"), Path(__file__)):
        with contextlib.suppress(OSError):
            corpus.update(code.read_bytes())
    return {"key": plan.key, "python": plan.python, "llvm": [plan.llvm.prefix, plan.llvm.version, plan.llvm.revision],
            "corpus": corpus.hexdigest(), "wheel": digest, "files": files}


def _compared(now: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in now.items() if k != "files"}


def passed_before(plan: Plan, now: dict[str, Any] | None) -> tuple[dict[str, Any], str] | None:
    """The report of the last passing check in this build dir and the line that says why it is not run again, when
    everything it judged is as it was (``now``, from ``judged``); None: run it."""
    record = _record(plan)
    if now is None or record.get("judged") != _compared(now) or not isinstance(record.get("report"), dict):
        return None
    cases = len(plan.compile_check.cases) if plan.compile_check else 0
    return record["report"], (f"compile check skipped: it passed in this build dir ({cases} kernels) with the same "
                              "interpreter, LLVM and corpus, and the wheel's libraries and Python files are unchanged")


def remember(plan: Plan, now: dict[str, Any] | None, report: dict[str, Any] | None) -> None:
    """Keep a passing check's report with what it judged; a failing one (``report`` None) leaves no record."""
    path = Path(plan.cmake.build_dir) / PASSED
    with contextlib.suppress(OSError):
        if now is None or report is None:
            path.unlink(missing_ok=True)
        elif path.parent.is_dir():
            path.write_text(json.dumps({"judged": _compared(now), "files": now.get("files", {}),
                                        "report": report}) + "\n")
