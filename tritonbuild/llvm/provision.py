"""Make the plan's LLVM exist before CMake runs: the providers, behind one small Protocol (edge)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from tritonbuild.llvm import cache
from tritonbuild.plan import Plan
from tritonbuild.reporter import Reporter
from tritonbuild.resolve.llvm_requirement import LLVMRequest


class Provider(Protocol):
    """Supplies the pinned LLVM into the cache and returns its prefix."""

    def __call__(self, req: LLVMRequest, reporter: Reporter, env: Mapping[str, str]) -> Path: ...


def _download(req: LLVMRequest, reporter: Reporter, env: Mapping[str, str]) -> Path:
    from tritonbuild.llvm import download  # the HTTP client: only when an LLVM is downloaded (18 ms a build)

    return download.provide(req, reporter, timeout=req.timeout, retries=req.retries)


def _source(req: LLVMRequest, reporter: Reporter, env: Mapping[str, str]) -> Path:
    import shutil

    from tritonbuild.llvm import source_build

    return source_build.provide(req, reporter, ccache=shutil.which("ccache"))


PROVIDERS: dict[str, Provider] = {"download": _download, "source": _source}


def request_from(plan: Plan, **overrides: Any) -> LLVMRequest:
    """What the plan's LLVM provider needs, from the plan (its settings as the plan resolved them: the environment
    is not read again)."""
    s = plan.settings
    req = LLVMRequest(
        llvm_hash=plan.llvm.pinned_hash, build_number=plan.llvm.build_number, sha256=dict(plan.llvm.sha256),
        suffix=plan.llvm.host_suffix, targets=plan.llvm.required_targets, cache_root=Path(plan.cache_root),
        mirror=s.llvm_mirror, allow_unpinned=s.allow_unpinned, offline=plan.toolchain.offline, llvm_src=s.llvm_src,
        assertions=s.llvm_assertions, retries=s.http_retries, timeout=s.http_timeout, deadline=s.http_deadline,
        min_rate=s.http_min_rate, max_bytes=s.http_max_bytes,
    )
    return dataclasses.replace(req, **overrides)


def needs_provisioning(plan: Plan) -> bool:
    return plan.llvm.strategy in PROVIDERS and not cache.current(Path(plan.llvm.prefix or "/nonexistent"),
                                                                 plan.llvm.sha256)


def ensure(plan: Plan, reporter: Reporter, env: Mapping[str, str]) -> Path | None:
    """Run the plan's provider when its LLVM is not in the cache yet."""
    if not needs_provisioning(plan):
        return None
    return PROVIDERS[plan.llvm.strategy](request_from(plan), reporter, env)
