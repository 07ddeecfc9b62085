"""One build of one plan as one object (edge: the build dir, the build's commands): its build dir and log, the
rounds its commands ran (the Ninja log's size before each, the unity targets learned between them), its timings,
and the one place its ``BuildResult`` is made. A ``Strategy`` (``tritonbuild.execute.strategies``) drives it."""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tritonbuild import __version__
from tritonbuild.errors import BuildFailed, DiskProblem
from tritonbuild.execute import cache_stats as compilercache
from tritonbuild.execute import ninjalog, republish, unity
from tritonbuild.execute.diagnose import disk_hint, explain
from tritonbuild.execute.lock import free_gib
from tritonbuild.execute.prepare import (
    build_env,
    cache_stats,
    release_cache_server,
    target_outputs,
)
from tritonbuild.execute.staging import cmake_build_dir
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.result import BuildResult
from tritonbuild.system import proc
from tritonbuild.system.fileutil import sha256_of
from tritonbuild.system.progress import Tracker

Steps = Sequence[Sequence[str]]
# What packaging, the SBOM, the checks and publishing import (cyclonedx, in-toto's protobuf, pyelftools: about 0.1 s),
# imported on a thread while ninja runs: after an edit ninja compiles one unit and leaves a core idle.
AFTER_NINJA = ("tritonbuild.wheel.writer", "tritonbuild.wheel.sbom_write", "tritonbuild.wheel.acceptance",
               "tritonbuild.wheel.publish", "tritonbuild.wheel.checks.registry", "elftools.elf.elffile",
               "elftools.elf.dynamic")


def warm_imports(names: Sequence[str] = AFTER_NINJA) -> threading.Thread:
    """Import ``names`` on a daemon thread (a failure is left for the import that needs the module to raise)."""
    import importlib

    def run() -> None:
        for name in names:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    thread = threading.Thread(target=run, name="tritonbuild-warm-imports", daemon=True)
    thread.start()
    return thread


@dataclass(frozen=True)
class WheelFacts:
    """What the published wheel holds besides its bytes: what a republish of it reports again."""

    sha256: str
    repaired: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, str | None] = field(default_factory=dict)
    bundled: dict[str, Any] = field(default_factory=dict)
    compile_check: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "repaired": self.repaired, "targets": self.targets, "bundled": self.bundled,
                "compile_check": self.compile_check}

    @classmethod
    def from_record(cls, record: Mapping[str, Any], wheel: Path) -> WheelFacts:
        """The facts a kept wheel was remembered with (its sha256 computed when the record lacks it)."""
        return cls(sha256=str(record.get("sha256") or sha256_of(wheel)), repaired=dict(record.get("repaired") or {}),
                   targets=dict(record.get("targets") or {}), bundled=dict(record.get("bundled") or {}),
                   compile_check=dict(record.get("compile_check") or {}))


@dataclass(frozen=True)
class Installed:
    """A quick rebuild's install prefix, which the new wheel is written from and the checks that run code import
    from; ``last_wheel``, whose dist-info the new wheel copies; ``settle`` makes the prefix what the wheel will
    hold (the files ``cmake --install`` took for up to date) before either reads it."""

    prefix: Path
    last_wheel: Path
    settle: Callable[[IO[str]], None]


@dataclass
class BuildRun:
    """One build of ``plan`` under the build dir's lock (held by the caller)."""

    plan: Plan
    reporter: Reporter
    env: dict[str, str]
    smoke: bool = True
    started: float = field(default_factory=time.monotonic)
    stage: Path = field(default_factory=Path)  # the staging dir the commands run in (``prepare``)
    tracker: Tracker = field(default_factory=Tracker)
    marks: list[int] = field(default_factory=list)  # the Ninja log's size before each round
    learned: list[str] = field(default_factory=list)  # unity targets this build found clash when joined
    timings: dict[str, float] = field(default_factory=dict)
    moved: dict[str, Any] = field(default_factory=dict)  # the compiler cache's figures over this build
    compiled: bool = False  # the build's commands ran (a republish runs none)
    log: IO[str] | None = None

    @property
    def root(self) -> Path:
        return Path(self.plan.cmake.build_dir)

    @property
    def tmp_wheels(self) -> Path:
        return self.root / "wheel-tmp"

    @property
    def log_path(self) -> Path:
        return self.root / "build.log"

    def seconds(self) -> float:
        return round(time.monotonic() - self.started, 2)

    @contextmanager
    def opened_log(self) -> Iterator[IO[str]]:
        """The build's log, written afresh, open while the context lasts."""
        with open(self.log_path, "w") as log:
            log.write(f"tritonbuild {__version__} plan {self.plan.key}\n")
            self.log = log
            try:
                yield log
            finally:
                self.log = None

    def make_wheel(self, why: str, steps: Callable[[IO[str]], Steps], package: Callable[[IO[str]], dict[str, float]],
                   installed: Installed | None) -> tuple[Path, WheelFacts]:
        """Run the commands ``steps`` gives (in rounds), package, repair, add the SBOM, check and publish: the
        published wheel and its facts. ``why`` goes to the log; ``installed``: a quick rebuild's prefix, whose code
        the checks that run code run while the wheel is written (None: the wheel's own, after it)."""
        republish.forget(self.plan)
        shutil.rmtree(self.tmp_wheels, ignore_errors=True)
        self.tmp_wheels.mkdir()
        (self.root / "bundle.json").unlink(missing_ok=True)  # the install step writes it afresh
        (self.root / "distcc.log").unlink(missing_ok=True)  # distcc appends: one build's lines only
        before = cache_stats(self.plan, self.env)
        with self.opened_log() as log:
            log.write(f"tritonbuild: {why}\n")
            warm = warm_imports()
            try:
                self.compile(steps(log))
            finally:
                warm.join()  # never left importing (and maybe warning on stderr) while the process ends
            from tritonbuild.wheel import acceptance
            from tritonbuild.wheel.publish import publish
            from tritonbuild.wheel.repair import repair
            from tritonbuild.wheel.sbom_write import add_sbom

            checked: dict[str, Any] = {"enabled": False, "why": "--no-smoke-test"}
            with proc.beside(2) as pool:  # code checks beside packaging, sha256 beside checks; Ctrl-C stops them
                code = None
                if installed is not None:
                    installed.settle(log)  # the prefix as the wheel will have it, before any code runs from it
                    code = pool.submit(acceptance.code_checks, self.plan, installed.prefix, installed.last_wheel,
                                       log, self.reporter) if self.smoke else None
                self.timings |= package(log)
                wheel, repaired = self._one_wheel(), dict[str, Any]()
                if self.plan.repair is not None:
                    wheel, repaired = repair(self.plan, wheel, log, self.log_path)
                log.write(f"tritonbuild: SBOM added to the wheel: {add_sbom(self.plan, wheel)}\n")  # final (#38)
                digest = pool.submit(sha256_of, wheel)
                if self.smoke:
                    checked = acceptance.smoke_test(self.plan, wheel, log, self.reporter,
                                                    prefix=installed.prefix if installed else None, code=code)
        final = publish(wheel, Path(self.plan.wheel.out_dir))  # renamed into place: the same bytes
        self.moved = compilercache.delta(before, cache_stats(self.plan, self.env))
        release_cache_server(self.plan, self.env)
        return final, WheelFacts(digest.result(), repaired, target_outputs(cmake_build_dir(self.plan),
                                 self.plan.cmake.build_targets[1:]), _read_json(self.root / "bundle.json"), checked)

    def compile(self, steps: Steps) -> None:
        """Run the commands, again after a round whose unity units clashed (their targets are learned); a failure
        becomes BuildFailed or DiskProblem. The phase timings go to ``timings``."""
        self.compiled = True
        for attempt in range(unity.ROUNDS + 1):
            self.marks.append(ninjalog.log_size(cmake_build_dir(self.plan)))
            rc = self._round(steps)
            new = unity.learn(self.plan, self.tracker.errors) if rc != 0 else ()
            if not new or attempt == unity.ROUNDS:
                break
            self._learned(new)
        failed_in = self.tracker.phase
        self.timings |= self.tracker.finish()
        if rc != 0:
            self._failed(rc, failed_in)

    def _learned(self, new: tuple[str, ...]) -> None:
        self.learned += new
        self.reporter.note(f"unity builds: {', '.join(new)} failed to compile joined; building them file by file, "
                           f"now and from now on (learned in {self.root / unity.LEARNED})")
        assert self.log is not None
        self.log.write(f"tritonbuild: unity units of {', '.join(new)} failed; building again with them file by "
                       "file\n")
        self.tracker.new_round()

    def _round(self, steps: Steps) -> int:
        assert self.log is not None
        for argv in steps:
            rc = proc.run_logged(list(argv), cwd=self.stage, env=build_env(self.plan, self.env), log=self.log,
                                 tracker=self.tracker, reporter=self.reporter, label=f"building {self.plan.wheel.name}")
            if rc != 0:
                return rc
        return 0

    def _failed(self, rc: int, failed_in: str) -> None:
        disk = disk_hint(self.plan, "\n".join(self.tracker.errors), free_gib(self.root))
        if disk:
            raise DiskProblem(f"The build stopped (exit code {rc}) in {failed_in}. {disk}",
                              log_path=str(self.log_path), tail=self.tracker.failure_tail())
        hint = explain(self.plan, self.tracker.errors)
        raise BuildFailed(f"The build failed (exit code {rc}) in {failed_in}. The build dir "
                          f"{self.root} is kept for the next run.{' ' + hint if hint else ''}",
                          log_path=str(self.log_path), tail=self.tracker.failure_tail())

    def _one_wheel(self) -> Path:
        wheels = sorted(self.tmp_wheels.glob("*.whl"))
        if len(wheels) != 1:
            raise BuildFailed(f"The build finished but produced {len(wheels)} wheels.", log_path=str(self.log_path))
        return wheels[0]

    def result(self, final: Path, facts: WheelFacts, *, strategy: str, reason: str, reused: bool,
               seconds: float | None = None) -> BuildResult:
        """The one place a build's result is made: written next to the wheel (manifest, SHA256SUMS), and a wheel
        this build made (not ``reused``) remembered for republishing. ``seconds``: the build's, when already
        taken."""
        tc = self.plan.toolchain
        result = BuildResult(
            wheel=final, size=final.stat().st_size, sha256=facts.sha256,
            seconds=self.seconds() if seconds is None else seconds, timings=self.timings,
            ccache=self.moved if tc.ccache else {}, sccache=self.moved if tc.sccache else {},
            distcc=compilercache.distcc_counts(self.root / "distcc.log") if tc.distcc_hosts and self.compiled else {},
            ninja_no_work=reused or self.tracker.ninja_no_work, log=self.log_path, repaired=facts.repaired,
            targets=facts.targets, bundled=facts.bundled, republished=reused, compile_check=facts.compile_check,
            strategy=strategy, reason=reason, unity_learned=tuple(self.learned),
            time_report=ninjalog.where_time_went(cmake_build_dir(self.plan), self.marks) if self.compiled else {})
        from tritonbuild.wheel.publish import write_outputs

        write_outputs(self.plan, result)
        if not reused:
            republish.remember(self.plan, final, facts.record())
        return result


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
