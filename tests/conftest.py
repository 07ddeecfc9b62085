from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tritonbuild import example


def load_bench(name: str) -> ModuleType:
    """A script of bench/ (no package) loaded as a module, for the tests of its logic."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "bench" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def tree(tmp_path: Path):
    """Factory: write an example Triton tree (and plugins) under tmp_path."""

    def make(name: str = "triton", **kw: object) -> Path:
        return example.write_tree(tmp_path / name, **kw)  # type: ignore[arg-type]

    return make


@pytest.fixture
def plugin(tmp_path: Path):
    def make(dirname: str, name: str | None = None, **kw: object) -> Path:
        return example.write_plugin(tmp_path / dirname, name or dirname.replace("-", "_"), **kw)  # type: ignore[arg-type]

    return make


@pytest.fixture(autouse=True)
def _process_state_kept() -> Iterator[None]:
    """A test that leaves os.environ or the working directory changed fails, and both are put back: one leak
    (a CI run once lost PATH this way) must not fail every later test for reasons that point elsewhere."""
    env, cwd = dict(os.environ), Path.cwd()
    yield
    changed = sorted(k for k in env.keys() | os.environ.keys()
                     if env.get(k) != os.environ.get(k) and k != "PYTEST_CURRENT_TEST")  # pytest's own
    moved = Path.cwd() != cwd
    if changed:
        for name in changed:
            if name in env:
                os.environ[name] = env[name]
            else:
                del os.environ[name]
    if moved:
        os.chdir(cwd)
    assert not changed and not moved, f"the test left the process changed: environment variables {changed}" + (
        ", and the working directory" if moved else "")
