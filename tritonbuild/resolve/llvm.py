"""Which LLVM a plan uses (pure): an explicit prefix, a cached LLVM at the pin, the verified prebuilt, a system
LLVM (not the pin: a warning), or a problem that says what to run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from tritonbuild.errors import UserError
from tritonbuild.plan import LLVMPlan
from tritonbuild.printable import printable, quoted
from tritonbuild.redact import redact_text
from tritonbuild.resolve.facts import Facts, LLVMInstall
from tritonbuild.resolve.llvm_requirement import (
    PREBUILT_TARGETS,
    LLVMRequest,
    check,
    host_suffix,
    is_pinned,
    source_entry,
)
from tritonbuild.resolve.source import SourceInfo
from tritonbuild.settings.model import LLVM_STRATEGIES, Settings
from tritonbuild.urls import url_problem


class DownloadBlock(StrEnum):
    """Why the prebuilt download cannot supply a plan's LLVM: the code remedies are chosen by."""

    OFFLINE = "offline"
    NO_PLATFORM = "no-platform"
    TARGETS = "targets"
    UNPINNED = "unpinned"


class Blocker(str):
    """The words of a ``DownloadBlock`` (it is them, as a str, where the plan lists the candidates not taken), with
    its ``code``: a remedy is chosen by the code, never by searching the words."""

    code: DownloadBlock

    def __new__(cls, code: DownloadBlock, words: str) -> Blocker:
        made = super().__new__(cls, words)
        made.code = code
        return made

    def __deepcopy__(self, memo: object) -> Blocker:
        return self  # immutable, as a str: ``dataclasses.asdict`` copies the plan's values

    def __reduce__(self) -> tuple[type[Blocker], tuple[DownloadBlock, str]]:
        return Blocker, (self.code, str(self))


def _download_blocker(s: Settings, facts: Facts, targets: tuple[str, ...], suffix: str | None) -> Blocker | None:
    """Why the prebuilt download cannot supply this plan's LLVM, or None when it can."""

    pin = facts.source.pin
    if s.offline:
        return Blocker(DownloadBlock.OFFLINE, "offline (TRITON_OFFLINE_BUILD/--offline)")
    if not suffix:
        return Blocker(DownloadBlock.NO_PLATFORM, "no prebuilt LLVM for this platform")
    extra = [t for t in targets if t not in PREBUILT_TARGETS]
    if extra:
        return Blocker(DownloadBlock.TARGETS, "prebuilt LLVMs hold only the host, NVPTX and AMDGPU targets; this "
                       f"plan also needs {', '.join(extra)}")
    if suffix not in pin.sha256 and not s.allow_unpinned:
        return Blocker(DownloadBlock.UNPINNED, f"the pin ({Path(pin.path).name}) has no sha256 for {suffix}, so a "
                       "download cannot be verified (--allow-unpinned accepts it)")
    return None


def _download_refusal(short: str, blocker: str, targets: tuple[str, ...], users: Mapping[str, tuple[str, ...]],
                      root: str) -> str:
    """Why the prebuilt cannot serve, and what to do instead: for missing targets, which backends need them, the
    prebuilt for the others, or a source build with all of them."""

    extra = [t for t in targets if t not in PREBUILT_TARGETS]
    if not extra:
        return (f"--llvm download cannot supply LLVM {short}: {blocker}. Use --llvm system, --llvm source or "
                "--llvm PREFIX.")
    needing = [n for n, ts in users.items() if set(ts) & set(extra)]
    others = ";".join(n for n in users if n not in needing)
    fetch = (f"`tritonbuild llvm fetch --source {quoted(root)} --backends '{others}'` fetches the prebuilt for the "
             "other backends; " if others else "")
    who = ", ".join(needing) or "this plan"
    return (f"The prebuilt LLVM {short} holds only the host, NVPTX and AMDGPU targets, and {who} also needs "
            f"{', '.join(extra)}. {fetch}`tritonbuild llvm build --source {quoted(root)} --backends "
            f"'{';'.join(users)}'` "
            "builds the pinned LLVM with every target this plan needs (hours on 2 cores).")


@dataclass(frozen=True)
class _Pick:
    """What one candidate of the chain supplies: an installed LLVM, or a prefix a provider will fill."""

    strategy: str
    chosen: LLVMInstall | None = None
    prefix: str | None = None
    pinned: bool | None = None


def resolve_llvm(
    s: Settings, facts: Facts, targets: tuple[str, ...],
    need_lld: bool = True, users: Mapping[str, tuple[str, ...]] | None = None,
) -> LLVMPlan:
    """auto: an explicit prefix, else a cached LLVM at the pinned commit, else the prebuilt download, else a
    system LLVM (with a warning that it is not the pinned commit), else a problem that says what to run."""
    suffix = host_suffix(facts.host, s.llvm_system_suffix)
    choice = s.llvm
    rejected: list[tuple[str, str]] = []
    pick = ((_explicit(s, facts, targets, need_lld) if choice not in STRATEGIES else None)
            or (_first_usable(facts.llvm_cached, "cached", targets, need_lld, rejected, facts.llvm_stale)
                if choice == "auto" else None)
            or (_download(s, facts, targets, suffix, users or {}, rejected) if choice in ("auto", "download")
                else None)
            or (_from_source(s, facts, targets) if choice == "source" else None)
            or (_first_usable(facts.llvm_system, "system", targets, need_lld, rejected)
                if choice in ("auto", "system") else None))
    problem = None if pick else _no_llvm(facts, targets, rejected)
    return _llvm_plan(facts, suffix, targets, need_lld, pick or _Pick("none"), problem, rejected)


STRATEGIES = LLVM_STRATEGIES  # the words --llvm takes besides a prefix (settings.model)


def _explicit(s: Settings, facts: Facts, targets: tuple[str, ...], need_lld: bool) -> _Pick:
    inst = facts.llvm_explicit
    assert inst is not None, "facts.gather probes an explicit LLVM prefix"
    why = check(inst, targets, need_lld)
    if why:
        raise UserError(
            f"The LLVM at {inst.prefix} (from {s.origin('llvm')}) cannot build this plan: {why}. Point "
            f"--llvm/LLVM_SYSPATH at an LLVM prefix with MLIR{' and LLD' if need_lld else ''}, or run "
            "`tritonbuild llvm status`."
        )
    return _Pick("prefix", inst)


def _first_usable(candidates: Sequence[LLVMInstall], strategy: str, targets: tuple[str, ...], need_lld: bool,
                  rejected: list[tuple[str, str]], stale: Sequence[tuple[str, str]] = ()) -> _Pick | None:
    """The first candidate that can build the plan; the others are recorded with why not."""
    rejected.extend(stale)
    for inst in candidates:
        why = check(inst, targets, need_lld)
        if not why:
            return _Pick(strategy, inst)
        rejected.append((inst.prefix, why))
    return None


def _download(s: Settings, facts: Facts, targets: tuple[str, ...], suffix: str | None,
              users: Mapping[str, tuple[str, ...]], rejected: list[tuple[str, str]]) -> _Pick | None:
    pin = facts.source.pin
    blocker = _download_blocker(s, facts, targets, suffix)
    if blocker is None:
        entry = Path(facts.cache_root) / "llvm" / pin.archive_name(suffix or "").removesuffix(".tar.gz")
        return _Pick("download", prefix=str(entry), pinned=True)
    if s.llvm == "download":
        raise UserError(_download_refusal(pin.short, blocker, targets, users, facts.source.root))
    rejected.append(("prebuilt download", blocker))
    return None


def _from_source(s: Settings, facts: Facts, targets: tuple[str, ...]) -> _Pick:
    pin = facts.source.pin
    entry = source_entry(LLVMRequest(pin.llvm_hash, None, {}, None, targets, Path(facts.cache_root), "",
                                     assertions=s.llvm_assertions))
    built = any(Path(i.prefix) == entry for i in facts.llvm_cached)  # the build will not check anything out
    check_llvm_src(s.llvm_src, s.origin("llvm_src"), facts.llvm_src_kind, s.offline and not built)
    return _Pick("source", prefix=str(entry), pinned=True)


def check_llvm_src(url: str | None, origin: str, kind: str | None, offline: bool) -> None:
    """Refuse at plan time an --llvm-src the source build would refuse (``llvm.source_build.checkout``): a local
    path must be a directory; anything else must be a git URL tritonbuild clones, and nothing is cloned offline.
    ``offline``: offline and the pinned LLVM not built in the cache yet (a checkout is needed)."""
    shown = redact_text(repr(url))  # a URL's password is never printed
    where = f"--llvm-src {shown} (from {origin})"
    if url is not None and kind is None and (why := url_problem(url)):
        raise UserError(f"{where} is neither a local directory nor a git URL tritonbuild clones: {why}. Give the "
                        "path of a local llvm-project clone, or an https://, ssh://, git:// or file:// URL (or "
                        "user@host:path).")
    if kind == "other":
        raise UserError(f"{where} is a file, not a directory: give a local llvm-project clone (its directory) or a "
                        "git URL.")
    if offline and kind != "dir":
        what = f"the LLVM source {shown} (from {origin}) is not a local directory" if url else \
            "--llvm source would clone the upstream llvm-project"
        raise UserError(f"Offline (--offline/TRITON_OFFLINE_BUILD), {what}, and nothing is cloned offline. Pass "
                        "--llvm-src with a local llvm-project clone or mirror, or build once online.")


def _no_llvm(facts: Facts, targets: tuple[str, ...], rejected: list[tuple[str, str]]) -> str:
    tried = "; ".join(f"{printable(p)}: {w}" for p, w in rejected) or "none found"
    return (
        f"No usable LLVM for pin {facts.source.pin.short} with targets {' '.join(targets)} ({tried}). Install a "
        "system LLVM (Debian: llvm-22-dev libmlir-22-dev mlir-22-tools liblld-22-dev), pass --llvm PREFIX / "
        f"LLVM_SYSPATH, or build the pinned one: tritonbuild llvm build --source {quoted(facts.source.root)}"
    )


def _llvm_plan(facts: Facts, suffix: str | None, targets: tuple[str, ...], need_lld: bool, pick: _Pick,
               problem: str | None, rejected: list[tuple[str, str]]) -> LLVMPlan:
    pin, chosen = facts.source.pin, pick.chosen
    prefix = chosen.prefix if chosen else pick.prefix
    return LLVMPlan(
        pin_file=pin.path, pinned_hash=pin.llvm_hash, build_number=pin.build_number, sha256=dict(pin.sha256),
        host_suffix=suffix, archive=pin.archive_name(suffix) if suffix else None, required_targets=targets,
        needs_lld=need_lld, strategy=pick.strategy,
        found_by=chosen.found_by if chosen else (pick.strategy if prefix else None), prefix=prefix,
        version=chosen.version if chosen else None, targets_built=chosen.targets_built if chosen else (),
        link_dylib=chosen.link_dylib if chosen else False, static_libs=chosen.static_libs if chosen else True,
        static_missing=chosen.static_missing if chosen else (),
        revision=chosen.revision if chosen else (pin.llvm_hash if prefix else None),
        is_pinned=is_pinned(chosen, pin.llvm_hash) if chosen else pick.pinned, problem=problem,
        rejected=tuple(rejected),
    )


def pinned_hint(llvm: LLVMPlan, src: SourceInfo, names: tuple[str, ...], checkout: str | None = None,
                patches: tuple[str, ...] = ()) -> str:
    """How to get the pinned LLVM instead, given why the prebuilt download was not taken. With ``--patch`` the
    command names the user's ``checkout`` and the same patches, never tritonbuild's patched copy."""
    why = dict(llvm.rejected).get("prebuilt download", "")
    given = "".join(f" --patch {quoted(p)}" for p in patches) if checkout else ""
    build = (f"`tritonbuild llvm build --source {quoted(checkout or src.root)}{given} --backends "
             f"'{';'.join(names)}'` builds it (mlir and lld "
             f"with {', '.join(llvm.required_targets)}; hours on 2 cores)")
    return PINNED_HINTS.get(why.code if isinstance(why, Blocker) else None, "For the pinned LLVM, {build}.").format(
        build=build)


# The way to the pinned LLVM, by why the prebuilt download was not taken ({build}: the source build's command).
PINNED_HINTS: dict[DownloadBlock | None, str] = {
    DownloadBlock.OFFLINE: "For the pinned LLVM: `tritonbuild llvm fetch` on a connected machine, or {build}.",
    DownloadBlock.UNPINNED: "For the pinned LLVM: add --allow-unpinned to use Triton's prebuilt archive, or {build}.",
    DownloadBlock.TARGETS: "No prebuilt LLVM has all these targets; for the pinned LLVM, {build}.",
}
