"""Finding and probing target interpreters: paths, versions in the usual install places, and refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tritonbuild.errors import UserError
from tritonbuild.gather import pythons


def link(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(sys.executable)
    return path


def test_a_version_is_found_on_path_then_pyenv_then_uv(tmp_path: Path) -> None:
    home = tmp_path / "home"
    uv = link(home / ".local/share/uv/python/cpython-3.12.9-linux-x86_64-gnu/bin/python3.12")
    env = {"HOME": str(home), "PATH": str(tmp_path / "empty")}
    assert pythons.find("3.12", env) == str(uv)
    pyenv = link(home / ".pyenv/versions/3.12.3/bin/python3.12")
    assert pythons.find("cp312", env) == str(pyenv)
    on_path = link(tmp_path / "bin" / "python3.12")
    assert pythons.find("python3.12", {**env, "PATH": str(tmp_path / "bin")}) == str(on_path)


def test_free_threaded_versions_look_for_their_own_names(tmp_path: Path) -> None:
    home = tmp_path / "home"
    link(home / ".pyenv/versions/3.13.1/bin/python3.13")
    free = link(home / ".local/share/uv/python/cpython-3.13.1+freethreaded-linux-x86_64-gnu/bin/python3.13t")
    assert pythons.find("3.13t", {"HOME": str(home), "PATH": ""}) == str(free)


def test_a_missing_version_or_path_is_refused_with_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"No Python 3.14 was found .*python3.14.*/opt/python/cp314-cp314.*uv python "
                                        r"install 3.14"):
        pythons.find("3.14", {"HOME": str(tmp_path), "PATH": str(tmp_path)})
    with pytest.raises(UserError, match="is not an executable file"):
        pythons.find(str(tmp_path / "nope" / "python"), {})


def test_a_pyenv_shim_on_path_does_not_stop_the_search(tmp_path: Path) -> None:
    """pyenv puts ``python3.12`` on PATH for every installed 3.12; run while another version is active, the shim
    fails ("pyenv: python3.12: command not found"): the version's own interpreter is taken instead."""
    home = tmp_path / "home"
    shims = home / ".pyenv/shims"
    shims.mkdir(parents=True)
    shim = shims / "python3.12"
    shim.write_text('#!/usr/bin/env bash\nset -e\nexport PYENV_ROOT="/root/.pyenv"\n'
                    'exec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"\n')
    shim.chmod(0o755)
    real = link(home / ".pyenv/versions/3.12.1/bin/python3.12")
    assert pythons.find("3.12", {"HOME": str(home), "PATH": str(shims)}) == str(real)
    assert pythons.find(str(shim), {"HOME": str(home), "PATH": ""}) == str(shim)  # a path given is taken as given
