"""Trust at the boundary (#35): each finding of the hostile tester's report, run through the real CLI. A bad
input is refused by `plan` (exit 2, one paragraph, no traceback) before any work, whatever its origin."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers import one_of
from tests.integration.conftest import flat, run_cli

LLVM = "/usr/lib/llvm-22"


@pytest.fixture
def refused(tree, tmp_path: Path):
    """Run `plan` on an example tree with extra args/env; assert exit 2 with one paragraph; return stderr."""
    root = tree()

    def run(*args: str, env: dict[str, str] | None = None, fragment: str = "") -> str:
        proc = run_cli("plan", "--source", str(root), "--llvm", LLVM, "--offline", "--cache-dir",
                       str(tmp_path / "cache"), *args, cwd=tmp_path, env=env, check=False)
        assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stderr.startswith("error: "), proc.stderr
        assert proc.stdout == ""
        text = flat(proc.stderr)
        assert fragment in text, text
        return text

    return run


@pytest.mark.parametrize("name", ["../../x", "a b"])
def test_a_wheel_name_that_no_wheel_can_carry_is_refused_by_plan(refused, name: str) -> None:
    refused("--wheel-name", name, fragment=f"wheel_name = '{name}' (cli --wheel-name) is not a wheel distribution")
    refused(env={"TRITON_WHEEL_NAME": name}, fragment="(env TRITON_WHEEL_NAME) is not a wheel distribution name")


def test_a_version_suffix_that_makes_no_pep_440_version_is_refused_by_plan(refused) -> None:
    refused("--version-suffix", "-x", fragment="version suffix '-x' (cli --version-suffix) makes the version "
                                               "'3.6.0-x', which is not a PEP 440 version")
    refused(env={"TRITON_WHEEL_VERSION_SUFFIX": "+a b"}, fragment="(env TRITON_WHEEL_VERSION_SUFFIX)")


def test_a_cache_dir_that_is_a_file_or_unwritable_is_refused_by_plan(refused, tree, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    refused("--cache-dir", str(tmp_path / "afile"), fragment="exists and is not one")
    refused("--cache-dir", str(tmp_path / "afile" / "below"), fragment="exists and is not one")
    # /proc/1 takes no new dirs, for root too (a chmod'ed dir does not stop root): the host's problem, exit 3
    proc = run_cli("plan", "--source", str(tree()), "--llvm", LLVM, "--offline", "--cache-dir",
                   "/proc/1/tritonbuild-cache", cwd=tmp_path, check=False)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr and proc.stderr.startswith("error: "), proc
    assert "cannot be created: /proc/1 is not writable" in flat(proc.stderr)
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'cache_dir = "{tmp_path / "afile"}"\n')
    # the fixture's own --cache-dir would win over the recipe's; an empty one to undo it is refused (#44)
    proc = run_cli("plan", "--source", str(tree()), "--llvm", LLVM, "--offline", "--recipe", str(recipe),
                   cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "r.toml's cache_dir) cannot be a directory" in flat(proc.stderr), proc
    assert (tmp_path / "afile").read_text() == "x"


def test_unknown_build_types_and_huge_numbers_are_refused_by_plan(refused, tmp_path: Path) -> None:
    refused("--build-type", "Banana", fragment="--cmake-arg -DCMAKE_BUILD_TYPE=NAME")
    recipe = tmp_path / "jobs.toml"
    recipe.write_text("jobs = 100000000000000000000000\n")
    refused("--recipe", str(recipe), fragment=f"jobs = 100000000000000000000000 (recipe {recipe}) must be a whole "
                                              "number 1-4096")
    refused("-j", "5000", fragment="jobs = 5000 (cli -j/--jobs) must be a whole number 1-4096")


@pytest.mark.parametrize(("content", "fragment"), [
    (b"tritonbuild = 5\n", "tritonbuild must be a table"),
    (b"\xff\xfe jobs = 2\n", "is not UTF-8 text"),
    (b"jobs = = 2\n", "is not valid TOML"),
    (b"wheel_name = { a = { b = 1 } }\n", "wheel_name must be a string"),
    (b"plugins = [{ path = 5 }]\n", "plugin entry"),
    (b"description = \"" + b"x" * (2 << 20) + b"\"\n", "is over 1 MiB"),
    (b"a = " + b"[" * 100_000 + b"\n", "nests arrays or tables too deeply"),
    (b"cmake_args = [\"-DX=1\\u0000\"]\n", "control character"),
])
def test_a_hostile_recipe_is_one_paragraph(refused, tmp_path: Path, content: bytes, fragment: str) -> None:
    recipe = tmp_path / "hostile.toml"
    recipe.write_bytes(content)
    assert str(recipe) in refused("--recipe", str(recipe), fragment=fragment)


def test_http_settings_are_read_through_the_model(refused) -> None:
    refused(env={"TRITONBUILD_HTTP_RETRIES": "abc"}, fragment="TRITONBUILD_HTTP_RETRIES='abc' is not a whole number")
    refused(env={"TRITONBUILD_HTTP_TIMEOUT": "0"}, fragment="http_timeout = 0.0 (env TRITONBUILD_HTTP_TIMEOUT)")


def test_download_limits_are_settings_the_plan_carries_and_refuses_when_bad(refused, tree, tmp_path: Path) -> None:
    """#44: the deadline, minimum rate and size cap of downloads travel in the plan (the LLVM download and the NVIDIA
    wheels read them from there); a bad value is refused before any work, ASCII digits only."""

    env = {"TRITONBUILD_HTTP_DEADLINE": "90", "TRITONBUILD_HTTP_MIN_RATE": "0", "TRITONBUILD_HTTP_MAX_BYTES": "4096"}
    proc = run_cli("plan", "--json", "--source", str(tree()), "--llvm", LLVM, "--offline", "--cache-dir",
                   str(tmp_path / "cache"), cwd=tmp_path, env=env, check=True)
    settings = one_of(proc.stdout, "plans")["settings"]
    assert settings["http_deadline"] == {"value": 90.0, "origin": "env TRITONBUILD_HTTP_DEADLINE"}
    assert settings["http_min_rate"] == {"value": 0, "origin": "env TRITONBUILD_HTTP_MIN_RATE"}
    assert settings["http_max_bytes"] == {"value": 4096, "origin": "env TRITONBUILD_HTTP_MAX_BYTES"}
    refused(env={"TRITONBUILD_HTTP_DEADLINE": "0"}, fragment="http_deadline = 0.0 (env TRITONBUILD_HTTP_DEADLINE)")
    refused(env={"TRITONBUILD_HTTP_MAX_BYTES": "\uff14"},
            fragment="TRITONBUILD_HTTP_MAX_BYTES='\uff14' is not a whole number")


def test_a_python_given_with_a_slash_is_a_path_from_cwd_never_a_path_lookup(refused, tmp_path: Path) -> None:
    """./mypython is the file in the working directory even when PATH has a real interpreter of that name."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mypython").symlink_to(sys.executable)
    (tmp_path / "mypython").write_text("#!/bin/sh\necho not a python\n")
    (tmp_path / "mypython").chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    text = refused("--python", "./mypython", env=env, fragment=f"The Python {tmp_path / 'mypython'} (--python) "
                                                             "does not run")
    assert "not a python" in text
    refused("--python", "./missing", env=env, fragment=f"is not an executable file ({tmp_path / 'missing'})")


def test_undecodable_bytes_in_an_environment_variable_are_one_paragraph(refused) -> None:
    # subprocess encodes the surrogate back to the byte 0xff, as a non-UTF-8 environment would hold it
    refused(env={"TRITON_CODEGEN_BACKENDS": "nvidia\udcff"},
            fragment="backends = 'nvidia\\udcff' (env TRITON_CODEGEN_BACKENDS) holds bytes that are not UTF-8")


def test_a_space_separated_backend_list_names_the_separators(refused) -> None:
    text = refused("--backends", "nvidia amd", fragment="separated by ';' or ',' (a space is not a separator)")
    assert "'nvidia;amd'" in text and "Did you mean" not in text


def test_rich_markup_in_a_value_is_printed_as_text(refused) -> None:
    refused("--backends", "[/red]", fragment="Unknown backend '[/red]'")


def test_a_backend_with_a_syntax_error_will_fail(tree, tmp_path: Path) -> None:
    root = tree()
    compiler = root / "third_party" / "amd" / "backend" / "compiler.py"
    line = len(compiler.read_text().splitlines()) + 1
    compiler.write_text(compiler.read_text() + "def broken(:\n")
    proc = run_cli("backends", "--check", "--source", str(root), "--cache-dir", str(tmp_path / "c"), cwd=tmp_path,
                   check=False)
    text = flat(proc.stdout)
    assert proc.returncode == 1, text + proc.stderr
    assert f"amd ({root / 'third_party' / 'amd'}): will fail" in text
    assert f"{compiler} (line {line}) is not valid Python" in text
    plan = run_cli("plan", "--source", str(root), "--backends", "amd", "--llvm", LLVM, "--cache-dir",
                   str(tmp_path / "c"), cwd=tmp_path, check=False)
    assert plan.returncode == 2 and f"{compiler} (line {line}) is not valid Python" in flat(plan.stderr)


def test_a_wheelhouse_that_is_no_directory_is_refused_by_plan(refused, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    refused("--wheelhouse", "afile", fragment="The wheelhouse afile (cli --wheelhouse) is not a directory")
    refused(env={"TRITONBUILD_WHEELHOUSE": str(tmp_path / "none")}, fragment="(env TRITONBUILD_WHEELHOUSE)")


def test_a_plugin_whose_compiler_has_a_syntax_error_will_fail(tree, plugin, tmp_path: Path) -> None:
    root = tree()
    plug = plugin("triton-shared", "triton_shared")
    compiler = plug / "backend" / "compiler.py"
    compiler.write_text("def broken(:\n" + compiler.read_text())
    proc = run_cli("backends", "--check", "--source", str(root), "--plugin-dir", str(plug), "--cache-dir",
                   str(tmp_path / "c"), cwd=tmp_path, check=False)
    text = flat(proc.stdout)
    assert proc.returncode == 1, text + proc.stderr
    assert f"triton_shared ({plug}): will fail" in text and f"{compiler} (line 1) is not valid Python" in text


def test_an_in_tree_backend_of_a_kind_tritonbuild_does_not_know_is_planned_with_a_warning(tree, tmp_path: Path) -> None:
    """A fork's new backend kind: its LLVM targets come from one table; one it lacks is said, not assumed silently."""
    import shutil

    root = tree()
    shutil.copytree(root / "third_party" / "cpu", root / "third_party" / "metal")
    plan = one_of(run_cli("plan", "--json", "--source", str(root), "--backends", "nvidia;metal", "--llvm", LLVM,
                          "--offline", "--cache-dir", str(tmp_path / "c"), cwd=tmp_path).stdout, "plans")
    assert {b["name"]: b["llvm_targets"] for b in plan["backends"]}["metal"] == []
    [warning] = [w for w in plan["warnings"] if "'metal'" in w]
    assert "add it to BACKEND_LLVM_TARGETS in tritonbuild/resolve/backends.py" in warning
    assert not [w for w in plan["warnings"] if "'nvidia'" in w]
