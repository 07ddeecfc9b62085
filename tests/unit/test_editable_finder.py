"""The finder ``develop`` writes into site-packages (#45, review F-3): while the checkout is there ``import triton``
gives its ``python/triton``; once the checkout is moved or removed, ``import triton`` fails with an ImportError that
names the checkout and says to run ``tritonbuild develop`` again, instead of an empty namespace-like module."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import plan_for
from tritonbuild.execute import editable


@pytest.fixture
def no_triton_imported(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The test imports ``triton`` through the generated finder: keep sys.modules and sys.meta_path as they were."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    before = {k: v for k, v in sys.modules.items() if k == "triton" or k.startswith("triton.")}
    for name in before:
        monkeypatch.delitem(sys.modules, name)
    yield
    for name in [k for k in sys.modules if k == "triton" or k.startswith("triton.")]:
        del sys.modules[name]
    sys.modules.update(before)


def _finder(source: str) -> types.ModuleType:
    module = types.ModuleType(editable.FINDER_MODULE)
    exec(compile(source, "<finder>", "exec"), module.__dict__)  # the text develop writes, run as Python would
    return module


def test_import_triton_after_the_checkout_moved_names_it_and_the_way_out(tree, tmp_path: Path,
                                                                         no_triton_imported: None) -> None:
    root = tree()
    plan = plan_for(root)
    lib = tmp_path / "build" / "dev" / "tritonbuild-stage" / "triton" / "_C"
    lib.mkdir(parents=True)
    finder = _finder(editable.finder_module(plan, str(lib)))
    finder.install()
    spec = importlib.util.find_spec("triton")  # importing it would load the example's libtriton: not built here
    assert spec is not None and spec.origin == str(root / "python" / "triton" / "__init__.py")

    root.rename(tmp_path / "moved")
    with pytest.raises(ImportError) as raised:
        importlib.import_module("triton")
    said = str(raised.value)
    assert str(root) in said and str(root / "python" / "triton") in said
    assert "tritonbuild develop" in said and "moved or removed" in said
    assert "triton" not in sys.modules


def test_a_missing_build_dir_fails_triton_c_alone(tree, tmp_path: Path, no_triton_imported: None) -> None:
    root = tree()
    finder = _finder(editable.finder_module(plan_for(root), str(tmp_path / "gone" / "_C")))
    assert finder.TritonBuildFinder.find_spec("triton").origin == str(root / "python" / "triton" / "__init__.py")
    assert finder.TritonBuildFinder.find_spec("not_triton") is None
    with pytest.raises(ImportError, match=r"gone._C, which does not exist.*Run `tritonbuild develop` again"):
        finder.TritonBuildFinder.find_spec("triton._C")
