"""``tritonbuild selftest``: build the bundled example tree offline, import it, and lower a kernel to SPIR-V
(edge: writes the cache, builds, runs the wheel's Python)."""

from __future__ import annotations

import errno
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from tritonbuild import __version__
from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.system import proc

if TYPE_CHECKING:
    from tritonbuild.execute.runs import Shows
    from tritonbuild.reporter import Reporter

# Runs in the wheel's own files: the spirv backend's stages, as Triton's compiler drives them.
_SPIRV = """
import sys
from triton.backends import backends
compiler = backends["spirv"].compiler(None)
stages, metadata, src = {}, {}, "vector_add:fp32"
compiler.add_stages(stages, {}, "ttir")
for stage in stages.values():
    src = stage(src, metadata)
open(sys.argv[1], "wb").write(src)
print(",".join(stages))
"""


def spirv_check(python: str, wheel: Path, env: Mapping[str, str]) -> str:
    """Compile a vector add through the wheel's spirv backend (ttir -> llir -> spv) and validate the binary with
    spirv-val when it is installed; one line saying what happened (raises on a failure). ``env``: the request's
    environment (its PYTHON* variables left out)."""
    from tritonbuild.errors import BuildFailed

    with tempfile.TemporaryDirectory(prefix="tritonbuild-selftest-") as tmp:
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(tmp)
        spv = Path(tmp) / "add_kernel.spv"
        child = {**{k: v for k, v in env.items() if not k.startswith("PYTHON")}, "PYTHONPATH": tmp}
        res = proc.run([python, "-c", _SPIRV, str(spv)], cwd=tmp, env=child, timeout=300)
        if not res.ok:
            raise BuildFailed("The example wheel's spirv backend did not compile a vector add to SPIR-V.",
                              tail=res.output[-2000:])
        size = spv.stat().st_size
        if proc.tool("spirv-val") is None:
            return f"{res.stdout.strip()}: {size} bytes of SPIR-V (spirv-val not installed: Debian spirv-tools)"
        val = proc.run(["spirv-val", str(spv)], timeout=60)
        if not val.ok:
            raise BuildFailed("spirv-val rejects the SPIR-V the example's spirv backend emitted.", tail=val.output)
        return f"{res.stdout.strip()}: {size} bytes of SPIR-V, spirv-val: valid"


def run(out: str, cache_dir: str | None, llvm: str | None, *, env: Mapping[str, str], cwd: Path,
        reporter: Reporter, shows: Shows) -> str:
    """Write the example tree, build it through the request path (``run_builds``, as ``build`` does, saying it to
    ``reporter``, its plan and summary through ``shows``), then import the wheel and compile with its spirv backend:
    what ``spirv_check`` says. ``env``, ``cwd``: the command line's (``Request``'s)."""
    from tritonbuild import example as ex
    from tritonbuild.execute.runs import run_builds
    from tritonbuild.gather.request import Request, make_plan
    from tritonbuild.settings import cacheroot

    root = cacheroot.cache_root(env, cache_dir) / "selftest" / __version__
    try:
        shutil.rmtree(root, ignore_errors=True)
        tree = ex.write_tree(root / "triton")
        plugin = ex.write_plugin(root / "triton-shared", "triton_shared")
        abi = ex.write_spirv_abi(root / "spirv-kernel-abi")
    except OSError as exc:  # a cache root that is a file, or not this user's
        bad = UserError if exc.errno in (errno.ENOTDIR, errno.EEXIST) else EnvironmentProblem
        raise bad(f"Cannot write the self-test's example tree under {root}: {exc.strerror or exc} "
                  f"({exc.filename}). Pass --cache-dir with a directory this user can write.") from None
    # the host's own LLVM unless told otherwise, and offline: a self-test needs no network (CUDA/CUPTI files
    # come from a toolkit when there is one, else the wheel notes what it lacks; spirv's download from --dep)
    request = Request({"source": str(tree), "backends": "nvidia;amd;spirv", "plugin_dirs": (str(plugin),),
                       "llvm": llvm or "system", "offline": True, "deps": (f"spirv-kernel-abi={abi}",)},
                      env, cwd, cache_dir=cache_dir, out=out, warn=reporter.warn)
    p = make_plan(request)
    [result] = run_builds([p], reporter, shows, env=request.env, smoke=request.smoke_test)
    return spirv_check(p.python, result.wheel, request.env)
