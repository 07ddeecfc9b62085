"""--dep on disk: supplied checkouts are scanned for their own downloads (runs git, so not a unit test)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import facts
from tritonbuild.gather import deps
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.settings.model import resolve_settings


def test_a_supplied_dependency_declares_its_own_downloads(tree, tmp_path: Path) -> None:
    # like SPIRV-LLVM-Translator, which fetches SPIRV-Headers at the tag in spirv-headers-tag.conf
    root = tree()
    abi = tmp_path / "abi"
    abi.mkdir()
    (abi / "inner-tag.conf").write_text("abc123\n")
    (abi / "CMakeLists.txt").write_text("file(READ inner-tag.conf INNER_TAG)\nFetchContent_Declare(inner\n"
                                        "  GIT_REPOSITORY https://example.invalid/inner.git GIT_TAG ${INNER_TAG})\n")
    decls, given = deps.gather(root, [], [f"spirv-kernel-abi={abi}", f"inner={tmp_path}"], tmp_path, tmp_path)
    assert ("inner", "deps/spirv-kernel-abi/CMakeLists.txt:2", "git", "https://example.invalid/inner.git",
            "abc123") in decls
    assert set(given) == {"spirv-kernel-abi", "inner"}
    f = facts(root)
    f = type(f)(**{**f.__dict__, "fetch_decls": tuple(decls), "deps_supplied": given})
    p = resolve_plan(resolve_settings({"backends": "spirv", "offline": True}, {}), f)
    assert p.cmake.define("TRITONBUILD_DEPS") == f"spirv-kernel-abi={abi};inner={tmp_path}"
