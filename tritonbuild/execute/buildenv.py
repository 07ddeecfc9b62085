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

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.execute.staging import SKBUILD_MINIMUM_VERSION
from tritonbuild.gather import pythons
from tritonbuild.plan import Plan
from tritonbuild.system import proc

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
    bindings = [m.group(1) for r in reqs if (m := BINDINGS.match(r))]
    if python == sys.executable:
        import importlib.util

        return all(importlib.util.find_spec(m) is not None for m in ("scikit_build_core", *bindings))
    try:
        found = pythons.probe(python, require_headers=False)
    except UserError:
        return False
    dirs = {"pybind11": found.pybind11_cmake_dir, "nanobind": found.nanobind_cmake_dir}
    return found.has_skbuild and all(dirs[b] for b in bindings)


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


def build_env_args(plan: Plan) -> tuple[tuple[str, ...], str | None]:
    """The build requirements of the source, and the wheelhouse to install them from (None: the index)."""
    from tritonbuild.settings.model import Settings

    wheelhouse = Settings.of_report(plan.settings).wheelhouse
    return requirements(plan.source.build_requires), (str(wheelhouse) if wheelhouse else None)


def build_python_note(plan: Plan) -> str | None:
    """What ``build`` will do about a target interpreter without the build requirements (a note for ``plan``);
    refuses up front when it cannot do anything (offline without a wheelhouse)."""
    reqs, wheelhouse = build_env_args(plan)
    if has_requirements(plan.python, reqs):
        return None
    if plan.toolchain.offline and not wheelhouse:
        raise UserError(f"The Python {plan.python} lacks the build requirements ({', '.join(reqs)}) and this build "
                        f"is offline: install them into it ({plan.python} -m pip install {' '.join(reqs)}), or pass "
                        "--wheelhouse DIR with their wheels.")
    source = f"from {wheelhouse}" if wheelhouse else "from the package index"
    return (f"{plan.python} lacks {', '.join(reqs)}: the build runs scikit-build-core in an isolated environment "
            f"of it under {Path(plan.cache_root) / 'buildenv'} ({source}, made once); the wheel is tagged and "
            f"imported with {plan.python} itself")
