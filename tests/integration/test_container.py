"""``build --container`` run for real: through a fake engine here (a script first on PATH named docker that records
its argv and runs the command after the image on the host, with only the variables its ``--env`` options name, in its
``--workdir``: no isolation, but the same command line and environment a container gets, and a path in the command,
the workdir or PYTHONPATH that is neither mounted nor a parent of a mount fails it as in a container), and through a
real runtime where one works (skipped with the reason otherwise). Each test's marker or skip says which ran.

No test builds the example tree: the inner ``build`` is refused by the inner tritonbuild (exit 2, its own message)
or stopped by the fake engine with a chosen code, which is enough to show the command, the variables and the exit
code cross the engine."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tritonbuild import example
from tritonbuild.execute.container import dependencies

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "quay.io/pypa/manylinux_2_28_x86_64"
FAKE = '''#!{python}
import json, os, shutil, sys
argv = sys.argv[1:]
i, env, workdir = 1, {{"PATH": os.environ["PATH"]}}, "/"
while argv[i].startswith("-"):
    if argv[i] in ("--user", "--volume", "--env", "--workdir"):
        name, eq, value = argv[i + 1].partition("=")
        if argv[i] == "--env" and eq:
            env[name] = value
        elif argv[i] == "--env" and name in os.environ:
            env[name] = os.environ[name]
        workdir = argv[i + 1] if argv[i] == "--workdir" else workdir
        i += 2
    else:
        i += 1
cmd = argv[i + 1:]
mounted = [v.split(":")[0] for a, v in zip(argv, argv[1:]) if a == "--volume"]
unseen = [p for p in [workdir, *cmd[1:], env.get("PYTHONPATH", "/")] if p.startswith("/")
          and not any(p == m or p.startswith(m + "/") or m.startswith(p + "/") for m in mounted)]
if unseen:  # a real container would not see it: fail as an engine would
    sys.exit(f"fake engine: not mounted in the container: {{unseen}}")
with open(os.environ["FAKE_ENGINE_LOG"], "a") as f:
    f.write(json.dumps({{"argv": sys.argv, "env": env}}) + "\\n")
if os.environ.get("FAKE_ENGINE_EXIT") and cmd[1:3] == ["-m", "venv"]:  # as the image's venv would
    os.makedirs(cmd[3])
    open(os.path.join(cmd[3], "pyvenv.cfg"), "w").close()
if os.environ.get("FAKE_ENGINE_EXIT"):
    sys.exit(int(os.environ["FAKE_ENGINE_EXIT"]) if "tritonbuild" in cmd else 0)
os.chdir(workdir)
os.execve(shutil.which(cmd[0], path=env["PATH"]) or cmd[0], cmd, env)
'''

fake_engine = pytest.mark.container_fake


def _setup(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    engine = bin_dir / "docker"
    engine.write_text(FAKE.format(python=sys.executable))
    engine.chmod(0o755)
    (tmp_path / "src").mkdir()
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path / "home"),
            "FAKE_ENGINE_LOG": str(tmp_path / "engine.log"), "NO_COLOR": "1"}


def _ready_venv(tmp_path: Path) -> None:
    """The venv the first run would make in the image, made here: its python runs this interpreter (which has
    tritonbuild's dependencies), so the fake engine's inner run is tritonbuild itself."""
    key = hashlib.sha256(f"{IMAGE}\0{sys.executable}".encode()).hexdigest()[:16]
    venv = tmp_path / "cache" / "container" / key / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /nowhere\n")
    (venv / "bin" / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv / "bin" / "python").chmod(0o755)
    (venv / "tritonbuild-dependencies.txt").write_text("\n".join(sorted(dependencies())) + "\n")


def _build(tmp_path: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    args = ["build", "--container", IMAGE, "--container-python", sys.executable, "--source", "src",
            "--cache-dir", str(tmp_path / "cache"), "--out", "out", *extra]
    return subprocess.run([sys.executable, "-m", "tritonbuild", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def _log(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "engine.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@fake_engine
def test_the_build_runs_inside_with_its_variables_and_its_exit_code(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    _ready_venv(tmp_path)
    env.update({"MAX_JOBS": "3", "TRITONBUILD_ZIP_LEVEL": "1", "SECRET_TOKEN": "hunter2",
                "TRITONBUILD_TOKEN": "hunter2", "GITHUB_TOKEN": "hunter2"})
    res = _build(tmp_path, env, "--offline", "-j", "2")
    # the inner tritonbuild ran (its own refusal of a dir that is no Triton tree) and its exit code is ours
    assert res.returncode == 2 and "is not a Triton source tree" in res.stderr, res.stderr
    [run] = _log(tmp_path)
    argv = run["argv"]
    assert isinstance(argv, list) and argv[1:6] == ["run", "--rm", "--init", "--user", f"{os.getuid()}:{os.getgid()}"]
    vols = [argv[i + 1] for i, a in enumerate(argv) if a == "--volume"]
    cache, out, src = tmp_path / "cache", tmp_path / "out", tmp_path / "src"
    assert f"{src}:{src}:ro" in vols and f"{out}:{out}:rw" in vols
    # the image writes its own dir of the cache, never the host's LLVM cache or build dirs (review)
    own = [v for v in vols if v.endswith(":rw") and v.startswith(f"{cache}/container/")]
    inner_cache = own[0].split(":")[0] + "/cache" if own else ""
    assert len(own) == 1 and f"{cache}:{cache}:rw" not in vols and not any(v.startswith(f"{cache}:") for v in vols)
    assert f"{ROOT / 'tritonbuild'}:{ROOT / 'tritonbuild'}:ro" in vols and "--network=none" in argv
    assert f"{ROOT / 'cmake'}:{ROOT / 'cmake'}:ro" in vols  # a checkout's data sits beside its package
    assert f"{ROOT / 'llvm-hash.txt'}:{ROOT / 'llvm-hash.txt'}:ro" in vols
    named = [argv[i + 1] for i, a in enumerate(argv) if a == "--env" and "=" not in argv[i + 1]]
    assert named == ["MAX_JOBS", "NO_COLOR", "TRITONBUILD_ZIP_LEVEL"]
    inner_env = run["env"]
    assert isinstance(inner_env, dict) and "hunter2" not in json.dumps(run)
    assert inner_env["MAX_JOBS"] == "3" and inner_env["HOME"].startswith(str(cache / "container"))
    cmd = argv[argv.index(IMAGE) + 1:]
    assert cmd[1:4] == ["-m", "tritonbuild", "build"] and cmd[-2:] == ["--container", ""]
    assert cmd[4:] == ["--source", str(src), "--jobs", "2", "--offline", "--cache-dir", inner_cache, "--out", str(out),
                       "--container", ""]
    assert out.is_dir()  # made by the user before the engine ran, not by the engine as root

    env["FAKE_ENGINE_EXIT"] = "7"  # the engine's (the container's) own exit code passes through
    assert _build(tmp_path, env).returncode == 7


@fake_engine
def test_the_first_run_makes_the_venv_and_installs_the_dependencies_once(tmp_path: Path) -> None:
    env = {**_setup(tmp_path), "FAKE_ENGINE_EXIT": "0"}  # recorded, not run: no venv or pip install on this host
    (tmp_path / "wheels").mkdir()
    assert _build(tmp_path, env, "--offline", "--wheelhouse", "wheels").returncode == 0
    steps = [r["argv"] for r in _log(tmp_path)]
    assert len(steps) == 3
    assert isinstance(steps[0], list) and steps[0][-4:-1] == [sys.executable, "-m", "venv"]
    pip = steps[1][steps[1].index(IMAGE) + 1:]  # type: ignore[union-attr]
    assert pip[1:4] == ["-m", "pip", "install"] and "--no-index" in pip
    assert pip[pip.index("--find-links") + 1] == str(tmp_path / "wheels")
    assert set(pip[pip.index("--find-links") + 2:]) == set(dependencies())
    (tmp_path / "engine.log").unlink()
    assert _build(tmp_path, env).returncode == 0
    [again] = [r["argv"] for r in _log(tmp_path)]
    assert isinstance(again, list) and again[again.index(IMAGE) + 2:again.index(IMAGE) + 5] == [
        "-m", "tritonbuild", "build"]


@fake_engine
@pytest.mark.parametrize(("args", "path", "words"), [
    (["--container", "Not An Image"], True, "container image reference"),
    (["--container", IMAGE, "--container-engine", "podman"], True, "podman"),
    (["--container", IMAGE], False, "neither is"),
    (["--container", IMAGE, "--plugin-dir", "missing"], True, "does not exist"),
])
def test_bad_input_exits_2_before_the_engine_runs(tmp_path: Path, args: list[str], path: bool, words: str) -> None:
    env = _setup(tmp_path)
    if not path:
        env["PATH"] = "/nonexistent"
    elif "podman" in args:  # only the fake docker: a podman this machine may have installed is not the one asked
        env["PATH"] = env["PATH"].split(":")[0]
    res = subprocess.run([sys.executable, "-m", "tritonbuild", "build", *args, "--source", "src", "--cache-dir",
                          str(tmp_path / "cache")], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 2 and words in " ".join(res.stderr.split()) and "Traceback" not in res.stderr, res.stderr
    assert _log(tmp_path) == [] and not (tmp_path / "cache").exists() and not (tmp_path / "dist").exists()


def _real_engine() -> tuple[str, str] | str:
    """(engine, image) of a runtime that runs containers here, else why not."""
    image = os.environ.get("TRITONBUILD_TEST_IMAGE", "")
    for name in ("podman", "docker"):
        path = shutil.which(name)
        if path and subprocess.run([path, "info"], capture_output=True, timeout=60, check=False).returncode == 0:
            return (path, image) if image else f"{name} works, but TRITONBUILD_TEST_IMAGE names no image to use"
    return "no container runtime works here (docker has no daemon, podman is not installed)"


def test_a_real_runtime_runs_the_inner_build(tmp_path: Path) -> None:
    found = _real_engine()
    if isinstance(found, str):
        pytest.skip(f"real runtime not tested: {found}; the fake engine's tests ran instead")
    engine, image = found
    (tmp_path / "src").mkdir()
    res = subprocess.run([sys.executable, "-m", "tritonbuild", "build", "--container", image, "--container-engine",
                          Path(engine).name, "--source", "src", "--cache-dir", str(tmp_path / "cache")],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                         timeout=1800, check=False)
    assert res.returncode == 2 and "is not a Triton source tree" in res.stderr, res.stderr


@fake_engine
@pytest.mark.parametrize(("args", "words"), [
    (["--ccache-remote", "file:/home/me/ccache"], "names this host"),
    (["--plugin-dir", "missing"], "does not exist"),
    (["--dep", "googletest=http://127.0.0.1:9/x.git"], "names this host"),  # refused before git reaches it
])
def test_plan_container_refuses_what_build_container_refuses(tmp_path: Path, args: list[str], words: str) -> None:
    """Review 43: `plan --container` printed a plan `build --container` would refuse."""
    env = _setup(tmp_path)
    example.write_tree(tmp_path / "tree")
    for command in ("plan", "build"):
        res = subprocess.run([sys.executable, "-m", "tritonbuild", command, "--container", IMAGE, *args, "--source",
                              "tree", "--cache-dir", str(tmp_path / "cache"), "--llvm", "/usr/lib/llvm-22"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
        assert res.returncode == 2 and words in " ".join(res.stderr.split()), (command, res.stderr)
    assert _log(tmp_path) == []
