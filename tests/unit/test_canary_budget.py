"""The canary's time budget (#36): the setting from flag, environment and recipe with one range; the plan's budget
(build's default, none for check-llvm unless given); what the summary and JSON say of a budget that stopped the
compiles (the compiles themselves: tests/integration/test_canary_budget.py)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tritonbuild.cli.options import setting_option
from tritonbuild.errors import UserError
from tritonbuild.execute import canary as ex
from tritonbuild.resolve import canary as c
from tritonbuild.resolve.canary import Cause, Diagnostic
from tritonbuild.settings import recipes
from tritonbuild.settings.model import SPEC_BY_NAME, resolve_settings

RECIPE = Path("/nowhere/r.toml")  # recipes.parse reads nothing: the path only names the recipe in messages
SPEC = SPEC_BY_NAME["canary_budget"]
ENV = "TRITONBUILD_CANARY_BUDGET"


def _flag(text: str) -> Any:
    """``--canary-budget text`` as click parses it with the setting's own option: the value, or the exception."""
    seen: dict[str, Any] = {}
    command = click.command()(setting_option(SPEC)(lambda **kw: seen.update(kw)))
    result = CliRunner().invoke(command, ["--canary-budget", text])
    return result.exception if result.exception is not None else seen["canary_budget"]


def _from_all(value: float) -> list[Any]:
    """The value as the flag, the environment and a recipe give it, each resolved (or its refusal)."""
    out: list[Any] = [_flag(repr(value))]
    for resolve in (lambda: resolve_settings({}, {ENV: repr(value)}),
                    lambda: resolve_settings({}, {}, recipes.parse({"canary_budget": value}, RECIPE).settings(),
                                             f"recipe {RECIPE}")):
        try:
            out.append(resolve().canary_budget)
        except UserError as exc:
            out.append(exc)
    return out


def test_the_setting_is_a_number_of_seconds_from_flag_env_and_recipe() -> None:
    assert SPEC.kind == "float" and SPEC.flag == "--canary-budget" and SPEC.env_names == (ENV,) and SPEC.recipe
    default = resolve_settings({}, {})
    assert (default.canary_budget, default.origin("canary_budget")) == (120.0, "default")
    assert _flag("0.5") == 0.5 and _flag("0") == 0.0
    assert resolve_settings({}, {ENV: "30"}).canary_budget == 30.0
    assert resolve_settings({}, {ENV: "30"}).origin("canary_budget") == f"env {ENV}"
    parsed = recipes.parse({"canary_budget": 45}, RECIPE).settings()
    assert resolve_settings({}, {}, parsed, "recipe r").canary_budget == 45
    # the precedence chain: default < recipe < env < CLI
    assert resolve_settings({"canary_budget": 1.5}, {ENV: "30"}, parsed).canary_budget == 1.5
    with pytest.raises(UserError, match="The environment variable TRITONBUILD_CANARY_BUDGET='soon' is not a number"):
        resolve_settings({}, {ENV: "soon"})
    with pytest.raises(UserError, match="has canary_budget = '60', but canary_budget must be a number"):
        recipes.parse({"canary_budget": "60"}, RECIPE)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6).map(float)))
@example(-0.0)  # found by this property after -0.0 became a refusal: pinned
def test_the_range_is_one_for_flag_env_and_recipe(value: float) -> None:
    """0 to 86400 seconds from every origin; anything else (negative, too long, nan, inf) refused the same way."""
    results = _from_all(value)
    if value == 0 and math.copysign(1.0, value) < 0:  # -0.0: a typo, refused from every origin (#44), each its way
        assert all(isinstance(r, UserError | SystemExit) for r in results), results
        return
    if math.isfinite(value) and 0 <= value <= 86400:
        assert results == [value, value, value]
        return
    assert all(isinstance(r, UserError) for r in results), results
    for r, origin in zip(results, ("cli --canary-budget", f"env {ENV}", f"recipe {RECIPE}"), strict=True):
        assert "The setting canary_budget = " in str(r) and f"({origin})" in str(r)
        assert "must be a number of 0-86400" in str(r)


def test_build_has_a_budget_by_default_and_check_llvm_has_none_unless_given() -> None:
    build = c.plan_canary("auto", "default", False, "abc", "22", budget=120.0, budget_origin="default")
    assert build.enabled and build.budget == 120.0
    assert "budget 120 s" in build.describe() and "canary_budget 120 (default)" in build.describe()
    whole = c.plan_canary("auto", "default", False, "abc", "22", budget=120.0, budget_origin="default",
                          whole_cover=True)
    assert whole.budget is None and "no budget (the whole cover)" in whole.describe()
    # check-llvm given a budget (flag, env or recipe) keeps it; 0 is no budget whoever runs it
    given_ = c.plan_canary("on", "cli --canary", True, "abc", "22", budget=30.0, budget_origin=f"env {ENV}",
                           whole_cover=True)
    assert given_.budget == 30.0 and f"canary_budget 30 (env {ENV})" in given_.describe()
    for whole_cover in (False, True):
        none = c.plan_canary("auto", "default", None, "abc", None, budget=0.0, budget_origin="cli --canary-budget",
                             whole_cover=whole_cover)
        assert none.budget is None and "canary_budget 0 (cli --canary-budget)" in none.describe()
    # the pinned LLVM's plan (check-llvm runs the canary anyway) still says its budget
    assert c.plan_canary("auto", "default", True, "a" * 40, "22", budget=9.0, budget_origin="recipe r").budget == 9.0


def _result(**kw: Any) -> ex.CanaryResult:
    base: dict[str, Any] = {
        "build_dir": "/b", "units_total": 264, "chosen": tuple(f"/t/u{i}.cpp" for i in range(54)), "headers": 281,
        "causes": (), "failed": (), "timed_out": (), "seconds": 118.24, "configure_seconds": 40.0,
        "log": "/b/canary.log", "skipped": (), "headers_chosen": 326, "budget": 120.0, "first_error_seconds": None,
        "prepare_seconds": 31.5}
    return ex.CanaryResult(**{**base, **kw})


def test_the_summary_and_json_say_what_the_budget_left_out() -> None:
    skipped = tuple(f"/t/u{i}.cpp" for i in range(23, 54))
    diag = Diagnostic("/t/P.h", 9, "'x' marked 'override', but does not override", "/t/u0.cpp")
    cause = Cause(diag.message, "API change", ("/t/u0.cpp", "/t/u3.cpp"), diag)
    r = _result(skipped=skipped, causes=(cause, cause), failed=("/t/u0.cpp", "/t/u3.cpp"), first_error_seconds=14.1)
    head = ex.summary(r)[0]
    assert head == ("canary compile: 23 of 54 chosen units (264 in all) in 118.2 s (configure 40.0 s before; "
                    "generated headers 31.5 s of it), budget 120 s, covering 281 of 326 headers: 2 unit(s) fail, "
                    "2 cause(s), first error after 14.1 s; 31 unit(s) not compiled within the budget (the full build "
                    "compiles them)")
    data = r.to_json()
    assert data["compiled"] == [f"/t/u{i}.cpp" for i in range(23)] and data["skipped"] == list(skipped)
    assert (data["headers_covered"], data["headers_chosen"], data["budget_seconds"]) == (281, 326, 120.0)
    assert data["first_error_seconds"] == 14.1 and data["ok"] is False
    # stopped by the budget with no error: ok (the build goes on), and the line says what was not compiled
    clean = _result(skipped=skipped)
    assert clean.ok and ex.summary(clean) == [
        "canary compile: 23 of 54 chosen units (264 in all) in 118.2 s (configure 40.0 s before; generated headers "
        "31.5 s of it), budget 120 s, covering 281 of 326 headers: no errors in the units compiled; 31 unit(s) not "
        "compiled within the budget (the full build compiles them)"]
    whole = _result(budget=None, headers=326)
    assert ex.summary(whole)[0].endswith("no budget, covering 326 of 326 headers: everything compiles")
    assert whole.to_json()["first_error_seconds"] is None and whole.to_json()["skipped"] == []
