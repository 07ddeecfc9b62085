"""Hostile review (#44): paths and empty values taken as something nobody meant, or a traceback where README
promises one paragraph and exit 2. In-process through ``main`` (click parses, nothing is built); every file the
tests make is under tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonbuild.cli.main import main
from tritonbuild.settings import cacheroot


def cli_exit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``tritonbuild ARGS`` run in this process: exit code, out, err."""
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def one_paragraph(code: int, err: str) -> None:
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, (code, err)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A default cache root (TRITONBUILD_CACHE_DIR) holding a build dir that nothing here may remove."""
    root = tmp_path / "cache"
    (root / "build" / "abc").mkdir(parents=True)
    (root / "build" / "abc" / "keep").write_text("x")
    monkeypatch.setenv("TRITONBUILD_CACHE_DIR", str(root))
    monkeypatch.chdir(tmp_path)
    return root


@pytest.mark.parametrize("empty", ["", " "])
@pytest.mark.parametrize("args", [("plan",), ("status",), ("clean", "--all"), ("clean", "--all", "--dry-run"),
                                  ("clean", "--develop"), ("llvm", "gc"), ("backends",), ("selftest",),
                                  ("rebuild", "p.json")])
def test_an_empty_cache_dir_is_refused_not_taken_as_the_default(capsys: pytest.CaptureFixture[str], cache: Path,
                                                                 args: tuple[str, ...], empty: str) -> None:
    """``clean --all --cache-dir "$CACHE"`` with CACHE unset wiped the default cache root."""
    code, out, err = cli_exit(capsys, *args, "--cache-dir", empty)
    one_paragraph(code, err)
    assert out == "" and f"--cache-dir {empty!r} is empty, which would mean the default cache root" in err, err
    assert (cache / "build" / "abc" / "keep").read_text() == "x"


@pytest.mark.parametrize("args", [("build",), ("selftest",), ("rebuild", "p.json")])
def test_an_empty_out_dir_is_refused_not_taken_as_the_default(capsys: pytest.CaptureFixture[str], cache: Path,
                                                              args: tuple[str, ...]) -> None:
    """``--out "$DIST"`` with DIST unset put the wheel in ./dist (or the current directory) unasked."""
    code, out, err = cli_exit(capsys, *args, "--out", "")
    one_paragraph(code, err)
    assert out == "" and "--out '' is empty, which would mean" in err, err


def test_an_empty_recipe_flag_or_cache_dir_in_a_recipe_is_refused(capsys: pytest.CaptureFixture[str], cache: Path,
                                                                   tmp_path: Path) -> None:
    code, _, err = cli_exit(capsys, "plan", "--recipe", "")
    one_paragraph(code, err)
    assert "--recipe '' is empty, which would mean no recipe" in err, err
    recipe = tmp_path / "r.toml"
    recipe.write_text('cache_dir = ""\n')
    code, _, err = cli_exit(capsys, "plan", "--recipe", str(recipe))
    one_paragraph(code, err)
    assert "r.toml's cache_dir) is empty, which would mean the default cache root" in err, err


def test_an_empty_cache_dir_variable_is_unset_as_every_settings_variable_is() -> None:
    """An empty environment variable means unset, for every setting (``_str``, ``env_int``): the cache's too."""
    env = {"TRITONBUILD_CACHE_DIR": "", "HOME": "/home/u"}
    assert cacheroot.cache_root(env) == Path("/home/u/.cache/tritonbuild")


LONG = "B" * 300  # one name over NAME_MAX (255 bytes): the file system refuses to look it up (ENAMETOOLONG)


@pytest.mark.parametrize("args", [("verify", f"{LONG}.whl"), ("compare", f"{LONG}.whl", f"{LONG}.whl"),
                                  ("rebuild", f"{LONG}.json", "--source", "."), ("clean", "--cache-dir", LONG,
                                                                                 "--dry-run"),
                                  ("status", "--cache-dir", LONG), ("verify", "loop/w.whl"),
                                  ("rebuild", "loop", "--source", ".")])
def test_a_path_the_file_system_refuses_to_look_up_is_one_paragraph(capsys: pytest.CaptureFixture[str],
                                                                    cache: Path, tmp_path: Path,
                                                                    args: tuple[str, ...]) -> None:
    """``verify BBB...B.whl`` (300 B) was an OSError traceback, exit 1."""
    (tmp_path / "loop").symlink_to("loop")
    code, out, err = cli_exit(capsys, *args)
    one_paragraph(code, err)
    assert out == "" and ("File name too long" in err or "too long" in err or "symbolic links" in err), err


@pytest.mark.parametrize("args", [("plan", "--source", "."), ("status",), ("clean", "--dry-run"),
                                  ("clean", "--all", "--dry-run"), ("clean", "--develop", "--dry-run"),
                                  ("llvm", "gc", "--dry-run")])
@pytest.mark.parametrize("via", ["flag", "env"])
def test_a_cache_dir_through_a_symlink_loop_is_one_paragraph(capsys: pytest.CaptureFixture[str], cache: Path,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             args: tuple[str, ...], via: str) -> None:
    """``--cache-dir /tmp/x/loop/c`` (``loop`` a link to itself) was ``RuntimeError: Symlink loop``, exit 1; the
    same words as --source through such a link."""
    (tmp_path / "loop").symlink_to("loop")
    looping = str(tmp_path / "loop" / "c")
    if via == "env":
        monkeypatch.setenv("TRITONBUILD_CACHE_DIR", looping)
    code, out, err = cli_exit(capsys, *args, *(("--cache-dir", looping) if via == "flag" else ()))
    one_paragraph(code, err)
    assert out == ""
    origin = "--cache-dir" if via == "flag" else "$TRITONBUILD_CACHE_DIR"
    assert f"{looping} (the cache root, from {origin}) is a symlink loop (a link that leads back to itself)" in err
    assert (cache / "build" / "abc" / "keep").read_text() == "x"


@pytest.mark.parametrize(("flag", "value", "said"), [
    ("--llvm", "", "is empty, which would mean the current directory as the LLVM prefix"),
    ("--llvm", " ", "is empty, which would mean the current directory as the LLVM prefix"),
    ("--wheelhouse", "", "is empty, which names no path"),
    ("--cmake-arg", "", "lists an empty argument"),
])
def test_an_empty_llvm_wheelhouse_or_cmake_argument_is_refused(capsys: pytest.CaptureFixture[str], cache: Path,
                                                               flag: str, value: str, said: str) -> None:
    """``--llvm ""`` was the current directory as the prefix, ``--wheelhouse ""`` was dropped as if not given and
    ``--cmake-arg ""`` put '' into the configure command (and the build dir's key)."""
    code, out, err = cli_exit(capsys, "plan", flag, value)
    one_paragraph(code, err)
    assert out == "" and said in err and f"(cli {flag})" in err, err


def test_empty_values_are_refused_from_a_recipe_and_the_environment_alike() -> None:
    from tritonbuild.errors import UserError
    from tritonbuild.settings import recipes
    from tritonbuild.settings.model import resolve_settings

    where = Path("/nowhere/r.toml")
    for name, value in (("llvm", ""), ("wheelhouse", ""), ("cmake_args", ["-DX=1", ""])):
        with pytest.raises(UserError, match="empty"):
            recipes.parse({name: value}, where)
    with pytest.raises(UserError, match=r"TRITON_APPEND_CMAKE_ARGS.*lists an empty argument"):
        resolve_settings({}, {"TRITON_APPEND_CMAKE_ARGS": "-DX=1 ''"})
    # an empty variable is unset, as for every setting
    assert resolve_settings({}, {"LLVM_SYSPATH": ""}).llvm == "auto"
    assert resolve_settings({}, {"TRITONBUILD_WHEELHOUSE": ""}).wheelhouse is None
    assert resolve_settings({"cmake_args": ["-DX=1"], "llvm": "."}, {}).cmake_args == ("-DX=1",)


@pytest.mark.parametrize(("value", "said"), [("Z" * 100_000, "(100002 characters) is 100000 characters long; at "
                                                            "most 4096 are accepted"),
                                             ("a..b\x1b[31m", "'b\\x1b[31m' is not a commit name"),
                                             ("Z" * 100_000 + "..main", "(100008 characters) is 100006 characters")])
def test_a_huge_range_is_quoted_cut_short_as_every_option_is(capsys: pytest.CaptureFixture[str], cache: Path,
                                                             value: str, said: str) -> None:
    """``llvm compat --range`` of 100 kB printed a 100 kB message of 26 lines, the value in it whole."""
    code, _, err = cli_exit(capsys, "llvm", "compat", "--range", value)
    one_paragraph(code, err)
    assert said in err and len(err) < 400, err


@pytest.mark.parametrize("text", ["-0", "-0.0", "-.0", "-0e3", "-0.000", "-1e-400"])
def test_a_sign_on_a_zero_is_no_number_as_for_whole_numbers(capsys: pytest.CaptureFixture[str], cache: Path,
                                                            text: str) -> None:
    """``--canary-budget -0`` was shown as -0.0 by ``plan --settings``; ``-0`` is already no whole number."""
    from tritonbuild.errors import UserError
    from tritonbuild.settings import recipes
    from tritonbuild.settings.model import ascii_float, resolve_settings

    with pytest.raises(ValueError, match="not a number"):
        ascii_float(text)
    code, _, err = cli_exit(capsys, "plan", "--canary-budget", text)
    one_paragraph(code, err)
    assert "is not a number written in ASCII digits" in err, err
    with pytest.raises(UserError, match="TRITONBUILD_CANARY_BUDGET"):
        resolve_settings({}, {"TRITONBUILD_CANARY_BUDGET": text})
    with pytest.raises(UserError, match=r"canary_budget = -0\.0"):
        recipes.parse({"canary_budget": -0.0}, Path("/nowhere/r.toml"))


def test_zero_and_signed_numbers_are_still_numbers() -> None:
    from tritonbuild.settings.model import ascii_float, resolve_settings

    assert [ascii_float(t) for t in ("0", "0.0", ".0", "1e-400", "-1.5", "-0.5", "2")] == [0, 0, 0, 0, -1.5, -0.5, 2]
    assert resolve_settings({}, {"TRITONBUILD_CANARY_BUDGET": "0"}).canary_budget == 0
