"""What a build imports before ninja starts (#45): the modules packaging, the SBOM, the checks and publishing need
(cyclonedx, in-toto's protobuf, pyelftools) and the LLVM download's HTTP client are not imported by the build's
own modules, so that ``buildrun.warm_imports`` can take them on a thread while ninja compiles (0.1-0.15 s off an edit
build). A module list, not a timing: it fails when a top-level import puts one back on the critical path."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("cyclonedx", "google.protobuf", "elftools", "http.client", "tritonbuild.wheel.sbom_write",
         "tritonbuild.wheel.publish", "tritonbuild.llvm.download")


def _imported(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys; print('\\n'.join(sys.modules))"],
                          capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_the_build_path_leaves_the_heavy_imports_for_the_thread() -> None:
    before = _imported("import tritonbuild.cli.build, tritonbuild.execute.build, tritonbuild.execute.runs, "
                       "tritonbuild.llvm.provision, tritonbuild.execute.strategies")
    assert "tritonbuild.execute.buildrun" in before  # the listing is what it seems
    assert not [m for m in HEAVY if m in before]
    warmed = _imported("from tritonbuild.execute.buildrun import warm_imports\nwarm_imports().join()")
    assert all(m in warmed for m in HEAVY if m not in ("http.client", "tritonbuild.llvm.download"))
