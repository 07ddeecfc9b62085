"""Why the prebuilt LLVM download was not taken is a code (``DownloadBlock``) carried with its words, and the way
to the pinned LLVM is chosen by that code: rewording a reason keeps its remedy, and words that merely look like
another reason's do not borrow its remedy."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import facts, plan_for
from tritonbuild import example
from tritonbuild.resolve.llvm import PINNED_HINTS, Blocker, DownloadBlock, pinned_hint, resolve_llvm
from tritonbuild.settings.model import resolve_settings

BUILD = "`tritonbuild llvm build --source"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return example.write_tree(tmp_path / "src" / "triton")


def _blocker(plan) -> Blocker:  # type: ignore[no-untyped-def]
    why = dict(plan.llvm.rejected)["prebuilt download"]
    assert isinstance(why, Blocker)
    return why


def _hint(plan, code: DownloadBlock, words: str) -> str:  # type: ignore[no-untyped-def]
    llvm = replace(plan.llvm, rejected=(("prebuilt download", Blocker(code, words)),))
    return pinned_hint(llvm, plan.source, plan.backend_names)


def test_offline_is_coded_and_its_remedy_is_a_fetch_on_a_connected_machine(tree: Path) -> None:
    plan = plan_for(tree, {"offline": True})
    why = _blocker(plan)
    assert why.code is DownloadBlock.OFFLINE and why == "offline (TRITON_OFFLINE_BUILD/--offline)"
    hint = pinned_hint(plan.llvm, plan.source, plan.backend_names)
    assert hint.startswith("For the pinned LLVM: `tritonbuild llvm fetch` on a connected machine, or " + BUILD)


def test_targets_the_prebuilt_lacks_are_coded(tree: Path) -> None:
    plan = plan_for(tree)
    settings = resolve_settings({}, {})
    llvm = resolve_llvm(settings, facts(tree), ("X86", "NVPTX", "SPIRV"), {})
    why = dict(llvm.rejected)["prebuilt download"]
    assert isinstance(why, Blocker) and why.code is DownloadBlock.TARGETS and why.endswith("also needs SPIRV")
    assert pinned_hint(llvm, plan.source, plan.backend_names).startswith(
        "No prebuilt LLVM has all these targets; for the pinned LLVM, " + BUILD)


def test_the_remedy_follows_the_code_when_the_words_change(tree: Path) -> None:
    plan = plan_for(tree)
    assert _hint(plan, DownloadBlock.OFFLINE, "no network here").startswith(
        "For the pinned LLVM: `tritonbuild llvm fetch` on a connected machine")
    assert _hint(plan, DownloadBlock.UNPINNED, "the archive's digest is not pinned").startswith(
        "For the pinned LLVM: add --allow-unpinned")
    assert _hint(plan, DownloadBlock.TARGETS, "needs SPIRV").startswith("No prebuilt LLVM has all these targets")


def test_words_of_another_reason_do_not_choose_its_remedy(tree: Path) -> None:
    plan = plan_for(tree)
    hint = _hint(plan, DownloadBlock.NO_PLATFORM, "offline? --allow-unpinned? only the host, NVPTX and AMDGPU")
    assert hint.startswith("For the pinned LLVM, " + BUILD)
    llvm = replace(plan.llvm, rejected=(("prebuilt download", "offline (TRITON_OFFLINE_BUILD/--offline)"),))
    assert pinned_hint(llvm, plan.source, plan.backend_names).startswith("For the pinned LLVM, " + BUILD)


def test_a_blocker_is_its_words_in_the_plan_and_keeps_its_code_through_copies(tree: Path) -> None:
    plan = plan_for(tree, {"offline": True})
    assert ["prebuilt download", "offline (TRITON_OFFLINE_BUILD/--offline)"] in json.loads(plan.to_json())["llvm"][
        "rejected"]
    why = _blocker(plan)
    assert copy.deepcopy(why).code is DownloadBlock.OFFLINE and copy.copy(why).code is DownloadBlock.OFFLINE
    assert set(PINNED_HINTS) <= set(DownloadBlock)
