"""The import check. At build time: the wheel's triton imported by each of the plan's interpreters from the
unpacked wheel (catches a libtriton that aborts at import). In ``verify``: the wheel installed in a fresh venv and
imported there with the build's LLVM prefix hidden (a private mount namespace, ``tritonbuild.wheel.hide``), which
must discover the backends the provenance (else the entry points) names.

The wheel's code runs under ``tritonbuild.wheel.reaper``: for at most the compile check's time limit (``verify
--compile``; ``IMPORT_FLOOR`` seconds at least), else ``IMPORT_TIMEOUT`` seconds, with its output in files rather
than pipes, and every process it starts (one that calls setsid and forks included) killed when it ends. A slow
import is a FAIL row, never a hang; the venv of an import that failed is removed, so ``--compile`` does not run
the wheel's code again."""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tritonbuild.printable import printable, shorten
from tritonbuild.system import proc
from tritonbuild.wheel import reaper, zipguard
from tritonbuild.wheel.checks.backends import listed
from tritonbuild.wheel.checks.base import BuildSide, Context, Finding, dist_info, status

# The target interpreter's environment may hold an editable install of Triton (tritonbuild's develop, setuptools'
# or scikit-build-core's editable finders, loaded from a .pth): its meta-path finder would import the checkout, not
# the unpacked wheel on PYTHONPATH. Only the interpreter's own finders are kept, and the import must come from there.
OWN_FINDERS = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
               "if getattr(f, '__module__', '').startswith('_frozen_importlib')]; ")
SMOKE = (OWN_FINDERS + "import os, triton, triton._C.libtriton as lt; "
         "root = os.path.realpath(os.environ['PYTHONPATH'].split(os.pathsep)[0]); "
         "where = os.path.realpath(triton.__file__); "
         "assert where.startswith(root + os.sep), f'triton imports from {where}, not the wheel under {root}'; "
         "print('smoke ok', triton.__file__)")
DISCOVER = "import json, triton; from triton.backends import backends; print(json.dumps(sorted(backends)))"
IMPORT_TIMEOUT = 300  # seconds verify's import may take without --compile
IMPORT_FLOOR = 60  # with it: --compile-timeout, but no less than this (compilecheck_run gives an import as long)


def _smoke(build: BuildSide, python: str, scratch: Path) -> Finding:
    """The wheel's triton and libtriton imported by ``python`` from the build's unpacked wheel, under the reaper
    (every process the import starts, detached ones too, is stopped when it ends; its output kept in
    ``scratch``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(build.root)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # none left in a quick rebuild's prefix (the compile check writes none)
    res = reaper.run([python, "-c", SMOKE], cwd=Path(build.plan.cmake.build_dir), scratch=scratch, timeout=300,
                     env=env)
    build.log.write(f"$ smoke test: {python} -c {SMOKE!r}\n{res.stdout}{res.stderr}\n")
    if res.ok:
        return Finding("import", "ok", f"{python} imports triton")
    hint = ""
    if "registered more than once" in res.stderr:
        hint = (" libtriton carries two copies of LLVM (a shared libLLVM plus static LLVM libraries); "
                "tritonbuild's LLVM_LINK_LLVM_DYLIB fix was not applied to this build.")
    said = (res.stderr or res.stdout).strip()
    return Finding("import", "fail", f"{python} does not import triton (exit code {res.returncode})",
                   message=f"The built wheel does not import with {python} (exit code {res.returncode}).{hint} The "
                   "wheel was not written to the output dir.",
                   tail="\n".join(shorten(line, 1000) for line in said.splitlines()[-8:]))


def hidden_paths(prefix: str | None) -> list[str]:
    """What to hide from the import test: the build's LLVM prefix, and the files its lib/ links point to outside
    it (Debian's /usr/lib/llvm-22/lib/libLLVM.so.22.1 is a link into /usr/lib/x86_64-linux-gnu)."""
    if not prefix or not Path(prefix).is_absolute() or not Path(prefix).is_dir():
        return []
    root = Path(prefix).resolve()
    if root == Path("/"):
        return []
    out = [str(root)]
    for lib in sorted((root / "lib").glob("lib*.so*")):
        real = lib.resolve()
        if real.is_file() and not real.is_relative_to(root) and str(real) not in out:
            out.append(str(real))
    return out


def _hiding(argv: list[str], hide: list[str], tmp: Path) -> tuple[list[str], str | None]:
    """``argv`` run in a private mount namespace with an empty dir (or file) mounted over each hidden path
    (``tritonbuild.wheel.hide``: argument lists, no shell); or the reason that cannot be done here."""
    unshare = proc.tool("unshare")
    if unshare is None:
        return argv, "unshare (util-linux) is not installed"
    (tmp / "empty-dir").mkdir(exist_ok=True)
    (tmp / "empty-file").touch()
    flags = ["--mount"] if hasattr(os, "geteuid") and os.geteuid() == 0 else ["--mount", "--map-root-user"]
    hider = [unshare, *flags, sys.executable, "-m", "tritonbuild.wheel.hide", str(tmp / "empty-dir"),
             str(tmp / "empty-file"), *hide, "--"]
    probe = proc.run(hider, cwd=tmp)
    if not probe.ok:
        why = (probe.output.splitlines() or [f"exit code {probe.returncode}"])[-1]
        return argv, f"cannot mount over the LLVM prefix here ({why})"
    return [*hider, *argv], None


def _discovered(stdout: str) -> list[str] | None:
    """The backend list the import test printed last, or None when it printed something else."""
    lines = stdout.strip().splitlines()
    try:
        found = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    return found if isinstance(found, list) and all(isinstance(x, str) for x in found) else None


def venv_of(ctx: Context) -> Path:
    """Where ``verify``'s import check installs the wheel (the compile check then compiles in it)."""
    return ctx.tmp / "venv"


def _imported(ctx: Context, argv: list[str], hidden: str) -> Finding:
    """The import run under the reaper, judged: the backends it discovered, or why it failed."""
    limit = max(ctx.compile_timeout, IMPORT_FLOOR) if ctx.compile_timeout else IMPORT_TIMEOUT
    res = reaper.run(argv, cwd=ctx.tmp, scratch=ctx.tmp, timeout=limit)
    left = (f"; stopped {res.stopped} process{'es' if res.stopped != 1 else ''} it left running"
            if res.stopped else "")
    found = _discovered(res.stdout) if res.ok else None
    if res.timed_out:
        return Finding("import", "fail", f"fresh venv{hidden}: the import did not finish in {limit} s (stopped, "
                       f"with every process it started){left}")
    if not res.ok or found is None:
        last = (res.stderr.strip().splitlines() or ["printed no backend list" if res.ok else "no output"])[-1]
        return Finding("import", "fail", f"fresh venv{hidden}: {last[-400:]}{left}")
    return Finding("import", status(found == ctx.expected_backends),
                   f"fresh venv{hidden} discovers {listed(found)}{left}")


def _requires(ctx: Context) -> list[Any]:
    """The wheel's Requires-Dist that parse (of its first 200) and apply here: markers taken in this interpreter's
    environment, no extra; one whose marker cannot be evaluated is left out. [] when METADATA has none or cannot be
    read."""
    from email.parser import HeaderParser

    from packaging.markers import UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement, Requirement

    name = dist_info(ctx.zf, "METADATA")
    try:
        lines = HeaderParser().parsestr(zipguard.read_text(ctx.zf, name)).get_all("Requires-Dist") if name else None
    except zipguard.BadWheel:
        return []
    out = []
    for line in (lines or [])[:200]:
        try:
            req = Requirement(str(line))
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                out.append(req)
        except (InvalidRequirement, UndefinedComparison, UndefinedEnvironmentName, ValueError):
            continue
    return out


def requirements(ctx: Context) -> list[str]:
    """The names of the wheel's Requires-Dist that apply here (``_requires``), at most 20, printable."""
    out: list[str] = []
    for req in _requires(ctx):
        if printable(req.name) not in out:
            out.append(printable(req.name))
    return out[:20]


def _install_args(ctx: Context) -> tuple[list[list[str]], list[str]]:
    """pip's arguments: the installs before the wheel's and the wheel's. The wheel is installed alone (its
    Requires-Dist are hostile text: a ``name @ URL`` one would make pip fetch the URL, or build a source tree,
    whatever the index options say); with ``--wheelhouse``, first its Requires-Dist that name no URL, from there
    (wheels only, no index), each as ``packaging`` writes it (a name, extras, versions, a marker: no path)."""
    wheel = ["--isolated", "--no-index", "--no-deps", str(ctx.wheel.resolve())]  # no PIP_* variable, no pip.conf
    specs = [str(r) for r in _requires(ctx) if r.url is None] if ctx.wheelhouse is not None else []
    specs = [s for s in specs if len(s) <= 500][:100]
    if not specs:
        return [], wheel
    return [["--isolated", "--no-index", "--find-links", str(ctx.wheelhouse), "--only-binary", ":all:", *specs]], wheel


def _fresh_venv(ctx: Context, python: str) -> list[Finding]:
    venv, (before, install) = venv_of(ctx), _install_args(ctx)
    (ctx.tmp / "pip").mkdir(exist_ok=True)  # pip's cwd: empty, so no requirement names a file there
    error = proc.venv_with(python, venv, install, before=before, cwd=ctx.tmp / "pip")
    if error:
        return [Finding("import", "fail", error[-400:])]
    prefix = ctx.info.llvm_prefix if ctx.info else None
    hide = hidden_paths(prefix)
    argv = [str(venv / "bin" / "python"), "-c", DISCOVER]
    if hide:
        argv, why_not = _hiding(argv, hide, ctx.tmp)
    else:
        why_not = (f"the wheel's LLVM prefix {prefix} is not on this machine, nothing to hide" if prefix else
                   "no LLVM prefix recorded in the wheel")
    found = _imported(ctx, argv, f" with {hide[0]} hidden" if why_not is None else "")
    if found.status == "fail":  # --compile would run the code of a wheel that does not import again
        shutil.rmtree(venv, ignore_errors=True)
        needs = requirements(ctx) if ctx.wheelhouse is None else []
        if needs:
            found = replace(found, text=f"{found.text} (the wheel requires {', '.join(needs)} (Requires-Dist), which "
                            "the venv installs only with --wheelhouse DIR, a dir of their wheels: pip download -d "
                            f"DIR {' '.join(needs)})")
    return [found] + ([Finding("hidden-llvm", "skip", why_not)] if why_not else [])


class Import:
    name = "import"
    runs_wheel_code = True  # not run after an integrity check failed (registry.run)

    def applies(self, ctx: Context) -> bool:
        return ctx.build is not None or ctx.python is not None

    def run(self, ctx: Context) -> list[Finding]:
        if ctx.build is None:
            return _fresh_venv(ctx, ctx.python or sys.executable)
        out = []
        for python in (ctx.build.plan.python, *ctx.build.plan.serves):
            out.append(_smoke(ctx.build, python, ctx.tmp))
            if out[-1].status == "fail":
                break
        return out
