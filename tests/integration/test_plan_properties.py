"""Property tests of hostile input (#35): generated recipes, environment values, backend lists, flag values,
plugin names and name.conf bytes thrown at the real `tritonbuild plan` (in-process, through ``cli.main.main`` and
its exit codes). Whatever the input: the exit code is 0, 2 or 3, nothing prints a traceback, and nothing outside
the example's own temporary dirs changes (the source tree, the plugins and the real home's cache stay as they were).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import string
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tritonbuild import example
from tritonbuild.cli.main import main
from tritonbuild.settings import recipes
from tritonbuild.settings.model import SPECS

LLVM = "/usr/lib/llvm-22"
# A plan takes ~0.3 s: 60 examples a property, and no shrinking (minutes per failure); a failure shows its input.
# TRITONBUILD_PROPERTY_EXAMPLES=1000 searches deeper (each run draws new inputs: database=None).
EXAMPLES = settings(max_examples=int(os.environ.get("TRITONBUILD_PROPERTY_EXAMPLES", "60")), deadline=None,
                    database=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ENV_NAMES = sorted({n for spec in SPECS for n in spec.env_names})
TOOLS = ("git", "gcc", "g++", "cc", "c++", "ccache", "ld.lld", "ld.gold", "clang", "clang++", "cmake", "ninja")


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and mtime (links not followed)."""
    if not root.exists():
        return {}
    return {str(p): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in [root, *root.rglob("*")]}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """An example tree and a plugin written once, and a bin dir of the tools a plan looks for (and nothing else:
    a generated name is never a real command on PATH)."""
    base = tmp_path_factory.mktemp("props")
    tree = example.write_tree(base / "triton")
    plugin = example.write_plugin(base / "plugin", "hostile_plugin")
    bin_dir = base / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    yield {"tree": tree, "plugin": plugin, "bin": bin_dir, "base": base}


@contextlib.contextmanager
def environment(values: dict[str, str], cwd: Path) -> Iterator[None]:
    """os.environ and the working directory as a user's shell would give them, restored afterwards."""
    saved, here = dict(os.environ), Path.cwd()
    try:  # setting up inside the try: a value os.environ refuses must not leave the process's environment cleared
        os.environ.clear()
        os.environ.update(values)
        os.chdir(cwd)
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)


def plan(world: dict[str, Path], args: list[str], env: dict[str, str] | None = None,
         setup: Any = None) -> tuple[int, str]:
    """Run `tritonbuild plan` in-process on the example tree with fresh HOME, cache and cwd dirs; check the
    properties; return the exit code and the output."""
    scratch = Path(tempfile.mkdtemp(prefix="tb-prop-", dir=world["base"]))
    home, cwd = scratch / "home", scratch / "cwd"
    home.mkdir()
    cwd.mkdir()
    if setup is not None:
        args = setup(scratch, args)
    watched = [world["tree"], world["plugin"], Path.home() / ".cache" / "tritonbuild", Path(recipes.recipes_dir())]
    before = [snapshot(p) for p in watched]
    base_env = {"HOME": str(home), "PATH": str(world["bin"]), "NO_COLOR": "1", "COLUMNS": "200", "LANG": "C.UTF-8"}
    argv = ["plan", "--source", str(world["tree"]), "--llvm", LLVM, "--offline", "--cache-dir", str(scratch / "c"),
            *args]
    out, err = io.StringIO(), io.StringIO()
    code: int | str | None = 0
    with environment({**base_env, **(env or {})}, cwd), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code
    text = out.getvalue() + err.getvalue()
    shutil.rmtree(scratch, ignore_errors=True)
    shown = f"argv={argv!r} env={env!r}\n{text[-3000:]}"
    assert code in (0, 2, 3), shown
    assert "Traceback" not in text, shown
    assert [snapshot(p) for p in watched] == before, "plan changed files outside its temporary dirs: " + shown
    return int(code or 0), text


# Text as users and hostile inputs give it: shell metacharacters, separators, non-ASCII, paths, huge strings.
SPECIAL = st.sampled_from(["", " ", ";", ",", "all", "nvidia", "amd;cpu", "nvidia amd", "$(id)", "`id`", "a|b",
                           "../..", "/", "~", "-x", "--help", "[/red]", "\\", "'", '"', "*", "%s", "é", "三",
                           "\U0001f600", "x" * 5000, "/usr/lib/llvm-22", "git+file:///nowhere", "http://[::1"])
TEXT = st.one_of(SPECIAL, st.text(max_size=40), st.text(alphabet=string.printable, max_size=80),
                 st.builds(lambda a, b: a + b, SPECIAL, st.text(max_size=10)))


def no_nul(text: str) -> str:
    """A C string (an environment value, an argv word) cannot hold NUL: no shell can hand one to tritonbuild."""
    return text.replace("\0", "")


def env_text() -> st.SearchStrategy[str]:
    """Environment values as os.environ gives them: any bytes but NUL, undecodable ones as surrogates."""
    raw = st.binary(max_size=60)
    return st.one_of(TEXT, raw.map(os.fsdecode), st.integers(-10**30, 10**30).map(str),
                     st.sampled_from(["1", "0", "ON", "yes", "0.5", "-1", "nan", "1e999", "x" * 200_000])).map(no_nul)


@settings(EXAMPLES)
@given(env=st.dictionaries(st.sampled_from(ENV_NAMES), env_text(), max_size=6))
def test_any_environment_gives_a_plan_or_one_paragraph(world: dict[str, Path], env: dict[str, str]) -> None:
    plan(world, [], env)


def toml_value(value: Any) -> str:
    """``value`` as TOML (json's strings, numbers and lists are TOML's; tables are inline)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


SCALARS = st.one_of(TEXT, st.integers(-10**25, 10**25), st.floats(allow_nan=False, allow_infinity=False),
                    st.booleans())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                      max_leaves=8)
KEYS = st.one_of(st.sampled_from([*recipes.KEYS, "plugins", "tritonbuild", "ref"]), st.text(max_size=12))
RECIPES = st.dictionaries(KEYS, VALUES, max_size=6).map(
    lambda d: "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in d.items()).encode("utf-8", "surrogatepass"))
RECIPE_BYTES = st.one_of(RECIPES, RECIPES.map(lambda b: b"[tritonbuild]\n" + b), st.binary(max_size=300))


def _with_recipe(content: bytes) -> Any:
    def setup(scratch: Path, args: list[str]) -> list[str]:
        (scratch / "r.toml").write_bytes(content)
        return [*args, "--recipe", str(scratch / "r.toml")]

    return setup


@settings(EXAMPLES)
@given(content=RECIPE_BYTES)
def test_any_recipe_gives_a_plan_or_one_paragraph(world: dict[str, Path], content: bytes) -> None:
    plan(world, [], setup=_with_recipe(content))


FLAGS = st.sampled_from(["--backends", "--wheel-name", "--version-suffix", "--build-type", "--jobs", "--link-jobs",
                         "--unity-build", "--cmake-arg", "--target", "--dep", "--llvm-mirror", "--distcc",
                         "--linker", "--debug-info", "--compiler-cache", "--ccache-remote", "--zip-level",
                         "--repair-exclude", "--unity-exclude", "--version-scheme", "--compile-check-timeout",
                         "--wheelhouse", "--python", "--ref", "--recipe"])


@settings(EXAMPLES)
@given(flags=st.lists(st.tuples(FLAGS, TEXT.map(no_nul)), max_size=4))
def test_any_flag_value_gives_a_plan_or_one_paragraph(world: dict[str, Path], flags: list[tuple[str, str]]) -> None:
    plan(world, [f"{flag}={value}" for flag, value in flags])


@settings(EXAMPLES)
@given(backends=st.lists(st.one_of(TEXT.map(no_nul), st.sampled_from(["nvidia", "amd", "cpu", "spirv", "all"])),
                         max_size=5),
       sep=st.sampled_from([";", ",", " ", "; ", ";;", "\t"]))
def test_any_backend_list_gives_a_plan_or_one_paragraph(world: dict[str, Path], backends: list[str],
                                                        sep: str) -> None:
    code, text = plan(world, ["--backends", sep.join(backends)])
    flat = " ".join(text.split())  # rich wraps lines
    unknown = re.search(r"Unknown backend (.+?) in cli", flat)
    if unknown and any(c.isspace() for c in unknown.group(1)):  # a list written with spaces: say what separates
        assert "(a space is not a separator)" in flat, flat
    assert code == 2 or "tritonbuild plan" in text


def _with_plugin(world: dict[str, Path], dirname: str, conf: bytes | None) -> Any:
    def setup(scratch: Path, args: list[str]) -> list[str]:
        dest = scratch / "plugins" / dirname
        shutil.copytree(world["plugin"], dest, symlinks=True)
        if conf is not None:
            (dest / "backend" / "name.conf").write_bytes(conf)
        return [*args, "--plugin-dir", str(dest)]

    return setup


PLUGIN_DIRS = st.text(alphabet=st.characters(blacklist_characters="/\0", blacklist_categories=["Cs"]), min_size=1,
                      max_size=40).filter(lambda s: s not in (".", ".."))
NAME_CONF = st.one_of(st.none(), st.binary(max_size=200), TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")),
                      st.just(b"x" * 5000), st.just(b"triton_shared\n"), st.just(b"../../evil"))


@settings(EXAMPLES)
@given(dirname=PLUGIN_DIRS, conf=NAME_CONF)
def test_any_plugin_name_gives_a_plan_or_one_paragraph(world: dict[str, Path], dirname: str,
                                                       conf: bytes | None) -> None:
    plan(world, [], setup=_with_plugin(world, dirname, conf))
