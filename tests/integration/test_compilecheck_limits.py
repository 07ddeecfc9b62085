"""The compile check's launch limits through a real Triton: the official wheel, when one is cached here.

Triton raises OutOfResources only when a kernel is launched, so a wheel whose warp-specialized matmuls need more
shared memory than a Hopper has (issue #39: 328248 bytes where the official wheel needs 164216) compiled fine on
a machine without a GPU. These tests compile through the official 3.6.0 wheel (CI downloads none: ~150 MB) one
warp-specialized case that fits and one that cannot (6 stages of 128x256x128 fp16 tiles)."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

import pytest

from tritonbuild.plan import Case, CompileCheckPlan
from tritonbuild.reporter import silent
from tritonbuild.resolve import compilecheck
from tritonbuild.system.archive import extract_zip
from tritonbuild.wheel import compilecheck_run

TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
# where pip's own downloads of it are kept on these machines; TRITONBUILD_OFFICIAL_WHEEL names another
PLACES = ("/opt/pypi/files", "/tmp/off312", "/tmp/off311")


def official_wheel() -> Path | None:
    named = os.environ.get("TRITONBUILD_OFFICIAL_WHEEL")
    if named:
        return Path(named) if Path(named).is_file() else None
    for place in PLACES:
        found = sorted(glob.glob(f"{place}/triton-3.6.0-{TAG}-{TAG}-manylinux*x86_64*.whl"))
        if found:
            return Path(found[0])
    return None


@pytest.fixture(scope="module")
def official_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheel = official_wheel()
    if wheel is None:
        pytest.skip(f"no official triton 3.6.0 {TAG} wheel cached here (looked in {', '.join(PLACES)} and "
                    "TRITONBUILD_OFFICIAL_WHEEL); `pip download --no-deps triton==3.6.0 -d /tmp/off312 "
                    "--only-binary :all:` makes one")
    return extract_zip(wheel, tmp_path_factory.mktemp("official"), f"the official wheel {wheel}")


def _case(kernel: str, label: str) -> Case:
    target = next(t for t in compilecheck.GPU_TARGETS["nvidia"] if t.label == label)
    return Case(f"{kernel}@{label}", kernel, "nvidia", dict(target.spec))


def test_the_official_wheel_fits_a_hopper_and_a_deliberate_excess_is_over_the_limit(official_root: Path) -> None:
    fits, too_big = "ws_matmul_fp16_128x128x128_s2", "ws_matmul_fp16_128x256x128_s6"
    assert fits in compilecheck.WS_KERNELS  # a planned case; the other is no case of the corpus
    plan = CompileCheckPlan(True, 120, (_case(fits, "sm_90a"), _case(too_big, "sm_90a")))
    ok, over = compilecheck_run.run_check(sys.executable, official_root, plan, log=silent)
    assert ok["status"] == "ok", ok
    assert ok["limits_checked"] is True and 100_000 < ok["facts"]["shared"] <= 232448
    assert ok["facts"]["num_warps"] > 4  # warp-specialized: extra warp groups for the producer
    assert over["status"] == "failed" and over["stage"] == "launch limits", over
    shared = over["facts"]["shared"]
    assert shared > 232448
    assert f"needs {shared} bytes of shared memory, sm_90a has 232448" in over["error"]
    message = compilecheck.failure_message([ok, over])
    assert "1 failed and 0 timed out of 2" in message and "OutOfResources at every launch" in message
