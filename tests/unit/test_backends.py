from __future__ import annotations

import pytest

from tritonbuild.errors import UserError
from tritonbuild.resolve.backends import expand_targets, select_backends, split_list

AVAILABLE = ("nvidia", "amd", "cpu", "spirv")


@pytest.mark.parametrize("text", ["nvidia;amd", "nvidia,amd", " nvidia ; amd ;", "nvidia;;amd"])
def test_separators(text: str) -> None:
    assert select_backends(text, AVAILABLE).names == ("nvidia", "amd")


def test_all_expands_in_source_order() -> None:
    assert select_backends("all", AVAILABLE).names == AVAILABLE


def test_all_with_duplicates_is_silent_but_explicit_duplicates_are_noted() -> None:
    sel = select_backends("spirv;all", AVAILABLE)
    assert sel.names == ("spirv", "nvidia", "amd", "cpu")
    assert sel.notes == ()
    sel = select_backends("amd;amd", AVAILABLE)
    assert sel.names == ("amd",)
    assert "more than once" in sel.notes[0]


def test_unknown_name_lists_valid_and_suggests_closest() -> None:
    with pytest.raises(UserError) as err:
        select_backends("nvidai", AVAILABLE)
    msg = str(err.value)
    assert "Unknown backend 'nvidai'" in msg
    assert "Did you mean 'nvidia'?" in msg
    assert "nvidia, amd, cpu, spirv" in msg


def test_names_are_case_sensitive_with_a_hint() -> None:
    with pytest.raises(UserError, match="Did you mean 'amd'"):
        select_backends("AMD", AVAILABLE)


def test_required_backends_are_added_back_with_a_note() -> None:
    sel = select_backends("cpu", AVAILABLE, required=("nvidia", "amd"))
    assert sel.names == ("cpu", "nvidia", "amd")
    assert "added back nvidia, amd" in sel.notes[0]


def test_strict_refuses_to_add_back() -> None:
    with pytest.raises(UserError, match="--strict"):
        select_backends("cpu", AVAILABLE, required=("nvidia",), strict=True)


def test_empty_list_is_an_error() -> None:
    with pytest.raises(UserError, match="empty"):
        select_backends(" ; ", AVAILABLE)


def test_split_list() -> None:
    assert split_list("a;b,c;") == ["a", "b", "c"]


def test_expand_targets_host_and_dedup() -> None:
    assert expand_targets(("NVPTX", "host", "X86", "Native"), "x86_64") == ("NVPTX", "X86")
    assert expand_targets(("host",), "aarch64") == ("AArch64",)
    with pytest.raises(UserError, match="does not know the LLVM target"):
        expand_targets(("host",), "mips")


def test_every_in_tree_backend_the_example_and_known_trees_ship_has_its_llvm_targets_in_the_one_table() -> None:
    from tritonbuild import example
    from tritonbuild.resolve.backends import BACKEND_LLVM_TARGETS, in_tree_targets

    # the example's backends and the in-tree kinds of real trees (upstream, triton-cpu, Intel's XPU fork)
    for name in [*example.BACKENDS, "intel"]:
        targets, warning = in_tree_targets(name)
        assert warning is None and targets == BACKEND_LLVM_TARGETS[name], name
    targets, warning = in_tree_targets("no-such-kind")  # a made-up kind (the doc's example, metal, may come)
    assert targets == () and warning is not None and "BACKEND_LLVM_TARGETS" in warning
