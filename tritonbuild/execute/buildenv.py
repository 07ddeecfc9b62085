"""An isolated build environment for the target interpreter (edge: makes venvs, runs pip).

scikit-build-core runs inside the interpreter the wheel is for, so ``--python /usr/bin/python3.12`` used to need
scikit-build-core installed there, and failed in configure when it was not. Like pip's build isolation, a target
interpreter that lacks the build requirements gets a venv of its own under ``<cache>/buildenv/``, made with
``--without-pip`` (Debian's and Ubuntu's Pythons may lack ensurepip) and filled by tritonbuild's own pip: from
the package index, or from a wheelhouse dir (``--wheelhouse``) offline. The venv's interpreter has the target's
version and ABI, so the wheel's tag is the target's; the smoke import and the compile check still run with the
target interpreter itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

from tritonbuild import proc
from tritonbuild.errors import EnvironmentProblem
from tritonbuild.execute.staging import SKBUILD_MINIMUM_VERSION

# The build requirements tritonbuild's staging pyproject needs (the binding library follows the tree's own pins).
BASE_REQUIREMENTS = (f"scikit-build-core>={SKBUILD_MINIMUM_VERSION}",)
BINDINGS = re.compile(r"^\s*(pybind11|nanobind)\b")


def requirements(tree_build_requires: tuple[str, ...]) -> tuple[str, ...]:
    """scikit-build-core, and the binding library at the version the tree's pyproject.toml asks for (pybind11 when
    the tree names none)."""
    bindings = tuple(r for r in tree_build_requires if BINDINGS.match(r))
    return BASE_REQUIREMENTS + (bindings or ("pybind11>=2.13",))


def has_requirements(python: str, reqs: tuple[str, ...] = (*BASE_REQUIREMENTS, "pybind11")) -> bool:
    """The interpreter can build by itself: it imports scikit-build-core and the tree's binding library."""
    modules = ["scikit_build_core", *(m.group(1) for r in reqs if (m := BINDINGS.match(r)))]
    if python == sys.executable:
        import importlib.util

        return all(importlib.util.find_spec(m) is not None for m in modules)
    return proc.run([python, "-c", f"import {', '.join(modules)}"], timeout=60).ok


def ensure(python: str, reqs: tuple[str, ...], cache_root: Path, *, offline: bool, wheelhouse: str | None) -> str:
    """The interpreter to run scikit-build-core with: ``python`` itself when it has what the build needs, else an
    isolated venv of it with ``reqs`` installed (made once, reused while the interpreter and ``reqs`` stay)."""
    if has_requirements(python, reqs):
        return python
    real = os.path.realpath(python)
    key = hashlib.sha256(json.dumps([real, list(reqs)]).encode()).hexdigest()[:16]
    root = cache_root / "buildenv" / key
    ready = root / ".tritonbuild-ready"
    venv_python = root / "bin" / "python"
    if ready.is_file() and venv_python.exists():
        return str(venv_python)
    if offline and not wheelhouse:
        raise EnvironmentProblem(
            f"The Python {python} lacks the build requirements ({', '.join(reqs)}) and this build is offline: "
            f"install them into it, or pass --wheelhouse DIR with their wheels (pip download {' '.join(reqs)} -d DIR "
            "on a connected machine).")
    shutil.rmtree(root, ignore_errors=True)  # a half-made env from an interrupted run
    where = (["--no-index", "--find-links", wheelhouse] if wheelhouse else [])
    error = proc.venv_with(python, root, [*where, *reqs], timeout=900)
    if error:
        shutil.rmtree(root, ignore_errors=True)
        raise EnvironmentProblem(f"Making a build environment with {', '.join(reqs)} for {python} failed: {error}")
    ready.write_text(json.dumps({"python": real, "requirements": list(reqs)}) + "\n")
    return str(venv_python)
