"""What each setting is to the rest of the build (#48), declared on its ``Spec``: ``trust`` (does a value run code or
reach a host), ``local`` (how this machine builds, not what), ``compiles`` (can it change whether a tree compiles),
``decides`` (the wheel's build-info fields it decides), ``identity`` (it names the tree or revision built) and
``path`` (its rule is a path's). The provenance's rules, ``llvm compat``'s answer key, ``rebuild``'s differences,
develop's record and the paths a --container mounts are made from them, so a setting added without deciding them
fails here, by name."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from tests.helpers import plan_for
from tritonbuild.execute import compat
from tritonbuild.reporter import silent
from tritonbuild.settings.model import SPECS, Spec, Trust
from tritonbuild.wheel import provenance
from tritonbuild.wheel import provenance_fields as fields

DECLARED = {
    "trust": 'trust="runs" when a value names code the build runs, loads or ships, "reaches" when it names a host, '
             'else ""',
    "local": "local=True when it says how this machine builds (parallelism, caches, network, container), not what",
    "compiles": "compiles=False when it cannot change whether a tree configures and compiles",
}


def _problems(spec: Spec) -> list[str]:
    """What is undecided or contradictory in one spec, each naming the setting and the attribute."""
    out = [f"{spec.name}: {attr} is not declared ({how})" for attr, how in DECLARED.items()
           if getattr(spec, attr) is None]
    if spec.trust is not None and spec.trust not in typing.get_args(Trust):
        out.append(f"{spec.name}: trust={spec.trust!r} is not one of {typing.get_args(Trust)}")
    if spec.trust:  # a value that locates code or reaches a host is never taken from a provenance as data
        row = fields.BY_PATH[f"{fields.SETTINGS}.{spec.name}.value"]
        if row.kind != {"runs": "code", "reaches": "host"}.get(spec.trust) or row.use == "taken":
            out.append(f"{spec.name}: trust={spec.trust!r}, yet the provenance table has it {row.kind}/{row.use}")
    if spec.path and spec.trust != "runs":  # Spec.path: its rule is a path's; what the build reads from there runs
        out.append(f"{spec.name}: a path (its rule is one of PATH_RULES), yet trust={spec.trust!r}, not 'runs'")
    if spec.local and spec.decides:
        out.append(f"{spec.name}: local, yet decides {spec.decides}: a rebuild takes this machine's value, so a "
                   "difference in those fields could not come from it")
    if spec.compiles and not spec.identity and spec.name in compat.IRRELEVANT - {"llvm", *compat.STEP_FLAGS}:
        out.append(f"{spec.name}: compiles, yet left out of llvm compat's answer key")
    if spec.identity and (spec.local or spec.decides):
        out.append(f"{spec.name}: identity={spec.identity!r} names what is built, yet it is local or decides "
                   f"{spec.decides}")
    if spec.local and spec.host_only is None:  # a local setting may name this host: --container must know
        out.append(f"{spec.name}: local, and host_only is not declared (host_only=True when it names this host's own "
                   "state, a cache, a server or the container itself, which a --container run must not pass into "
                   "the image; host_only=False when the image's build takes it as it is)")
    if spec.host_only and not spec.local:  # what a --container run does not pass in is this machine's own
        out.append(f"{spec.name}: host_only, yet not local: a container's inner run would build something else")
    if len(set(spec.decides)) != len(spec.decides):
        out.append(f"{spec.name}: decides {spec.decides} names a field twice")
    return out


def test_every_setting_declares_what_it_is_to_the_build() -> None:
    problems = [p for spec in SPECS for p in _problems(spec)]
    assert not problems, "\n".join(problems)


def test_the_lists_made_from_the_specs_follow_them() -> None:
    # one setting names the tree built, one its revision: the rebuild's --source and the claimed commit replace them
    assert sorted(s.identity for s in SPECS if s.identity) == ["revision", "tree"]
    undecided = sorted(s.name for s in SPECS if s.compiles is None)
    assert not undecided, f"declare compiles= for {undecided} (test_every_setting_declares_what_it_is_to_the_build)"
    assert {s.name for s in SPECS if s.compiles is False} <= compat.IRRELEVANT
    assert {s.name for s in SPECS if s.compiles and s.name not in compat.IRRELEVANT} == \
        {s.name for s in SPECS} - compat.IRRELEVANT  # every other setting is in the key
    uses = {s.identity: fields.BY_PATH[f"{fields.SETTINGS}.{s.name}.value"].use for s in SPECS if s.identity}
    assert uses == {"tree": "trusted", "revision": "never"}  # --source (or --trust-provenance); the claimed commit
    local_rows = {s.name: fields.BY_PATH[f"{fields.SETTINGS}.{s.name}.value"].use for s in SPECS if s.local}
    assert set(local_rows.values()) == {"never"}  # a rebuild never takes this machine's choices from a provenance


def _flat(value: object, prefix: str = "") -> set[str]:
    if isinstance(value, dict):
        return {k for key, item in value.items() for k in _flat(item, f"{prefix}{key}.")}
    return {prefix.rstrip(".")}


def test_each_decided_field_is_one_the_build_info_has(tree, monkeypatch: pytest.MonkeyPatch) -> None:
    """A misspelt field in ``decides`` would never match a difference: each is a key of a real plan's
    ``_build_info.json`` (the compiler's version, a program run, is the one thing not asked)."""
    monkeypatch.setattr(provenance, "tool_version", lambda path: "g++ 14")
    info = _flat(provenance.provenance(plan_for(Path(tree()))))
    assert {f"{s.name}: {f}" for s in SPECS for f in s.decides if f not in info} == set()
    assert "toolchain.build_type" in info and len(info) > 20  # the walk saw the document


@pytest.mark.parametrize(("name", "value"), [("cmake_args", ["-DX=1"]), ("offline", True), ("jobs", 3),
                                             ("zip_level", 1), ("llvm_mirror", "https://mirror.example/llvm")])
def test_llvm_compat_keys_its_answers_by_the_settings_that_compile(tmp_path: Path, name: str, value: object) -> None:
    from tritonbuild.gather.request import Request
    from tritonbuild.resolve.facts import LLVMInstall
    from tritonbuild.settings.model import SPEC_BY_NAME, resolve_settings

    llvm = LLVMInstall("/llvm", True, version="21.1.0")
    request = Request({}, {}, tmp_path, pythons=("3.12",), warn=silent)
    base = compat.answer_key(llvm, resolve_settings({}, {}), request, True)
    changed = compat.answer_key(llvm, resolve_settings({name: value}, {}), request, True)
    assert (changed != base) is SPEC_BY_NAME[name].compiles
