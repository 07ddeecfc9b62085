"""The search of ``llvm compat`` (#36): the newest commit first, then the oldest, then halving the interval; the
boundary of any monotone history in at most ceil(log2(n)) + 2 steps, and a real boundary of any other; between two
failing ends, a window of passing commits found by probing when it is wide enough."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.reporter import silent
from tritonbuild.resolve.bisect import Answer, kept, most_steps, next_step, probes, search, window_found


def _run(results: list[bool]) -> tuple[Answer, tuple[int, ...]]:
    return search(len(results), lambda i: results[i])


def test_the_newest_passing_is_the_answer_in_one_step() -> None:
    assert _run([False, True, True]) == (Answer(2, None), (2,))


def test_a_pass_between_failing_ends_is_found_by_probing() -> None:
    answer, order = _run([False, True, False])
    assert answer == Answer(1, 2) and order == (2, 0, 1)
    # January 2026 upstream against LLVM 22.1.8, in short: 126 commits, the first 79 fail (the matmul hang), the
    # newest fails (an LLVM bump past 22.1): the window 79..124 is found and bisected to its newest commit
    answer, order = _run([False] * 79 + [True] * 46 + [False])
    assert answer == Answer(124, 125) and len(order) <= most_steps(126)
    assert order[:4] == (125, 0, 62, 93)  # the middle, then the middle of the newest half


def test_failing_ends_with_nothing_between_give_no_answer_after_the_probes() -> None:
    answer, order = _run([False] * 40)
    assert answer == Answer(None, None) and not answer.found
    assert order[:2] == (39, 0) and len(order) == 2 + probes(40) == most_steps(40) - math.ceil(math.log2(40))
    assert _run([False, False]) == (Answer(None, None), (1, 0))


def test_bisects_between_the_oldest_pass_and_the_newest_fail() -> None:
    # 7 commits, the first 4 pass: newest (6) fails, oldest (0) passes, then 3, 4 (halving 0..6, then 3..6 ...)
    answer, order = _run([True] * 4 + [False] * 3)
    assert answer == Answer(3, 4) and answer.found
    assert order[:2] == (6, 0) and set(order) <= set(range(7)) and len(order) == len(set(order))


def test_one_commit() -> None:
    assert _run([True]) == (Answer(0, None), (0,))
    assert _run([False]) == (Answer(None, None), (0,))
    assert _run([True, False]) == (Answer(0, 1), (1, 0))


def test_next_step_follows_what_is_known() -> None:
    assert next_step(10, {}) == 9
    assert next_step(10, {9: False}) == 0
    assert next_step(10, {9: False, 0: True}) == 4
    assert next_step(10, {9: False, 0: True, 4: True}) == 6
    assert next_step(10, {9: False, 0: True, 4: True, 6: False, 5: True}) == Answer(5, 6)
    with pytest.raises(ValueError):
        next_step(0, {})


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1, max_value=300), st.data(), st.booleans())
def test_any_monotone_history_gives_its_boundary_in_few_steps(n: int, data: st.DataObject, old_pass: bool) -> None:
    cut = data.draw(st.integers(min_value=0, max_value=n), label="first index on the other side")
    results = [(i < cut) == old_pass for i in range(n)]  # old pass and new fail, or the other way round
    answer, order = _run(results)
    assert len(order) <= most_steps(n) and len(set(order)) == len(order)
    if results[-1]:  # the newest builds: it is the answer
        assert answer == Answer(n - 1, None) and order == (n - 1,)
    elif not results[0]:
        assert answer == Answer(None, None)
    else:
        assert len(order) <= math.ceil(math.log2(n)) + 2
        assert answer == Answer(cut - 1, cut)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=200))
def test_any_history_with_a_passing_oldest_and_failing_newest_gives_a_real_boundary(results: list[bool]) -> None:
    results = [True, *results[1:-1], False]
    answer, order = _run(results)
    assert answer.newest_passing is not None and answer.first_failing == answer.newest_passing + 1
    assert results[answer.newest_passing] and not results[answer.first_failing]
    assert {answer.newest_passing, answer.first_failing} <= set(order)
    assert len(order) <= math.ceil(math.log2(len(results))) + 2


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=3, max_value=400), st.data())
def test_a_window_between_failing_ends_at_least_window_found_wide_is_found(n: int, data: st.DataObject) -> None:
    width = data.draw(st.integers(min_value=min(window_found(n), n - 2), max_value=n - 2), label="window width")
    start = data.draw(st.integers(min_value=1, max_value=n - 1 - width), label="first passing index")
    results = [start <= i < start + width for i in range(n)]
    answer, order = _run(results)
    assert answer == Answer(start + width - 1, start + width)
    assert len(order) <= most_steps(n) and len(set(order)) == len(order)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=3, max_size=200))
def test_any_history_gives_a_real_boundary_or_none_within_the_most_steps(results: list[bool]) -> None:
    answer, order = _run(results)
    assert len(order) <= most_steps(len(results)) and len(set(order)) == len(order)
    if answer.found and answer.first_failing is not None:
        assert answer.first_failing == answer.newest_passing + 1
        assert results[answer.newest_passing] and not results[answer.first_failing]
    elif answer.found:
        assert results[-1]
    else:
        assert not results[0] and not results[-1] and not any(results[i] for i in order)


def test_kept_is_the_boundary_so_far() -> None:
    assert kept({}) == set()
    assert kept({9: True}) == {9}  # the newest builds: only it
    assert kept({9: False}) == {9}
    assert kept({9: False, 0: False}) == {0, 9}  # none found: the oldest and the newest, whose causes are shown
    assert kept({9: False, 0: True}) == {0, 9}
    assert kept({9: False, 0: True, 4: True, 6: False}) == {4, 6}
    assert kept({9: False, 0: True, 4: True, 6: False, 5: True}) == {5, 6}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=100))
def test_kept_ends_as_the_answer(results: list[bool]) -> None:
    known: dict[int, bool] = {}
    answer, order = search(len(results), lambda i: known.setdefault(i, results[i]))
    ends = {answer.newest_passing, answer.first_failing} - {None} if answer.found else {0, len(results) - 1}
    assert kept(known) == ends and kept(known) <= set(order)


def test_llvm_compat_runs_the_canary_as_the_resolved_setting_says_not_as_the_flag_was_typed(tmp_path: Path) -> None:
    """``llvm compat`` with the canary off by its variable or a recipe tests no commit with the canary compile (it
    read the flag as typed, None unless given, and compiled minutes per commit); ``--no-canary`` always wins."""
    from tritonbuild.execute.compat import canary_runs
    from tritonbuild.gather.request import Request, settings_of

    recipe = tmp_path / "r.toml"
    recipe.write_text('canary = "off"\n')
    env = {"HOME": str(tmp_path)}
    for request in (Request({}, {**env, "TRITONBUILD_CANARY": "off"}, tmp_path, warn=silent),
                    Request({}, env, tmp_path, recipe=str(recipe), warn=silent),
                    Request({"canary": "off"}, env, tmp_path, warn=silent)):
        assert canary_runs(settings_of(request)[0], no_canary=False) is False, request
    on = Request({}, env, tmp_path, warn=silent)
    assert canary_runs(settings_of(on)[0], no_canary=False) is True
    assert canary_runs(settings_of(on)[0], no_canary=True) is False
