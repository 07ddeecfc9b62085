"""``status`` lists develop dirs and ``clean --develop`` / ``clean`` by source remove them with the links develop made
in the checkout, so the checkout is left as it was before develop (#45). Build dirs are made by hand here (what
develop leaves: the marker, plan.json, ``dev/``, the links); the CLI runs in-process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner

from tests.helpers import schema_path
from tritonbuild.cli.main import cli
from tritonbuild.execute import lastrequest
from tritonbuild.system import paths


def _listing(root: Path) -> set[tuple[str, bool]]:
    out = set()
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(here, name)
            out.add((str(p.relative_to(root)), p.is_symlink()))
    return out


def _checkout(base: Path, name: str) -> Path:
    co = base / name
    for d in ("python/triton/_C", "python/triton/backends", "third_party/nvidia/backend"):
        (co / d).mkdir(parents=True)
    (co / "python" / "triton" / "_C" / ".keep").write_text("")
    (co / "CMakeLists.txt").write_text("project(triton)\n")
    return co


def _build_dir(cache: Path, key: str, co: Path, *, develop: bool) -> Path:
    d = cache / "build" / key
    d.mkdir(parents=True)
    (d / paths.BUILD_DIR_MARKER).write_text("")
    plan = {"key": key, "source": {"root": str(co)},
            "backends": [{"name": "nvidia", "origin": "in-tree", "path": str(co / "third_party" / "nvidia")}]}
    (d / "plan.json").write_text(json.dumps(plan))
    (d / "dev" / "canary").mkdir(parents=True)  # build's canary configures <build dir>/dev too: no sign of develop
    if develop:
        lib = d / "dev" / "tritonbuild-stage" / "triton" / "_C"
        lib.mkdir(parents=True)
        (lib / "libtriton.so").write_text("elf")
        (d / "dev" / "compile_commands.json").write_text("[]")
        (co / "compile_commands.json").symlink_to(d / "dev" / "compile_commands.json")
        (co / "python" / "triton" / "_C" / "libtriton.so").symlink_to(lib / "libtriton.so")
        (co / "python" / "triton" / "backends" / "nvidia").symlink_to(co / "third_party" / "nvidia" / "backend")
        (d / lastrequest.IN_BUILD_DIR).write_text(json.dumps(
            {"version": 1, "checkout": str(co), "recipe": None, "flags": {"backends": "nvidia", "jobs": 2}}))
        (d / lastrequest.IN_BUILD_DIR).chmod(0o600)
    return d


def _run(*args: str, cwd: Path, home: Path) -> Any:
    env = {"HOME": str(home), "NO_COLOR": "1", "COLUMNS": "250", "TRITONBUILD_CACHE_DIR": "", "XDG_CACHE_HOME": "",
           "TRITON_HOME": "", "VIRTUAL_ENV": "", "CONDA_PREFIX": ""}
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result


def test_status_lists_develop_dirs_and_clean_develop_leaves_the_checkout_as_it_was(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    co, other = _checkout(tmp_path, "triton"), _checkout(tmp_path, "other")
    before = _listing(co)
    user_link = co / "python" / "triton" / "_C" / "libmine.so"
    dev_a = _build_dir(cache, "a" * 16, co, develop=True)
    wheel_b = _build_dir(cache, "b" * 16, co, develop=False)
    dev_c = _build_dir(cache, "c" * 16, other, develop=True)
    user_link.symlink_to(tmp_path / "mine.so")  # the user's own link: not tritonbuild's
    before.add((str(user_link.relative_to(co)), True))
    status = _run("status", "--json", "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path)
    rows = {r["key"]: r for r in json.loads(status.output)["build_dirs"]}
    assert [rows[d.name]["develop"] for d in (dev_a, wheel_b, dev_c)] == [True, False, True]
    assert rows[dev_a.name]["develop_request"] == "--backends nvidia --jobs 2"
    table = _run("status", "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path).output
    assert "yes: --backends nvidia --jobs 2" in table

    out = _run("clean", "--develop", "--source", str(co), "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path)
    assert out.exit_code == 0, out.output
    assert f"removed {dev_a}" in out.output and "1 build dir(s), freed" in out.output
    assert not dev_a.exists() and wheel_b.is_dir() and dev_c.is_dir()
    assert _listing(co) == before  # develop's links gone, the user's files and link kept
    assert (other / "compile_commands.json").is_symlink()  # another checkout's develop is not touched


def test_clean_in_the_checkout_removes_its_build_dirs_and_all_develop_every_develop_dir(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    co, other = _checkout(tmp_path, "triton"), _checkout(tmp_path, "other")
    dev_a = _build_dir(cache, "a" * 16, co, develop=True)
    wheel_b = _build_dir(cache, "b" * 16, co, develop=False)
    dev_c = _build_dir(cache, "c" * 16, other, develop=True)
    dry = _run("clean", "--dry-run", "--source", str(co), "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path)
    assert "2 build dir(s), would free" in dry.output and dev_a.is_dir() and wheel_b.is_dir()
    out = _run("clean", "--develop", "--all", "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path)
    assert "2 build dir(s), freed" in out.output
    assert not dev_a.exists() and not dev_c.exists() and wheel_b.is_dir()
    assert not (other / "compile_commands.json").is_symlink()
    out = _run("clean", "--source", str(co), "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path)
    assert "1 build dir(s), freed" in out.output and not wheel_b.exists()


def test_a_moved_checkout_or_a_gone_build_dir_leaves_no_link_clean_cannot_remove(tmp_path: Path) -> None:
    # the review of issue 45: after `mv triton triton-moved`, clean found "0 build dir(s)" and git status kept
    # showing develop's links; a dry run did not say which links in the checkout go
    cache = tmp_path / "cache"
    co = _checkout(tmp_path, "triton")
    before = _listing(co)
    dev_a = _build_dir(cache, "a" * 16, co, develop=True)
    dry = _run("clean", "--develop", "--dry-run", "--source", str(co), "--cache-dir", str(cache), cwd=tmp_path,
               home=tmp_path)
    lib = co / "python" / "triton" / "_C" / "libtriton.so"
    assert f"would remove the link {lib} (its build dir is removed with it)" in dry.output, dry.output
    assert f"would remove the link {co / 'compile_commands.json'}" in dry.output and lib.is_symlink()
    moved = co.rename(tmp_path / "triton-moved")
    out = _run("clean", "--source", str(moved), "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path)
    assert "0 build dir(s)" in out.output and dev_a.is_dir()  # another path's build dir: not this checkout's
    assert "(its build dir was made from another path: the checkout was moved)" in out.output, out.output
    assert _listing(moved) == before | {("python/triton/backends/nvidia", True)}  # the 2024 backend link: relative
    dangling = moved / "compile_commands.json"
    dangling.symlink_to(cache / "build" / ("f" * 16) / "dev" / "compile_commands.json")  # its build dir deleted
    mine = moved / "python" / "triton" / "_C" / "libmine.so"
    mine.symlink_to(tmp_path / "elsewhere.so")  # the user's: never touched
    lib = moved / "python" / "triton" / "_C" / "libtriton.so"
    lib.unlink(missing_ok=True)  # the clean above removed the moved checkout's link
    lib.symlink_to(tmp_path / "deleted-cache" / "build" / ("1" * 16) / "dev" / "tritonbuild-stage" / "libtriton.so")
    out = _run("clean", "--source", str(moved), "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path)
    assert f"removed the link {dangling} (its build dir is gone)" in out.output
    assert f"removed the link {lib} (its build dir is gone)" in out.output  # another cache root's, deleted
    assert not dangling.is_symlink() and not lib.is_symlink() and mine.is_symlink()


def test_develop_of_a_patched_copy_removes_the_checkouts_links_into_other_build_dirs(tmp_path: Path) -> None:
    # the review of issue 45: after `develop --patch`, the checkout kept compile_commands.json and _C/libtriton.so
    # links into the unpatched build dir, which the editor and the checkout's code went on using
    from dataclasses import replace

    from tests.helpers import plan_for
    from tritonbuild import example
    from tritonbuild.execute.develop import unlink_from_checkout

    co = example.write_tree(tmp_path / "triton")
    plan = plan_for(co)
    copy = tmp_path / "cache" / "patched" / "0123456789abcdef" / "tree"
    patched = replace(plan, source=replace(plan.source, root=str(copy), checkout=str(co)))
    builds = Path(plan.cache_root) / "build"
    old = _build_dir(Path(plan.cache_root), "e" * 16, co, develop=True)  # the unpatched develop's links
    lib = co / "python" / "triton" / "_C" / "libtriton.so"
    assert lib.is_symlink() and (co / "compile_commands.json").is_symlink()
    notes = unlink_from_checkout(patched)
    assert not lib.is_symlink() and not (co / "compile_commands.json").is_symlink()
    assert len(notes) == 2 and all(f"into build dir {builds / old.name}" in n for n in notes), notes
    assert unlink_from_checkout(plan) == []  # not a patched copy: the checkout's links are its own


def test_status_says_yes_only_for_the_develop_dir_the_checkout_uses_now(tmp_path: Path) -> None:
    # the review of issue 45: after develops with other flags or another Python, status said `yes` for every build
    # dir develop had ever used in the checkout, although the checkout and the venv use only the newest
    cache = tmp_path / "cache"
    co, other = _checkout(tmp_path, "triton"), _checkout(tmp_path, "other")
    earlier = _build_dir(cache, "a" * 16, co, develop=True)
    for p in (co / "compile_commands.json", co / "python" / "triton" / "_C" / "libtriton.so",
              co / "python" / "triton" / "backends" / "nvidia"):
        p.unlink()  # the next develop re-points them
    now = _build_dir(cache, "b" * 16, co, develop=True)
    alone = _build_dir(cache, "c" * 16, other, develop=True)  # another checkout's only develop dir: in use
    wheel = _build_dir(cache, "d" * 16, co, develop=False)
    record = lastrequest.IN_BUILD_DIR
    os.utime(earlier / record, ns=(10**18, 10**18))
    os.utime(now / record, ns=(2 * 10**18, 2 * 10**18))
    status = json.loads(_run("status", "--json", "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path).output)
    jsonschema.validate(status, json.loads(schema_path("status").read_text()))
    rows = {r["key"]: r for r in status["build_dirs"]}
    assert [rows[d.name]["develop_current"] for d in (earlier, now, alone, wheel)] == [False, True, True, False]
    assert [rows[d.name]["develop"] for d in (earlier, now, alone, wheel)] == [True, True, True, False]
    table = _run("status", "--cache-dir", str(cache), cwd=tmp_path, home=tmp_path).output
    lines = {key: line for line in table.splitlines() for key in (earlier.name, now.name) if key in line}
    assert "used before: --backends nvidia --jobs 2" in lines[earlier.name], table
    assert "yes: --backends nvidia --jobs 2" in lines[now.name] and "used before" not in lines[now.name], table
    os.utime(earlier / record, ns=(3 * 10**18, 3 * 10**18))  # a develop with the earlier flags again
    rows = {r["key"]: r for r in json.loads(_run("status", "--json", "--cache-dir", str(cache), cwd=tmp_path,
                                                 home=tmp_path).output)["build_dirs"]}
    assert rows[earlier.name]["develop_current"] and not rows[now.name]["develop_current"]
