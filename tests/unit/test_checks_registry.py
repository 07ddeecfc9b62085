"""The registry of wheel checks (#37): a check is one module of tritonbuild/wheel/checks and one registry line;
the build and ``verify`` select from that one list, and README says which run where."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

from tritonbuild.errors import BuildFailed
from tritonbuild.wheel import acceptance
from tritonbuild.wheel import checks as package
from tritonbuild.wheel.checks import registry
from tritonbuild.wheel.checks.base import Finding

ROOT = Path(__file__).resolve().parents[2]
NOT_CHECKS = {"base", "registry"}


def check_classes() -> dict[str, list[type]]:
    """Each module of the checks package (but base and registry) and the classes it defines that have the
    ``Check`` protocol's members."""
    out = {}
    for mod in pkgutil.iter_modules(package.__path__):
        if mod.name in NOT_CHECKS:
            continue
        module = importlib.import_module(f"{package.__name__}.{mod.name}")
        out[mod.name] = [c for _, c in inspect.getmembers(module, inspect.isclass)
                         if c.__module__ == module.__name__ and all(hasattr(c, a) for a in ("name", "applies", "run"))]
    return out


def test_every_check_module_defines_checks_and_every_check_is_registered() -> None:
    registered = {type(check) for check, _ in registry.REGISTRY}
    found = check_classes()
    assert set(found) >= {"record", "backends", "elf", "importing", "compile", "provenance", "reproducible"}
    for name, classes in found.items():
        assert classes, f"tritonbuild/wheel/checks/{name}.py defines no check"
        missing = [c.__name__ for c in classes if c not in registered]
        assert not missing, f"{name}.py's {missing} are in no line of the registry"
    assert len(registered) == len(registry.REGISTRY), "a check registered twice"
    names = [check.name for check, _ in registry.REGISTRY]
    assert len(set(names)) == len(names), names


def test_the_build_and_verify_sets() -> None:
    assert [c.name for c in registry.checks("build")] == ["RECORD", "libraries", "import", "compile"]
    assert [c.name for c in registry.checks("verify")] == ["RECORD", "provenance", "provenance-file", "backends",
                                                          "reproducible", "patches", "sbom", "libraries", "platform",
                                                          "import", "compile"]


def test_readme_names_the_checks_that_run_at_build_time_and_in_verify() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    found = re.search(r"at build time ((?:`[\w-]+`(?:, )?)+); in `verify` ((?:`[\w-]+`(?:, )?)+)", readme)
    assert found, "README lacks the sentence naming the wheel checks at build time and in verify"
    for group, where, said in ((1, "build", "at build time"), (2, "verify", "in verify")):
        assert re.findall(r"`([\w-]+)`", found.group(group)) == [c.name for c in registry.checks(where)], \
            f"README's sentence naming the checks {said} differs from wheel/checks/registry.py"


def test_a_failed_finding_becomes_the_build_error_in_the_check_words_or_the_general_ones() -> None:
    wheel = Path("triton-3.6.0-cp312-cp312-linux_x86_64.whl")
    acceptance.refuse(wheel, [Finding("RECORD", "ok", "3 entries match"), Finding("x", "skip", "why")])
    with pytest.raises(BuildFailed) as err:
        acceptance.refuse(wheel, [Finding("RECORD", "ok", "fine"),
                                  Finding("libraries", "fail", "needed from outside: a.so needs b.so"),
                                  Finding("import", "fail", "later", message="not this one")])
    assert str(err.value) == (f"The built wheel {wheel.name} fails the libraries check: needed from outside: a.so "
                              "needs b.so. The wheel was not written to the output dir.")
    assert err.value.exit_code == 1
    with pytest.raises(BuildFailed) as err:
        acceptance.refuse(wheel, [Finding("import", "fail", "short", message="The whole paragraph.", tail="a\nb")])
    assert str(err.value) == "The whole paragraph." and err.value.tail == "a\nb"


def test_every_check_that_runs_no_code_comes_before_every_check_that_runs_wheel_code() -> None:
    """A quick rebuild runs those that run code beside packaging and the rest on the wheel after it
    (``acceptance.code_checks``): ``registry.merged`` appends the first to the second, the registry's order only
    while this holds."""
    for where in ("build", "verify"):
        found = registry.checks(where)  # type: ignore[arg-type]
        last_reader = max(i for i, c in enumerate(found) if not registry.runs_wheel_code(c))
        first_code = min(i for i, c in enumerate(found) if registry.runs_wheel_code(c))
        assert last_reader < first_code, where


def test_findings_of_checks_run_apart_are_cut_after_the_first_failure() -> None:
    """As one after another would give them: a RECORD or libraries failure comes first, so the build names it."""
    ok, bad = Finding("RECORD", "ok", "fine"), Finding("libraries", "fail", "needs b.so")
    imp, comp = Finding("import", "ok", "imports"), Finding("compile", "fail", "1 failed")
    assert registry.merged([ok, bad], [imp, comp], stop_at_fail=True) == [ok, bad]
    assert registry.merged([ok], [imp, comp], stop_at_fail=True) == [ok, imp, comp]
    assert registry.merged([ok, bad], [imp, comp], stop_at_fail=False) == [ok, bad, imp, comp]
    assert registry.merged([ok], [imp], stop_at_fail=True) == [ok, imp]
