"""The environment reaches the plan only through the settings model (#48): ``SOURCE_DATE_EPOCH``,
``TRITON_LLVM_SYSTEM_SUFFIX``, ``SCCACHE_SERVER_PORT`` and the cache root's variables are settings without a flag
(an origin, a check, one precedence), and no resolver under ``tritonbuild/resolve`` takes an environment or reads
``os.environ``: what else a plan needs of it (sccache's configuration, the tree's proton variables) the edge gathers
as facts."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import HOST, plan_for
from tritonbuild.errors import UserError
from tritonbuild.settings import cacheroot
from tritonbuild.settings.model import MAX_EPOCH, SPEC_BY_NAME, env_resolved, env_settings, resolve_settings

RESOLVE = Path(__file__).resolve().parents[2] / "tritonbuild" / "resolve"
ENV_NAMES = {"env", "environ", "environment"}
NEW = ("source_date_epoch", "llvm_system_suffix", "sccache_server_port", "cache_root")


def env_faults(path: Path) -> list[str]:
    """Each function of ``path`` with a parameter named like an environment, and each read of os.environ/getenv."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *([a.vararg] if a.vararg else []),
                      *([a.kwarg] if a.kwarg else [])]
            name = getattr(node, "name", "<lambda>")
            out += [f"{path.name}:{node.lineno}: {name}({p.arg}=...)" for p in params if p.arg in ENV_NAMES]
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv", "putenv"):
            out.append(f"{path.name}:{node.lineno}: reads os.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "os" and \
                {a.name for a in node.names} & {"environ", "environb", "getenv"}:
            out.append(f"{path.name}:{node.lineno}: imports os's environment")
    return out


def test_no_resolver_takes_an_environment_or_reads_os_environ() -> None:
    files = sorted(RESOLVE.rglob("*.py"))
    assert len(files) > 20  # the walk saw the package
    faults = [f for path in files for f in env_faults(path)]
    assert not faults, "a resolver reads the environment (make it a setting, or a fact the edge gathers):\n" + \
        "\n".join(faults)


def test_the_env_check_sees_each_kind_of_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom os import getenv\ndef f(x, *, env): return os.environ.get('A')\n"
                   "g = lambda environ: 1\n")
    assert len(env_faults(bad)) == 4, env_faults(bad)


def test_the_new_settings_have_no_flag_no_recipe_key_and_an_origin() -> None:
    for name in NEW:
        assert SPEC_BY_NAME[name].flag is None and not SPEC_BY_NAME[name].recipe, name
    env = {"SOURCE_DATE_EPOCH": "1700000000", "TRITON_LLVM_SYSTEM_SUFFIX": "almalinux-x64",
           "SCCACHE_SERVER_PORT": "4226", "TRITONBUILD_CACHE_DIR": "/c"}
    got = resolve_settings({}, env)
    assert {n: (getattr(got, n), got.origin(n)) for n in NEW} == {
        "source_date_epoch": (1700000000, "env SOURCE_DATE_EPOCH"),
        "llvm_system_suffix": ("almalinux-x64", "env TRITON_LLVM_SYSTEM_SUFFIX"),
        "sccache_server_port": (4226, "env SCCACHE_SERVER_PORT"), "cache_root": ("/c", "env TRITONBUILD_CACHE_DIR")}
    empty = resolve_settings({}, dict.fromkeys(env, ""))  # an empty variable is unset, as every setting's is
    assert {n: (getattr(empty, n), empty.origin(n)) for n in NEW} == dict.fromkeys(NEW, (None, "default"))


@pytest.mark.parametrize(("env", "root", "origin"), [
    ({"TRITONBUILD_CACHE_DIR": "/a", "TRITON_HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/a", "TRITONBUILD_CACHE_DIR"),
    ({"TRITONBUILD_CACHE_DIR": "", "TRITON_HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/h/.triton/tritonbuild",
     "TRITON_HOME"),
    ({"TRITON_HOME": "/", "XDG_CACHE_HOME": "/x"}, "/.triton/tritonbuild", "TRITON_HOME"),
    ({"XDG_CACHE_HOME": "/x/", "HOME": "/home/u"}, "/x/tritonbuild", "XDG_CACHE_HOME"),
])
def test_the_cache_roots_one_precedence(env: dict[str, str], root: str, origin: str, tmp_path: Path) -> None:
    """README: TRITONBUILD_CACHE_DIR, else $TRITON_HOME/.triton/tritonbuild, else $XDG_CACHE_HOME/tritonbuild, else
    ~/.cache/tritonbuild; --cache-dir (or a recipe's cache_dir) before them all."""
    chosen = env_resolved("cache_root", env)
    assert (chosen.value, chosen.origin) == (root, f"env {origin}")
    assert cacheroot.cache_root(env) == Path(root).resolve()
    assert cacheroot.cache_origin(env, None) == f"${origin}"
    assert cacheroot.cache_root(env, str(tmp_path)) == tmp_path.resolve()
    assert cacheroot.cache_origin(env, str(tmp_path)) == "--cache-dir"
    home = {"HOME": "/home/u"}
    assert cacheroot.cache_root(home) == Path("/home/u/.cache/tritonbuild")
    assert cacheroot.cache_origin(home, None) == "$HOME"


def test_the_environments_settings_are_read_by_attribute_each_checked_when_read() -> None:
    """``env_settings``: doctor's LLVM and the cache root read ``.llvm``/``.cache_root`` (no name as a string); a
    setting read is checked by its spec, one not read is not (a bad MAX_JOBS does not stop ``doctor``)."""
    env = {"LLVM_SYSPATH": "/opt/llvm", "MAX_JOBS": "many", "TRITONBUILD_HTTP_RETRIES": "5", "TRITON_HOME": "/h"}
    s = env_settings(env)
    assert (s.llvm, s.origin("llvm"), s.http_retries, s.canary) == ("/opt/llvm", "env LLVM_SYSPATH", 5, "auto")
    assert (s.cache_root, s.origin("cache_root")) == ("/h/.triton/tritonbuild", "env TRITON_HOME")
    assert s.plugin_dirs == () and s.origin("canary") == "default"  # typed as the field is
    with pytest.raises(UserError, match="MAX_JOBS"):
        _ = s.jobs
    with pytest.raises(AttributeError, match="no setting is named 'lvm'"):
        _ = s.lvm  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="no setting"):
        s.origin("lvm")


@pytest.mark.parametrize(("env", "said"), [
    ({"SCCACHE_SERVER_PORT": "x"}, "The environment variable SCCACHE_SERVER_PORT='x' is not a whole number."),
    ({"SCCACHE_SERVER_PORT": "70000"}, "The setting sccache_server_port = 70000 (env SCCACHE_SERVER_PORT) must be a "
                                       "whole number 1-65535."),
    ({"SCCACHE_SERVER_PORT": "0"}, "must be a whole number 1-65535"),
    ({"SOURCE_DATE_EPOCH": "-1"}, "SOURCE_DATE_EPOCH='-1' must be a whole number of seconds since 1970, at most "
                                  f"{MAX_EPOCH} (the end of the year 9999)."),
    ({"TRITON_LLVM_SYSTEM_SUFFIX": "../x"}, "TRITON_LLVM_SYSTEM_SUFFIX='../x' is not a platform suffix"),
    ({"TRITONBUILD_CACHE_DIR": "/c\n"}, "The setting cache_root = '/c\\n' (env TRITONBUILD_CACHE_DIR) holds a "
                                        "control character"),
    ({"TRITON_HOME": "/" + "h" * 5000}, "(env TRITON_HOME) is 5021 characters long; at most 4096 are accepted"),
])
def test_a_bad_value_is_refused_naming_its_variable(env: dict[str, str], said: str) -> None:
    with pytest.raises(UserError) as err:
        resolve_settings({}, env)
    assert said in str(err.value) and "\n" not in str(err.value).replace("\\n", ""), str(err.value)


def test_a_bad_port_is_one_paragraph_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``SCCACHE_SERVER_PORT=x`` went into the build's environment as it was (sccache then failed to start its
    server); it is refused before anything is read or written, as every setting's bad value is."""
    from tritonbuild.cli.main import main

    monkeypatch.setenv("SCCACHE_SERVER_PORT", "x")
    monkeypatch.setenv("TRITONBUILD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["plan", "--source", str(tmp_path)])
    out, err = capsys.readouterr()
    assert done.value.code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert "SCCACHE_SERVER_PORT='x' is not a whole number" in err
    assert not (tmp_path / "cache").exists()


def test_the_settings_reach_the_plan(tree) -> None:  # type: ignore[no-untyped-def]
    """The port and the epoch come from the settings (the plan's settings report says where from); sccache's own
    configuration is a fact, so two storages are two servers."""
    root = Path(tree())
    host = replace(HOST, tools={**HOST.tools, "sccache": "/usr/bin/sccache"})
    cli = {"compiler_cache": "sccache", "reproducible": True}
    p = plan_for(root, cli, {"SCCACHE_SERVER_PORT": "4226", "SOURCE_DATE_EPOCH": "1767225600"}, host=host)
    assert dict(p.cmake.env)["SCCACHE_SERVER_PORT"] == "4226"
    assert dict(p.cmake.env)["SOURCE_DATE_EPOCH"] == "1767225600"
    assert p.settings.report()["sccache_server_port"] == {"value": 4226, "origin": "env SCCACHE_SERVER_PORT"}
    ports = {dict(plan_for(root, {"compiler_cache": "sccache"}, {"SCCACHE_BUCKET": b}, host=host).cmake.env)[
        "SCCACHE_SERVER_PORT"] for b in ("a", "b")}
    assert len(ports) == 2


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=40))
def test_any_epoch_text_is_a_value_in_range_or_one_refusal(text: str) -> None:
    try:
        value = env_resolved("source_date_epoch", {"SOURCE_DATE_EPOCH": text}).value
    except UserError as exc:
        assert str(exc).startswith("SOURCE_DATE_EPOCH=") or str(exc).startswith("The setting"), str(exc)
        return
    assert value is None if not text else 0 <= value <= MAX_EPOCH
