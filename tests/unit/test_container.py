"""``build --container``'s pure parts: the image reference's rule, the variables passed by name (only those
tritonbuild reads, never a secret it does not), the engine's argument list (no shell, the user's ids, read-only
inputs), the inner command line. The runs themselves (a fake engine that runs the command on the host, and a real
runtime where one works) are in tests/integration/test_container.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tritonbuild.errors import UserError
from tritonbuild.execute import container as ct
from tritonbuild.settings.model import SPECS, image_problem, resolve_settings

GOOD = ["quay.io/pypa/manylinux_2_28_x86_64", "quay.io/pypa/manylinux_2_28_x86_64:2025.01.01-1", "debian:bookworm",
        "python:3.12-slim", "localhost:5000/my/img", "ghcr.io/o-r/x__y.z:v1",
        "quay.io/pypa/musllinux_1_2_aarch64@sha256:" + "a" * 64, "busybox", ""]
BAD = ["Debian", "-v/:/host", "debian bookworm", "a:b:c", "img:", "/img", "img/", "img@sha256:abc", "a..b",
       "a/-b", "$(touch x)", "a;b", "x\ny", "img:" + "t" * 129, "a" * 256, "quay.io:port/x", "https://quay.io/x"]


@pytest.mark.parametrize("ref", GOOD)
def test_image_references_docker_takes_are_accepted(ref: str) -> None:
    assert image_problem(ref) is None


@pytest.mark.parametrize("ref", BAD)
def test_other_text_is_refused_as_an_image_with_exit_2(ref: str) -> None:
    assert image_problem(ref)
    with pytest.raises(UserError, match=r"container image reference|control character|characters long"):
        resolve_settings({"container": ref}, {})


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300) | st.from_regex(r"[a-z0-9.:/@_-]{1,80}", fullmatch=True))
def test_an_accepted_image_is_never_an_option_a_path_or_a_shell_word(text: str) -> None:
    started = time.monotonic()
    ok = image_problem(text) is None
    assert time.monotonic() - started < 0.5  # no backtracking blow-up on hostile text
    if ok and text:
        assert not text.startswith(("-", "/", ".")) and not any(c.isspace() or ord(c) < 32 for c in text)
        assert set(text) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-:/@")


READ = {n for spec in SPECS for n in spec.env_names} | set(ct.EXTRA_ENV)


def test_only_variables_tritonbuild_reads_and_that_are_set_go_in() -> None:
    env = {"MAX_JOBS": "3", "TRITON_PLUGIN_DIRS": "/p", "PIP_INDEX_URL": "https://i/simple", "SOURCE_DATE_EPOCH": "1",
           "SECRET_TOKEN": "s", "TRITONBUILD_TOKEN": "s", "TRITON_API_KEY": "s", "AWS_SECRET_ACCESS_KEY": "s",
           "GITHUB_TOKEN": "s", "TRITONBUILD_CONTAINER": "debian", "TRITONBUILD_CONTAINER_ENGINE": "docker",
           "VIRTUAL_ENV": "/host/venv", "PYTHONPATH": "/host", "HOME": "/root", "PATH": "/usr/bin"}
    assert ct.passed_env(env) == ("MAX_JOBS", "PIP_INDEX_URL", "SOURCE_DATE_EPOCH", "TRITON_PLUGIN_DIRS")


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(READ)) | st.from_regex(r"[A-Z_]{1,20}", fullmatch=True),
                       st.text(max_size=10), max_size=30))
def test_passed_variables_are_always_read_ones_that_are_set(env: dict[str, str]) -> None:
    passed = set(ct.passed_env(env))
    assert passed <= READ & set(env)
    kept = {n for spec in SPECS if spec.host_only for n in spec.env_names}
    assert {"TRITONBUILD_CONTAINER", "TRITONBUILD_CONTAINER_ENGINE", "TRITONBUILD_CONTAINER_PYTHON",
            "TRITONBUILD_CACHE_DIR", "TRITON_HOME", "XDG_CACHE_HOME", "TRITON_LLVM_SYSTEM_SUFFIX",
            "SCCACHE_SERVER_PORT"} == kept
    assert passed == (READ & set(env)) - kept


def test_every_setting_that_names_a_local_path_of_code_is_mounted() -> None:
    paths = {s.name for s in SPECS if s.trust == "runs" and s.kind in ("str", "list") and not s.host_only}
    # arguments are not paths; of a KEY=PATH entry the PATH is (Spec.keyed: --patch, --dep; --submodule's are
    # refused by --container before anything is mounted); the source is mounted on its own (the cwd when none is
    # given), and the cache root too, read-write (--cache-dir)
    assert paths - {"cmake_args", "source", "cache_root"} == set(ct.PATH_SETTINGS)
    assert {s.name for s in SPECS if s.keyed} == {"patches", "submodules", "deps"}


def _container(engine: str = "/usr/bin/docker", **kw: object) -> ct.Container:
    base: dict[str, object] = {
        "engine": engine, "image": "quay.io/pypa/manylinux_2_28_x86_64", "python": ct.PYPA_PYTHON,
        "mounts": ct.mounts(["/src", "/src/sub", "/plug"], ["/cache", "/out"]), "passed": ("MAX_JOBS",),
        "values": (("HOME", "/cache/container/k/home"),), "workdir": "/src", "user": (1000, 1000),
        "offline": False, "venv": "/cache/container/k/venv", "cache": "/cache", "out": "/out"}
    return ct.Container(**{**base, **kw})  # type: ignore[arg-type]


def test_the_engine_runs_an_argument_list_as_the_user_with_inputs_read_only() -> None:
    argv = ct.run_argv(_container(), ["/v/bin/python", "-m", "tritonbuild", "build", "--source", "/src; rm -rf ~"])
    assert argv[:6] == ["/usr/bin/docker", "run", "--rm", "--init", "--user", "1000:1000"]
    vols = [argv[i + 1] for i, a in enumerate(argv) if a == "--volume"]
    assert vols == ["/cache:/cache:rw", "/out:/out:rw", "/plug:/plug:ro", "/src:/src:ro"]
    assert "/src/sub:/src/sub:ro" not in vols  # under a read-only mount already
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--env"] == ["MAX_JOBS", "HOME=/cache/container/k/home"]
    image = argv.index("quay.io/pypa/manylinux_2_28_x86_64")
    assert argv[image + 1:] == ["/v/bin/python", "-m", "tritonbuild", "build", "--source", "/src; rm -rf ~"]
    assert not {"sh", "bash", "/bin/sh", "-c"} & set(argv) and "--network=none" not in argv
    assert "--userns=keep-id" not in argv and "--privileged" not in argv


def test_podman_keeps_the_users_id_and_offline_has_no_network() -> None:
    argv = ct.run_argv(_container("/usr/bin/podman", offline=True), ["python3"])
    assert "--userns=keep-id" in argv and "--network=none" in argv


def test_a_path_the_volume_syntax_would_split_is_refused() -> None:
    for bad in ("/a:b", "/a,b", "/a\nb"):
        with pytest.raises(UserError, match="cannot mount"):
            ct.mounts([bad], ["/cache"])
    assert ct.mounts(["/c/x"], ["/c"]) == (ct.Mount("/c", True), ct.Mount("/c/x", False))


def test_the_inner_command_line_drops_the_container_and_gives_host_paths_absolute(tmp_path: Path) -> None:
    (tmp_path / "plug").mkdir()
    (tmp_path / "fix.diff").write_text("")
    given = [("source", "--source", "."), ("container", "--container", "debian"),
             ("container_engine", "--container-engine", "podman"), ("plugin_dirs", "--plugin-dir", "plug"),
             ("plugin_dirs", "--plugin-dir", "git+https://h/x@main"), ("patches", "--patch", "fix.diff"),
             ("llvm", "--llvm", "download"), ("offline", "--offline", None), ("out", "--out", "dist"),
             ("cache_dir", "--cache-dir", "c"), ("jobs", "--jobs", "4"), ("proton", "--no-proton", None)]
    args = ct.inner_args(given, _container(), tmp_path)
    assert args == ["--source", str(tmp_path), "--plugin-dir", str(tmp_path / "plug"), "--plugin-dir",
                    "git+https://h/x@main", "--patch", str(tmp_path / "fix.diff"), "--llvm", "download", "--offline",
                    "--jobs", "4", "--no-proton", "--cache-dir", "/cache", "--out", "/out", "--container", ""]


def test_a_dep_and_a_plugin_patch_are_mounted_and_given_absolute_by_their_path_part_alone(tmp_path: Path) -> None:
    """--dep NAME=PATH and --patch NAME=FILE: the PATH made absolute with NAME kept, and mounted (a URL is cloned
    in the image: neither), as Spec.keyed says; --dep's checkout was mounted nowhere before."""
    from tritonbuild.settings.model import resolve_settings

    for d in ("abi", "plug"):
        (tmp_path / d).mkdir()
    (tmp_path / "fix.diff").write_text("")
    given = [("deps", "--dep", "spirv-kernel-abi=abi"), ("deps", "--dep", "gtest=https://h/gtest.git"),
             ("patches", "--patch", "shared=fix.diff")]
    assert ct.inner_args(given, _container(), tmp_path)[:6] == [
        "--dep", f"spirv-kernel-abi={tmp_path / 'abi'}", "--dep", "gtest=https://h/gtest.git",
        "--patch", f"shared={tmp_path / 'fix.diff'}"]
    s = resolve_settings({"deps": ("spirv-kernel-abi=abi", "gtest=git@h:g.git"), "patches": ("shared=fix.diff",),
                          "llvm": "system", "plugin_dirs": ("plug",)}, {})
    assert sorted(ct._mount_paths(s, tmp_path)) == sorted(
        [str(tmp_path), str(tmp_path / "abi"), str(tmp_path / "fix.diff"), str(tmp_path / "plug")])


def test_the_image_python_defaults_to_pypas_in_manylinux_and_python3_elsewhere() -> None:
    assert ct.image_python("quay.io/pypa/manylinux_2_28_x86_64:latest", None) == ct.PYPA_PYTHON
    assert ct.image_python("quay.io/pypa/musllinux_1_2_x86_64@sha256:" + "0" * 64, None) == ct.PYPA_PYTHON
    assert ct.image_python("debian:bookworm", None) == "python3"
    assert ct.image_python("debian:bookworm", "/usr/bin/python3.11") == "/usr/bin/python3.11"


def test_a_missing_engine_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="neither is"):
        ct.find_engine("auto", {"PATH": str(tmp_path)})
    with pytest.raises(UserError, match=r"podman.*it is not"):
        ct.find_engine("podman", {"PATH": str(tmp_path)})
    fake = tmp_path / "podman"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert ct.find_engine("auto", {"PATH": str(tmp_path)}) == str(fake)
    assert os.access(fake, os.X_OK)


@pytest.mark.parametrize("command", ["develop", "clean", "test"])
def test_commands_that_run_on_this_host_refuse_the_container_flag(command: str) -> None:
    from click.testing import CliRunner

    from tritonbuild.cli.main import cli

    result = CliRunner().invoke(cli, [command, "--container", "debian:bookworm"])
    assert isinstance(result.exception, UserError) and "--container runs `build`" in str(result.exception)


@pytest.mark.parametrize(("given", "env"), [
    ({"ccache_remote": "file:/home/me/ccache-shared"}, {}),
    ({"ccache_remote": "redis://cache.example:6379 redis+unix:/run/redis.sock"}, {}),
    ({}, {"PIP_INDEX_URL": "file:///srv/pypi/simple"}),
    ({"distcc": "127.0.0.1/8 fast.example/16"}, {}),
    ({}, {"TRITONBUILD_LLVM_MIRROR": "http://127.0.0.1:8000/llvm"}),
    ({"llvm_mirror": "http://localhost./llvm"}, {}),
    ({"llvm_mirror": "http://2130706433/llvm"}, {}),
    ({"llvm_mirror": "http://0177.0.0.1/llvm"}, {}),
    ({"llvm_mirror": "http://[::]/llvm"}, {}),
    ({"llvm_mirror": "http://ip6-localhost/llvm"}, {}),
    ({"llvm_mirror": "http://mirror.localhost/llvm"}, {}),
    ({"source": "file:///srv/triton"}, {}),
    ({"plugin_dirs": ["https://127.0.0.1/triton-shared.git"]}, {}),
    ({"deps": ["json=git@localhost:json.git"]}, {}),
    ({"plugin_dirs": ["git+file:///srv/triton-shared@main"]}, {}),
    ({"distcc": "@localhost/2"}, {}),
    ({"distcc": "me@localhost"}, {}),
    ({"distcc": "localhost:3632"}, {}),
    ({"distcc": "localhost/4:3632"}, {}),
    ({"ccache_remote": "redis+unix:relative.sock"}, {}),
    ({"ccache_remote": "file:../shared-ccache"}, {}),
    ({"llvm_mirror": "http://127.1/llvm"}, {}),
    ({"llvm_mirror": "http://[::ffff:127.0.0.1]/llvm"}, {}),
    ({"llvm_mirror": "http://localhost.localdomain/llvm"}, {}),
])
def test_a_value_passed_into_the_image_that_names_this_host_is_refused_before_anything_runs(
        tmp_path: Path, given: dict[str, str], env: dict[str, str]) -> None:
    """Review 42: a file or unix-socket storage, a file:// index or the loopback, passed into the image, names the
    container there: the build would silently use another storage, or none."""
    s = resolve_settings({"container": "debian:bookworm", **given}, env)
    with pytest.raises(UserError, match=r"names this host .* nothing was run"):
        ct.prepare(s, {"PATH": str(tmp_path)}, tmp_path, tmp_path / "cache", tmp_path / "out", None)


def test_a_value_the_image_can_reach_is_not_refused_as_this_hosts(tmp_path: Path) -> None:
    """Review 43: distcc's own localhost means "compile here" (the image's compiler); a number or a query that
    only looks like the loopback names no host."""
    s = resolve_settings({"container": "debian:bookworm", "ccache_remote": "redis://unix-cache.example:6379",
                          "distcc": "localhost/4 fast.example/16,lzo",
                          "cmake_args": ["-DX=0x7fffffff", "-DY=127.5", "-DMSG=see(file:notes)", "-DZ=a,file:b"],
                          "llvm_mirror": "https://mirror.example/localhost/llvm?q=localhost"},
                         {"PIP_INDEX_URL": "https://pypi.example/simple"})
    with pytest.raises(UserError, match="--container needs"):  # past the check: no engine on this PATH
        ct.prepare(s, {"PATH": str(tmp_path)}, tmp_path, tmp_path / "cache", tmp_path / "out", None)


@pytest.mark.parametrize("argv", [["develop", "--container", "debian"],
                                  ["llvm", "path", "--container-engine", "podman"],
                                  ["check-llvm", "--container-python", "/usr/bin/python3"],
                                  ["llvm", "build", "--container", "debian"]])
def test_a_container_option_typed_for_a_command_that_runs_here_is_refused(argv: list[str]) -> None:
    from click.testing import CliRunner

    from tritonbuild.cli.main import cli

    res = CliRunner().invoke(cli, argv)
    assert isinstance(res.exception, UserError) and res.exception.exit_code == 2, res.output
    command = " ".join(argv[:-2])
    assert str(res.exception) == (f"{argv[-2]} runs `build` in an image; `{command}` runs on this host. Leave "
                                  f"{argv[-2]} out, or use `build --container IMAGE`.")


def test_a_container_the_environment_names_is_left_out_by_a_command_that_runs_here_and_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 42: TRITONBUILD_CONTAINER (set for a CI job's builds) was silently ignored by develop and llvm path."""
    from click.testing import CliRunner

    from tritonbuild.cli.main import cli

    monkeypatch.setenv("TRITONBUILD_CONTAINER", "debian:bookworm")
    res = CliRunner().invoke(cli, ["develop", "--source", str(tmp_path / "missing")])
    assert isinstance(res.exception, UserError) and "missing" in str(res.exception)  # refused after the warning
    said = " ".join(res.stderr.split())
    assert ("env TRITONBUILD_CONTAINER names a container image; `develop` runs on this host, and leaves it out (only "
            "`build` runs in one)") in said
    for argv in (["rebuild", str(tmp_path / "missing.json")], ["selftest", "--llvm", str(tmp_path / "no-llvm")],
                 ["llvm", "build", "--source", str(tmp_path / "missing")]):  # review 43: these said nothing
        res = CliRunner().invoke(cli, argv)
        assert res.exception is not None and "`" + " ".join(argv[:2] if argv[0] == "llvm" else argv[:1]) + \
            "` runs on this host, and leaves it out" in " ".join(res.stderr.split()), (argv, res.stderr)


LOOPBACK = ["localhost", "LOCALHOST.", "a.localhost", "127.0.0.1", "127.1", "127.255.0.9", "2130706433", "0177.0.0.1",
            "0x7f000001", "0x7f.1", "0.0.0.0", "0", "[::1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]",
            "ip6-localhost", "localhost.localdomain"]


@settings(max_examples=300, deadline=None)
@given(host=st.sampled_from(LOOPBACK), scheme=st.sampled_from(["http", "https", "redis", "ssh", "git+https"]),
       user=st.sampled_from(["", "u@", "u:p@"]), port=st.sampled_from(["", ":80", ":6379"]),
       tail=st.text(alphabet="/?#=&|abc.", max_size=12))
def test_a_loopback_host_in_any_url_form_names_this_host(host: str, scheme: str, user: str, port: str,
                                                         tail: str) -> None:
    assert ct.names_this_host(f"{scheme}://{user}{host}{port}/{tail}")
    assert ct.names_this_host(f"git@{host}:repo.git") or host.startswith("[")


@settings(max_examples=500, deadline=None)
@given(value=st.text(max_size=80) | st.text(alphabet="/:@[].%0127x-localhost,;| ", max_size=40),
       distcc=st.booleans())
def test_any_value_is_read_for_this_host_in_bounded_time_without_an_error(value: str, distcc: bool) -> None:
    start = time.monotonic()
    found = ct.names_this_host(value, distcc=distcc)
    assert time.monotonic() - start < 0.05
    assert found in (True, False)
    if "://" not in value and "@" not in value and ":" not in value and not distcc:
        assert not found  # no URL, no git host, no distcc list: nothing names a host


def test_a_container_a_recipe_names_is_left_out_by_a_command_that_runs_here_and_said(tmp_path: Path) -> None:
    """Review 44: a recipe's `container` was silently ignored by develop, test, check-llvm and llvm status/path."""
    from click.testing import CliRunner

    from tritonbuild.cli.main import cli

    recipe = tmp_path / "ci.toml"
    recipe.write_text('container = "debian:bookworm"\n')
    res = CliRunner().invoke(cli, ["llvm", "path", "--recipe", str(recipe), "--source", str(tmp_path / "missing")])
    assert res.exception is not None
    assert (f"recipe {recipe} names a container image; `llvm path` runs on this host, and leaves it out"
            in " ".join(res.stderr.split())), res.stderr
