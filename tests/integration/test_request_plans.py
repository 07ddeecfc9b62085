"""Plans of a typed Request (#37), on the real example tree and Debian's LLVM: the same request plans the same
twice; its settings come from the request's environment (snapshotted by the CLI), not the process's; a recipe's
interpreters and out dir reach the plans; ``run_builds`` refuses an output dir before anything is built."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers import PlainReporter
from tests.integration.conftest import LLVM, cuda_stub
from tritonbuild import example
from tritonbuild.errors import UserError
from tritonbuild.gather.request import Request, make_plan, make_plans
from tritonbuild.reporter import silent


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("request")
    example.write_tree(root / "triton")
    return root


def request(base: Path, env: dict[str, str] | None = None, **kw: object) -> Request:
    given = {"source": str(base / "triton"), "llvm": str(LLVM), "cache_dir": str(base / "cache"),
             "python": (sys.executable,), **kw}
    return Request.from_cli(given, {**os.environ, "CUDA_HOME": cuda_stub(), **(env or {})}, base, warn=silent)


def test_the_same_request_plans_the_same_twice(base: Path) -> None:
    req = request(base)
    first, again = make_plans(req), make_plans(req)
    assert len(first) == 1 and first == again
    assert first[0].to_json() == again[0].to_json()
    assert make_plan(req) == first[0]


def test_settings_come_from_the_requests_environment_not_the_process(base: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_JOBS", "1")
    plan = make_plan(request(base, {"MAX_JOBS": "3"}))
    assert plan.settings.jobs == 3 and plan.settings.origin("jobs") == "env MAX_JOBS"
    assert plan.toolchain.jobs == 3
    monkeypatch.delenv("MAX_JOBS")
    assert make_plan(request(base, {"MAX_JOBS": "3"})) == plan  # the process's environment plays no part


def test_a_recipes_interpreters_and_out_dir_reach_the_plans(base: Path, tmp_path: Path) -> None:
    recipe = tmp_path / "mine.toml"
    recipe.write_text(f'pythons = ["{sys.executable}"]\nout_dir = "wheels-here"\n')
    req = Request.from_cli({"source": str(base / "triton"), "llvm": str(LLVM), "cache_dir": str(base / "cache"),
                            "recipe": str(recipe)}, {**os.environ, "CUDA_HOME": cuda_stub()}, tmp_path, warn=silent)
    [plan] = make_plans(req)
    assert plan.python == sys.executable
    assert plan.wheel.out_dir == str((tmp_path / "wheels-here").resolve())


def test_run_builds_refuses_an_output_dir_before_any_build(base: Path, tmp_path: Path) -> None:
    from tritonbuild.execute.runs import run_builds

    (tmp_path / "a-file").write_text("not a dir\n")
    plan = make_plan(request(base, out=str(tmp_path / "a-file")))
    shown: list[object] = []

    class Shows:  # execute.runs.Shows, recording: nothing is shown before the refusal
        def plan(self, plan: object) -> None:
            shown.append(plan)

        def built(self, plan: object, result: object) -> None:
            shown.append(result)

        def wheels(self, built: object) -> None:
            shown.append(built)

    with pytest.raises(UserError, match="is a file, not a directory"):
        run_builds([plan], PlainReporter(), Shows(), env=dict(os.environ))
    assert shown == []
    assert not (Path(plan.cmake.build_dir) / "build.log").exists()
