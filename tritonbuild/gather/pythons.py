"""Find and probe the interpreters a build is for (edge: looks on PATH and in the usual install places, runs each
interpreter once).

``--python`` takes a path or a version: ``3.12``, ``python3.12``, ``cp312``, and ``3.13t``/``cp313t`` for a
free-threaded build. A version is looked for on PATH (``python3.12``), in manylinux images
(``/opt/python/cp312-cp312/bin/python``), and in pyenv's and uv's install dirs, in that order.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tritonbuild.errors import UserError
from tritonbuild.resolve.facts import PythonFacts
from tritonbuild.settings.model import show, text_problem
from tritonbuild.system import probememo
from tritonbuild.system.proc import Result, run

_VERSION = re.compile(r"(?:python|cp|cpython-?)?(3)\.?([0-9]{1,2})(t?)", re.I)  # fullmatch; [0-9]: \d reads any script

# One run answers everything a plan asks of an interpreter: what it is, and what of the build it has.
# The stat of what decides its answers comes first (what it imports from, its headers), for the memo's key.
_PROBE = (
    "import importlib.util as u, json, os, site, sys, sysconfig\n"
    "inc = sysconfig.get_path('include')\n"
    "def st(p):\n"
    "    try:\n"
    "        s = os.stat(p)\n"
    "    except OSError:\n"
    "        return None\n"
    "    return [s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_mode]\n"
    "user = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []\n"
    "stats = [[p, st(p)] for p in [*map(os.path.abspath, sys.path), inc, os.path.join(inc, 'Python.h'), *user]]\n"
    "def cmake_dir(name, attr):\n"
    "    try:\n"
    "        return str(getattr(__import__(name), attr)()) if u.find_spec(name) else None\n"
    "    except Exception:\n"
    "        return None\n"
    "print(json.dumps({'version': '.'.join(map(str, sys.version_info[:3])), "
    "'implementation': sys.implementation.name, "
    "'free_threaded': bool(sysconfig.get_config_var('Py_GIL_DISABLED')), "
    "'include': inc if os.path.isfile(os.path.join(inc, 'Python.h')) else None, "
    "'executable': sys.executable, 'skbuild': u.find_spec('scikit_build_core') is not None, "
    "'pybind11': cmake_dir('pybind11', 'get_cmake_dir'), 'nanobind': cmake_dir('nanobind', 'cmake_dir'), "
    "'stats': stats}))\n"
)


def places(major: str, minor: str, t: str, env: Mapping[str, str]) -> list[str]:
    """Where an interpreter of that version is looked for, in order."""
    name = f"python{major}.{minor}{t}"
    home = env.get("HOME", "")
    found = [shutil.which(name, path=env.get("PATH")) or ""]
    found.append(f"/opt/python/cp{major}{minor}-cp{major}{minor}{t}/bin/python")
    pyenv = env.get("PYENV_ROOT") or f"{home}/.pyenv"
    found += sorted(glob.glob(f"{glob.escape(pyenv)}/versions/{major}.{minor}*{t}/bin/{name}"), reverse=True)
    uv = env.get("UV_PYTHON_INSTALL_DIR") or f"{home}/.local/share/uv/python"
    found += sorted(glob.glob(f"{uv}/cpython-{major}.{minor}.*{'+freethreaded' if t else ''}-linux-*/bin/{name}"),
                    reverse=True)
    return [p for p in found if p]


def find(spec: str, env: Mapping[str, str], cwd: Path | None = None) -> str:
    """The interpreter ``spec`` names: a path (one with a '/' is relative to ``cwd``, never looked up on PATH), a
    command name on PATH (python3, pypy3), or the first of that version found."""
    problem = text_problem(spec)
    if problem:
        raise UserError(f"The Python {show(spec)} (--python) {problem}.")
    m = _VERSION.fullmatch(spec.strip())
    if m is None and os.sep not in spec and shutil.which(spec, path=env.get("PATH")):
        return str(shutil.which(spec, path=env.get("PATH")))  # a command name: python3, pypy3
    if m is None or os.sep in spec:
        return _given_path(spec, cwd)
    major, minor, t = m.groups()
    candidates = places(major, minor, t, env)
    for candidate in candidates:
        if Path(candidate).is_file() and os.access(candidate, os.X_OK) and not _pyenv_shim(candidate):
            return candidate
    raise UserError(f"No Python {major}.{minor}{t} was found for --python {spec} (looked on PATH for "
                    f"python{major}.{minor}{t}, in /opt/python/cp{major}{minor}-cp{major}{minor}{t}, and in pyenv's "
                    "and uv's install dirs). Install it (uv python install "
                    f"{major}.{minor}{t}; Debian: apt install python{major}.{minor}-dev), or give its path.")


def _pyenv_shim(path: str) -> bool:
    """Whether ``path`` is one of pyenv's shims: a script that runs the version pyenv has active, and fails for any
    other (``python3.12`` is on PATH for every installed 3.12, active or not); the version's own interpreter is in
    pyenv's versions dir, looked in after PATH."""
    try:
        with open(path, "rb") as f:
            head = f.read(1024)
    except OSError:
        return False
    return head.startswith(b"#!") and b"pyenv" in head and b"exec" in head


def _given_path(spec: str, cwd: Path | None) -> str:
    """An interpreter given by its path, made absolute: the runner looks a bare name up on PATH, which is not the
    file the user named."""
    given = Path(spec).expanduser()
    full = given if given.is_absolute() else (cwd or Path.cwd()) / given
    try:
        ok = full.is_file() and os.access(full, os.X_OK)
    except OSError:  # a name too long for the file system, a dir that cannot be searched
        ok = False
    if not ok:
        raise UserError(f"The Python {show(spec)} (--python) is not an executable file ({full}). Give the path of an "
                        "interpreter, or a version such as 3.12, cp312 or 3.13t.")
    return str(full)  # not resolved: a venv's python is a link that must stay the venv's


def probe(path: str, *, require_headers: bool = True) -> PythonFacts:
    """What the interpreter at ``path`` is; refuses one that cannot run or (``require_headers``) has no headers to
    build against."""
    found = _probe(path)
    if found.include is None and require_headers:
        short = ".".join(found.version.split(".")[:2])
        raise UserError(f"The Python {path} ({found.version}) has no headers (Python.h), which the bindings "
                        f"compile against. Install them (Debian/Ubuntu: apt install python{short}-dev) or give "
                        "another interpreter.")
    return found


def _well_formed(data: Any) -> bool:
    """Whether ``data`` is an answer of the probe (a program that is no Python, or a memo, can hold anything)."""
    return isinstance(data, dict) and isinstance(data.get("implementation"), str) and re.match(
        r"[0-9]+\.[0-9]+\.[0-9]+\Z", str(data.get("version"))) is not None and "free_threaded" in data and all(
        isinstance(data.get(k), (str, type(None))) for k in ("include", "pybind11", "nanobind"))


def _memo_key(path: str) -> dict[str, Any]:
    """What decides the probe's answers besides what it stats itself: the interpreter (the link given and the
    file), a venv's pyvenv.cfg, the PYTHON* variables it inherits and the directory it runs in (``-c`` imports from
    it)."""
    here = Path(path).parent
    return {"path": path, "files": probememo.files_key([path, here / "pyvenv.cfg", here.parent / "pyvenv.cfg"]),
            "env": sorted((k, v) for k, v in os.environ.items() if k.startswith("PYTHON")), "cwd": str(Path.cwd())}


def _unchanged(value: Any) -> bool:
    """Whether a remembered answer is well formed and every path it was read from stats as it did then."""
    stats = value["stats"]
    return _well_formed(value["facts"]) and isinstance(stats, list) and 0 < len(stats) <= 256 and all(
        isinstance(p, str) and probememo.file_key(p)[1] == st for p, st in stats)


def _answer(path: str) -> tuple[Result | None, Any]:
    """The probe's JSON answer (None: not one) and its run (None: it came from the memo)."""
    key = _memo_key(path)
    memo = probememo.recall("python", key, _unchanged)
    if memo is not None:
        return None, memo["facts"]
    res = run([path, "-c", _PROBE], timeout=60)
    try:
        data = json.loads(res.stdout.strip().splitlines()[-1]) if res.ok else None
    except (ValueError, IndexError):
        data = None
    if isinstance(data, dict) and isinstance(stats := data.pop("stats", None), list) and _well_formed(data):
        probememo.remember("python", key, {"facts": data, "stats": stats})
    return res, data


@functools.cache
def _probe(path: str) -> PythonFacts:
    """One run of the interpreter per process (a plan asks for the same interpreter several times)."""
    res, data = _answer(path)
    if not _well_formed(data):
        said = (res.output[-300:] if res else "") or "no output"
        raise UserError(f"The Python {path} (--python) does not run ({said}). Give another interpreter.")
    if data["implementation"] != "cpython":
        raise UserError(f"The Python {path} is {data['implementation']}, not CPython: Triton's bindings build "
                        "for CPython only. Give a CPython interpreter.")
    major, minor = data["version"].split(".")[:2]
    return PythonFacts(path=path, version=data["version"], tag=f"cp{major}{minor}",
                       free_threaded=bool(data["free_threaded"]), include=data["include"],
                       has_skbuild=bool(data.get("skbuild")), pybind11_cmake_dir=data.get("pybind11"),
                       nanobind_cmake_dir=data.get("nanobind"))
