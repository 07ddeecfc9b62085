"""Build provenance (pure: no file read, no program run): an in-toto Statement v1 whose predicate is SLSA
Provenance v1, made from the plan and what the build reported, with the ``in-toto-attestation`` library; and the
reverse, a provenance file (hostile input) read back into what ``tritonbuild rebuild`` needs, and the differences
between a claim and a rebuild.

The statement's subject is the wheel (file name, sha256). ``buildDefinition.externalParameters`` holds every setting
with where it came from (URL secrets redacted, as ``Plan.to_dict``) and the target interpreter;
``internalParameters`` tritonbuild's version and the plan's key and fingerprint; ``resolvedDependencies`` the source
(commit), each plugin (commit), the LLVM, the patches (sha256) and the tools. It is written next to the wheel as
``<wheel file name>.provenance.json`` (``tritonbuild.wheel.publish``); signing it is the CI's job.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format  # type: ignore[import-untyped]
from in_toto_attestation.predicates.provenance.v1 import provenance_pb2  # type: ignore[import-untyped]
from in_toto_attestation.v1 import statement  # type: ignore[import-untyped]
from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor  # type: ignore[import-untyped]

from tritonbuild import __version__
from tritonbuild.errors import UserError
from tritonbuild.plan import Plan
from tritonbuild.redact import REDACTED, redact
from tritonbuild.settings.model import SPEC_BY_NAME, SPECS, Settings, show
from tritonbuild.wheel import provenance_fields as fields

PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
# What the build type and the builder are, and what every parameter means: docs/build-type.md. Package URLs that
# name the tritonbuild distribution (it has no web home: an https:// URL would name a host nobody runs for it).
BUILD_TYPE = "pkg:pypi/tritonbuild#build-type/wheel/v1"
BUILDER_ID = f"pkg:pypi/tritonbuild@{__version__}"
SUFFIX = ".provenance.json"  # <wheel file name>.provenance.json: the wheel's own name, then what the file is
MAX_BYTES = 4 << 20  # a provenance file read back: a plan's is some tens of KiB
_WHEEL_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*\.whl$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$")


def file_name(wheel_name: str) -> str:
    """The provenance file of a wheel: ``<wheel file name>.provenance.json``."""
    return wheel_name + SUFFIX


def _rd(name: str, uri: str = "", digest: Mapping[str, str] | None = None,
        annotations: Mapping[str, Any] | None = None) -> Any:
    return ResourceDescriptor(name=name, uri=uri, digest={k: v for k, v in (digest or {}).items() if v},
                              annotations={k: v for k, v in (annotations or {}).items() if v is not None}).pb


def _git_uri(where: str, commit: str | None) -> str:
    """A git source's URI (``git+<url>@<commit>``); a tree that is not a git checkout (no commit) is ``file://``."""
    base = where if "://" in where or where.startswith("git@") else f"file://{where}"
    return f"git+{base}@{commit}" if commit else base


def dependencies(plan: Plan, build_info: Mapping[str, Any]) -> list[Any]:
    """The resolved dependencies: source, plugins, LLVM, patches, tools (ResourceDescriptor protos)."""
    src = plan.source
    given = plan.settings.source
    out = [_rd("source", _git_uri(str(redact(given)) if given and "://" in str(given) else src.root, src.commit),
               {"gitCommit": src.commit or ""},
               {"path": src.checkout or src.root, "dirty": src.dirty, "version": src.version,
                "generation": src.generation, "rebuild": None if src.commit else NOT_GIT})]
    out += [_rd(f"plugin:{b.name}", _git_uri(b.checkout or b.path, b.commit), {"gitCommit": b.commit or ""},
                {"path": b.checkout or b.path, "dirty": b.dirty}) for b in plan.backends if b.origin != "in-tree"]
    llvm = plan.llvm
    archive = _archive_used(llvm)
    archive_sha = llvm.sha256.get(llvm.host_suffix or "", "") if archive else ""
    out.append(_rd("llvm", f"file://{llvm.prefix}" if llvm.prefix else (archive or ""),
                   {"gitCommit": llvm.revision or "", "sha256": archive_sha},
                   {"version": llvm.version, "strategy": llvm.strategy, "archive": archive,
                    "pinnedHash": llvm.pinned_hash, "isPinned": llvm.is_pinned, "link": llvm.link,
                    "noDigest": None if llvm.revision or archive_sha else NO_LLVM_DIGEST}))
    patched = [(p, None) for p in src.patches] + [(p, b.name) for b in plan.backends for p in b.patches]
    out += [_rd(f"patch:{i}:{p.path.rsplit('/', 1)[-1]}", f"file://{p.path}", {"sha256": p.sha256},
                {"files": list(p.files), **({"plugin": name} if name else {})})
            for i, (p, name) in enumerate(patched, 1)]
    out += _nvidia(plan, build_info.get("bundled_tools", {}))
    tc = build_info.get("toolchain", {})
    out.append(_rd("tool:c++", f"file://{plan.toolchain.cxx_compiler}" if plan.toolchain.cxx_compiler else "",
                   annotations={"version": tc.get("compiler"), "linker": plan.toolchain.linker}))
    out.append(_rd("tool:python", f"file://{plan.python}", annotations={"abi": plan.wheel.python_abi}))
    return out


def _archive_used(llvm: Any) -> str | None:
    """The prebuilt archive the LLVM came from: one downloaded now, or unpacked in the cache under its name; None
    for a prefix, the system's or a source build (the plan names the pin's archive whatever the strategy)."""
    if not llvm.archive:
        return None
    if llvm.strategy == "download":
        return str(llvm.archive)
    unpacked = str(llvm.archive).removesuffix(".tar.gz")
    return str(llvm.archive) if llvm.strategy == "cached" and llvm.prefix and \
        llvm.prefix.rstrip("/").rsplit("/", 1)[-1] == unpacked else None


NOT_GIT = ("not possible: the source is not a git checkout, so no commit pins what was built (tritonbuild rebuild "
           "needs one)")
NO_LLVM_DIGEST = ("an installed LLVM prefix (a distribution's packages or a local build) records no commit and has "
                  "no archive to hash: its version here and the SBOM's packages say which it is")


def _nvidia(plan: Plan, tools: Mapping[str, Mapping[str, str]]) -> list[Any]:
    """The NVIDIA files the wheel carries: each bundled tool (the file's sha256; one from NVIDIA's wheel also names
    that wheel, which is listed too, with its sha256) and each part (headers, CUPTI) with where it was found."""
    out = []
    for name, t in sorted(tools.items()):
        out.append(_rd(f"nvidia-tool:{name}", f"file://{t['path']}", {"sha256": t.get("sha256", "")},
                       {"wheel": t.get("wheel"), "wheelSha256": t.get("wheel_sha256") or None}))
        if t.get("wheel"):
            project, _, version = t["wheel"].partition("==")
            out.append(_rd(f"pypi:{project}", f"pkg:pypi/{project}@{version}", {"sha256": t.get("wheel_sha256", "")},
                           {"version": version, "bundles": name}))
    out += [_rd(f"nvidia:{p.name}", f"file://{p.dirs[0]}" if p.dirs else "", {},
                {"foundBy": p.found_by, "dest": p.dest, "wheels": list(p.wheels) or None}) for p in plan.nvidia
            if p.dirs]
    return out


def _time(epoch: float) -> str:
    return datetime.fromtimestamp(round(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def predicate(plan: Plan, sha256: str, build_info: Mapping[str, Any], finished: float | None,
              seconds: float | None) -> dict[str, Any]:
    """The SLSA Provenance v1 predicate, built as the library's proto and returned as its JSON form."""
    prov = provenance_pb2.Provenance()
    bd = prov.build_definition
    bd.build_type = BUILD_TYPE
    bd.external_parameters.update({"settings": redact(plan.settings.report()),
                                   "python": {"path": plan.python, "abi": plan.wheel.python_abi}})
    bd.internal_parameters.update({"tritonbuildVersion": __version__, "planKey": plan.key,
                                   "planFingerprint": plan.fingerprint, "reproducible": plan.reproducible})
    bd.resolved_dependencies.extend(dependencies(plan, build_info))
    rd = prov.run_details
    rd.builder.id = BUILDER_ID
    rd.builder.version["tritonbuild"] = __version__
    started = finished - seconds if finished is not None and seconds is not None else None
    seed = f"{BUILD_TYPE}#{plan.key}/{plan.fingerprint}/{sha256}/{'' if started is None else round(started)}"
    rd.metadata.invocation_id = f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, seed)}"
    if started is not None and finished is not None:
        rd.metadata.started_on.FromJsonString(_time(started))
        rd.metadata.finished_on.FromJsonString(_time(finished))
    out: dict[str, Any] = json_format.MessageToDict(prov)
    return out


def make(plan: Plan, wheel_name: str, sha256: str, build_info: Mapping[str, Any], *, finished: float | None = None,
         seconds: float | None = None) -> statement.Statement:
    """The in-toto statement of one wheel, validated (``Statement.validate`` and ``check_predicate``)."""
    subject = ResourceDescriptor(name=wheel_name, digest={"sha256": sha256}).pb
    stmt = statement.Statement([subject], PREDICATE_TYPE, predicate(plan, sha256, build_info, finished, seconds))
    stmt.validate()
    check_predicate(json_format.MessageToDict(stmt.pb)["predicate"])
    return stmt


def to_json(stmt: statement.Statement) -> str:
    """The statement's JSON. protobuf's Struct holds every number as a double: a whole number is written back as
    an integer (``jobs: 1``, not ``1.0``) except the values of number settings of kind float."""
    data = _whole(json_format.MessageToDict(stmt.pb))
    settings = data.get("predicate", {}).get("buildDefinition", {}).get("externalParameters", {}).get("settings", {})
    for name, entry in settings.items():
        spec = SPEC_BY_NAME.get(name)
        if spec is not None and spec.kind == "float" and isinstance(entry.get("value"), int):
            entry["value"] = float(entry["value"])
    return json.dumps(data, sort_keys=True, indent=2) + "\n"


def _whole(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def check_predicate(data: Any) -> Any:
    """The predicate parsed strictly into the library's SLSA Provenance v1 proto (unknown fields and wrong types
    refused), with the fields the spec requires: ValueError naming the first problem."""
    if not isinstance(data, dict):
        raise ValueError("the predicate is not an object")
    prov = provenance_pb2.Provenance()
    try:
        json_format.ParseDict(data, prov)
    except json_format.ParseError as exc:
        raise ValueError(f"the predicate is not SLSA Provenance v1: {str(exc)[:300]}") from None
    if not prov.build_definition.build_type:
        raise ValueError("buildDefinition.buildType is missing")
    if not prov.run_details.builder.id:
        raise ValueError("runDetails.builder.id is missing")
    for i, dep in enumerate(prov.build_definition.resolved_dependencies):
        try:
            ResourceDescriptor.copy_from_pb(dep).validate()
        except ValueError:
            raise ValueError(f"resolvedDependencies[{i}] has no name, uri or digest") from None
    return prov


@dataclass(frozen=True)
class Claim:
    """What a provenance file says: the wheel, the settings that made it, the source and the dependencies."""

    wheel: str  # the subject's file name
    sha256: str
    settings: dict[str, Any]  # name -> value, typed as the setting's kind
    origins: dict[str, str]
    python: str
    abi: str
    source: str  # where the source was: a path or a git URL
    commit: str
    fingerprint: str
    dependencies: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {uri, digest, annotations}
    dirty: bool = False


def _strict_json(data: bytes) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):  # a set, not keys.count(): 400,000 keys in 4 MiB must not take quadratic time
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    raise ValueError(f"the key {show(key)} appears twice in one object")
                seen.add(key)
        return out

    def constant(word: str) -> Any:
        raise ValueError(f"{word} is not JSON")

    text = data.decode("utf-8")  # UnicodeDecodeError is a ValueError
    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def parse(data: bytes, where: str) -> Claim:
    """A provenance file's bytes read as hostile input: strict UTF-8 JSON, an in-toto Statement v1 (the library's
    validation) with an SLSA Provenance v1 predicate of tritonbuild's build type, one wheel subject and known
    settings of the right types. Anything else is one ``UserError`` paragraph (exit 2)."""
    if len(data) > MAX_BYTES:
        raise UserError(f"The provenance {where} is over {MAX_BYTES >> 20} MiB: not a provenance file tritonbuild "
                        "wrote. Nothing was built; give the <wheel>.provenance.json published next to a wheel.")
    try:
        return _claim(read_statement(data))
    except READ_ERRORS as exc:
        raise UserError(f"The provenance {where} is not one tritonbuild can rebuild from: {problem_of(exc)[:400]}. "
                        "Nothing was built; give the <wheel>.provenance.json that `tritonbuild build` published next "
                        "to the wheel, unedited.") from None


# what reading a hostile provenance file raises (RecursionError: JSON nested too deep; OverflowError: protobuf's
# Struct given an integer no double holds, 10**400)
READ_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError, OverflowError)


def read_statement(data: bytes) -> dict[str, Any]:
    """A provenance file's bytes as its in-toto Statement (strict UTF-8 JSON, the library's validation, tritonbuild's
    SLSA predicate); raises one of ``READ_ERRORS``."""
    return _statement(_strict_json(data))


def problem_of(exc: BaseException) -> str:
    """What a ``READ_ERRORS`` exception says about the file, on one line."""
    return " ".join((str(exc) if not isinstance(exc, KeyError) else f"{exc} is missing").split())


def _statement(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError("the file is not a JSON object")
    pb = statement.Statement([], "", {}).pb
    try:
        json_format.ParseDict(obj, pb)
    except json_format.ParseError as exc:
        raise ValueError(f"it is not an in-toto Statement: {str(exc)[:300]}") from None
    statement.Statement.copy_from_pb(pb).validate()
    if pb.predicate_type != PREDICATE_TYPE:
        raise ValueError(f"its predicateType is {show(pb.predicate_type)}, not {PREDICATE_TYPE}")
    prov = check_predicate(obj["predicate"])
    if prov.build_definition.build_type != BUILD_TYPE:
        raise ValueError(f"its buildType is {show(prov.build_definition.build_type)}, not tritonbuild's {BUILD_TYPE}")
    if len(pb.subject) != 1:
        raise ValueError(f"it has {len(pb.subject)} subjects; a wheel's provenance has one")
    return obj


def _redacted(value: Any) -> bool:
    """Whether a value had a secret the provenance does not hold (``tritonbuild.redact.redact``)."""
    items = value if isinstance(value, list) else [value]
    return any(isinstance(v, str) and REDACTED in v for v in items)


def _setting(name: Any, entry: Any) -> tuple[Any, str]:
    spec = SPEC_BY_NAME.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ValueError(f"it names a setting {show(name)} tritonbuild does not have")
    if not isinstance(entry, dict) or set(entry) != {"value", "origin"} or not isinstance(entry["origin"], str):
        raise ValueError(f"the setting {name} is not {{value, origin}}")
    value = entry["value"]
    if spec.kind == "int" and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)  # JSON (protobuf's Struct) writes every number as a double
    if not _redacted(value):
        spec.check(value, f"provenance {entry['origin']}")  # a UserError is a ValueError-like refusal too
    return value, entry["origin"]


def _claim(obj: dict[str, Any]) -> Claim:
    subject = obj["subject"][0]
    name, sha = subject.get("name", ""), subject.get("digest", {}).get("sha256", "")
    if not isinstance(name, str) or not _WHEEL_FILE.match(name) or not isinstance(sha, str) or not _HEX64.match(sha):
        raise ValueError(f"its subject is not a wheel file name with a sha256 ({show(name)}, {show(sha)})")
    ext = obj["predicate"]["buildDefinition"].get("externalParameters", {})
    raw, python = ext.get("settings"), ext.get("python")
    if not isinstance(raw, dict) or not isinstance(python, dict):
        raise ValueError("externalParameters lacks its settings or python")
    try:
        typed = {k: _setting(k, v) for k, v in raw.items()}
    except UserError as exc:
        raise ValueError(str(exc)) from None
    deps = {d["name"]: d for d in obj["predicate"]["buildDefinition"].get("resolvedDependencies", [])
            if isinstance(d, dict) and isinstance(d.get("name"), str)}
    src = deps.get("source", {})
    commit = src.get("digest", {}).get("gitCommit", "")
    if not isinstance(commit, str) or not _COMMIT.match(commit):
        raise ValueError("its source dependency has no git commit: the wheel was built from a tree that is not a "
                         "git checkout (or was edited), which a rebuild cannot pin to what was built")
    where = _source_of(typed.get("source", (None, ""))[0], src.get("annotations", {}).get("path"))
    internal = obj["predicate"]["buildDefinition"].get("internalParameters", {})
    texts = (python.get("path"), python.get("abi"), where, internal.get("planFingerprint", ""))
    if not all(isinstance(t, str) for t in texts):
        raise ValueError("its python, source path or plan fingerprint is not text")
    return Claim(name, sha, {k: v for k, (v, _) in typed.items()}, {k: o for k, (_, o) in typed.items()},
                 str(texts[0]), str(texts[1]), str(texts[2]), commit, str(texts[3]), deps,
                 src.get("annotations", {}).get("dirty") is True)


def _source_of(given: Any, recorded: Any) -> Any:
    """Where the source was: a git URL as given, else the absolute path the build recorded (the typed setting may be
    relative to a directory this rebuild does not run in)."""
    if isinstance(given, str) and ("://" in given or given.startswith("git@")):
        return given
    return recorded if isinstance(recorded, str) and recorded.startswith("/") else given


def taken_from_machine(flags: tuple[str, ...]) -> list[str]:
    """The settings a rebuild takes from this machine, never from the provenance: how that machine built
    (``Spec.local``: parallelism, compiler caches, the network) and those without a flag (the environment's: tool
    paths, the package index, ...), besides the source and ref (``Spec.identity``: --source, the claimed commit)."""
    return [s.name for s in SPECS if s.local or (s.name not in flags and not s.identity)]


def rebuild_request(claim: Claim, *, source: str, python: str | None, cache_dir: str | None, out: str,
                    flags: tuple[str, ...], trust: bool = False,
                    given: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The flag values (``tritonbuild.gather.request``'s ``kw``) that rebuild the claim, as ``provenance_fields.FIELDS``
    says: each data setting of ``flags`` the claim holds, given as if typed (so no environment or recipe overrides
    it); a setting that locates code or reaches a host only with ``trust`` (else its default: ``rebuild`` refused a
    provenance that sets one before this), unless ``given`` (the rebuild's own flags by setting name: --plugin-dir,
    --llvm) supplies it; never one this machine gives (``Spec.local``, no flag). ``source``: the user's --source, or
    with ``trust`` the provenance's (``Claim.source``); a git URL is checked out at the claimed commit.
    ``python``: the interpreter to build with, never the provenance's (None: the one running tritonbuild). A
    setting the claim lacks (declared after it was written) is not given: its default (or this machine's) applies.
    """
    kw: dict[str, Any] = {"cache_dir": cache_dir, "out": out, "python": (python,) if python else (), "recipe": None}
    notes = []
    for name in flags:
        row = fields.BY_PATH[f"{fields.SETTINGS}.{name}.value"]
        if name in (given or {}):
            kw[name] = (given or {})[name]
            continue
        if row.use == "never" or SPEC_BY_NAME[name].identity or name not in claim.settings:
            continue
        value = claim.settings.get(name)
        if _redacted(value):
            notes.append(f"{name} was redacted in the provenance: this machine's value is used")
            continue
        if row.use == "trusted" and not trust:
            value = SPEC_BY_NAME[name].default
        kw[name] = tuple(value) if isinstance(value, list) else value
    kw["source"] = source
    if "://" in source or source.startswith("git@"):
        kw["ref"] = claim.commit
    if claim.dirty:
        notes.append("the subject was built from a checkout with uncommitted changes, which a rebuild cannot see")
    return kw, notes


def _norm(value: Any) -> Any:
    return json.loads(json.dumps(redact(value)))


def setting_differences(claim: Claim, plan_settings: Settings) -> list[str]:
    """Settings whose value in the rebuilt plan is not the claim's (``Spec.identity`` and ``Spec.local`` ones
    left out), compared as the provenance holds them (``Settings.given``): '<name>: <claimed> (<origin>)
    in the provenance, <value> (<origin>) here'. ``claim.settings`` holds only settings we have (``_setting``)."""
    out = []
    for name in sorted(claim.settings):
        spec, (value, origin) = SPEC_BY_NAME[name], plan_settings.given(name)
        if not (spec.local or spec.identity) and _norm(claim.settings[name]) != _norm(value):
            out.append(f"{name}: {show(claim.settings[name])} ({claim.origins.get(name, 'absent')}) in the "
                       f"provenance, {show(value)} ({origin}) here")
    return out


def new_settings(claim: Claim, plan_settings: Settings) -> list[str]:
    """Settings the provenance lacks (declared after it was written): not differences, but said, with the value
    the rebuild used ('<name>: new since the provenance, <value> (<origin>) used')."""
    new = sorted(set(SPEC_BY_NAME) - set(claim.settings))
    return [f"{name}: new since the provenance, {show(value)} ({origin}) used"
            for name in new for value, origin in [plan_settings.given(name)]]


def dependency_differences(claim: Claim, ours: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Dependencies whose digest or version differ between the claim and the rebuild (by name)."""
    out = []
    for name in sorted(set(claim.dependencies) | set(ours)):
        a, b = claim.dependencies.get(name), ours.get(name)
        if a is None or b is None:
            out.append(f"{name}: {'only in the rebuild' if a is None else 'only in the provenance'}")
            continue
        ident = [(k, a.get(k), b.get(k)) for k in ("digest",)]
        ident += [(f"annotations.{k}", a.get("annotations", {}).get(k), b.get("annotations", {}).get(k))
                  for k in ("version",)]
        out += [f"{name} {k}: {show(x)} in the provenance, {show(y)} here" for k, x, y in ident if x != y]
    return out


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{prefix}{key}.").items()}
    return {prefix.rstrip("."): value}


def build_info_differences(subject: Mapping[str, Any], rebuilt: Mapping[str, Any]) -> list[str]:
    """Fields of two ``_build_info.json`` documents that differ, each with the settings that decide it (``decides``)."""
    a, b = _flat(dict(subject)), _flat(dict(rebuilt))
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            by = ", ".join(s.name for s in SPECS if any(key == f or key.startswith(f + ".") for f in s.decides))
            setting = f" (set by {by})" if by else ""
            out.append(f"{key}: {show(a.get(key))} in the subject, {show(b.get(key))} in the rebuild{setting}")
    return out
