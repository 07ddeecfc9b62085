"""Every field of the provenance tritonbuild writes (``tritonbuild.wheel.attestation``) and ``tritonbuild rebuild``
reads back, classified in one table (pure: no file read, no program run).

A provenance is hostile input: it is *data*, never a locator of code. Each field is one of

- ``data``: a name, a digest, a version, a choice, a time; ``rebuild`` may take it as the rebuild's value (``taken``)
  or compare against it (``compared``);
- ``code``: it says where code comes from (a source path or URL, a plugin dir, an interpreter, a compiler, an LLVM
  prefix or source, a patch file, CMake arguments, a dependency's checkout or URL, a wheelhouse, ...);
- ``host``: it names a host the build talks to (a mirror, an index, a compiler cache's remote, distcc hosts).

A ``code`` or ``host`` field is either never read by ``rebuild`` (``never``: this machine's value is used, or the field
is only shown) or read only when the user said so (``trusted``): ``--trust-provenance``, or the field's own flag
(``Field.flag``: ``--source``, ``--plugin-dir``, ``--llvm``), whose value then replaces the provenance's. Without
either, a provenance that sets such a field is refused (exit 2) before anything is cloned, fetched or configured, in
one paragraph naming each field, its value and the flag that would supply it (``refusal``).

A key the table does not classify is refused too (``unclassified``): a field tritonbuild never wrote is read by
nothing, and a new field written without a row here fails ``tests/unit/test_provenance_fields.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from tritonbuild.errors import UserError
from tritonbuild.redact import REDACTED, redact
from tritonbuild.settings.model import SPECS, Spec, show

Kind = Literal["data", "code", "host"]
Use = Literal["taken", "compared", "trusted", "never"]
JSON = str | int | float | bool | None | list["JSON"] | dict[str, "JSON"]

BD = "predicate.buildDefinition"
SETTINGS = f"{BD}.externalParameters.settings"
DEPS = f"{BD}.resolvedDependencies"
# The rebuild's own flags that replace a provenance's field (besides --trust-provenance, which takes them all).
REBUILD_FLAGS = {"source": "--source", "plugin_dirs": "--plugin-dir", "llvm": "--llvm"}
MAX_PATHS = 20000  # key paths walked in one provenance (a plan's has a few hundred)


@dataclass(frozen=True)
class Field:
    """One row: ``path`` is a dotted key path; ``[NAME]`` is the resolvedDependencies entry of that name
    (``[plugin:*]``: every entry whose name starts ``plugin:``), ``[]`` any item of a list, ``*`` any key; a path
    ending ``.**`` covers everything under it. ``flag``: what supplies a ``trusted`` field instead."""

    path: str
    kind: Kind
    use: Use
    why: str
    flag: str = ""


def _setting_kind(spec: Spec) -> Kind:
    return "code" if spec.trust == "runs" else "host" if spec.trust == "reaches" else "data"


def _setting_row(spec: Spec) -> Field:
    """A setting's value: this machine's (never read) for how-this-machine-builds settings (``Spec.local``) and
    settings without a flag (the environment's: tool paths, the index); the claimed commit replaces ``ref`` (its
    ``Spec.identity``); the rest are taken when data, trusted only when they locate code or reach a host."""
    kind = _setting_kind(spec)
    path = f"{SETTINGS}.{spec.name}.value"
    if spec.identity == "revision":
        return Field(path, "data", "never", "the rebuild checks out the claimed commit (digest.gitCommit)")
    if spec.local or (spec.flag is None and not spec.identity):
        return Field(path, kind, "never", "this machine's value (its flag, environment or default) is used")
    if kind == "data":
        return Field(path, kind, "taken", "given to the rebuild as if typed")
    flag = REBUILD_FLAGS.get(spec.name, "")
    return Field(path, kind, "trusted", f"{spec.help}: taken only with --trust-provenance", flag)


def _dep(name: str, rows: list[tuple[str, Kind, Use, str]], flags: Mapping[str, str] | None = None) -> list[Field]:
    return [Field(f"{DEPS}[{name}].{key}", kind, use, why, (flags or {}).get(key, "")) for key, kind, use, why in rows]


_NAME: tuple[str, Kind, Use, str] = ("name", "data", "compared", "the dependency's name, compared by name")
_SHOWN = "shown in the differences, never used to find anything"
_HERE = "never read: this machine's is used and its difference shown"

FIELDS: tuple[Field, ...] = (
    Field("_type", "data", "compared", "must be in-toto's Statement v1"),
    Field("predicateType", "data", "compared", "must be SLSA Provenance v1"),
    Field("subject[].name", "data", "compared", "the wheel's file name: the rebuilt one is compared to it"),
    Field("subject[].digest.sha256", "data", "compared", "the wheel's sha256: the rebuilt one is compared to it"),
    Field(f"{BD}.buildType", "data", "compared", "must be tritonbuild's build type"),
    *(_setting_row(spec) for spec in SPECS),
    Field(f"{SETTINGS}.*.origin", "data", "never", "where the build's value came from: shown, never used"),
    Field(f"{BD}.externalParameters.python.path", "code", "never",
          "the build's interpreter: never run; --python, else this machine's of the ABI"),
    Field(f"{BD}.externalParameters.python.abi", "data", "compared",
          "picks this machine's interpreter of that ABI; the plan's must match"),
    Field(f"{BD}.internalParameters.tritonbuildVersion", "data", "never", "shown"),
    Field(f"{BD}.internalParameters.planKey", "data", "never", "the build's cache key: shown"),
    Field(f"{BD}.internalParameters.planFingerprint", "data", "compared", "the plan's fingerprint"),
    Field(f"{BD}.internalParameters.reproducible", "data", "compared",
          "whether byte identity was promised (else rebuild says which fields can differ)"),
    *_dep("source", [
        _NAME,
        ("uri", "code", "never", "git+<where>@<commit>: never read (settings.source or annotations.path is)"),
        ("digest.gitCommit", "data", "compared", "the commit the source must be at (a URL is checked out at it)"),
        ("annotations.path", "code", "trusted", "the checkout the build used: taken only with --trust-provenance"),
        ("annotations.dirty", "data", "compared", "said when the subject was built from a dirty checkout"),
        ("annotations.version", "data", "compared", _SHOWN),
        ("annotations.generation", "data", "never", "shown"),
        ("annotations.rebuild", "data", "never", "why a tree without git cannot be rebuilt: shown"),
    ], {"annotations.path": "--source"}),
    *_dep("plugin:*", [
        _NAME,
        ("uri", "code", "never", "never read"),
        ("digest.gitCommit", "data", "compared", _SHOWN),
        ("annotations.path", "code", "trusted",
         "resolves a relative plugin dir of settings.plugin_dirs: only with --trust-provenance"),
        ("annotations.dirty", "data", "never", "shown"),
    ], {"annotations.path": "--plugin-dir"}),
    *_dep("llvm", [
        _NAME,
        ("uri", "code", "never", "the LLVM prefix or archive: never read (settings.llvm is, when trusted)"),
        ("digest.gitCommit", "data", "compared", _SHOWN),
        ("digest.sha256", "data", "compared", _SHOWN),
        ("annotations.version", "data", "compared", _SHOWN),
        ("annotations.archive", "host", "never", "the archive's name at the mirror: never read"),
        *((k, "data", "never", "shown") for k in ("annotations.strategy", "annotations.pinnedHash",
                                                   "annotations.isPinned", "annotations.link", "annotations.noDigest")),
    ]),
    *_dep("patch:*", [
        _NAME,
        ("uri", "code", "never", "the patch file: never read (settings.patches is, when trusted)"),
        ("digest.sha256", "data", "compared", _SHOWN),
        ("annotations.files", "data", "never", "shown"),
        ("annotations.plugin", "data", "never",
         "the plugin whose dir the patch was applied to (--patch NAME=FILE): shown, never read"),
    ]),
    *_dep("nvidia-tool:*", [
        _NAME,
        ("uri", "code", "never", _HERE),
        ("digest.sha256", "data", "compared", _SHOWN),
        ("annotations.wheel", "data", "never", "NVIDIA's wheel (project==version): shown"),
        ("annotations.wheelSha256", "data", "never", "shown"),
    ]),
    *_dep("pypi:*", [
        _NAME,
        ("uri", "data", "never", "a purl (pkg:pypi/NAME@VERSION): names, does not locate; never read"),
        ("digest.sha256", "data", "compared", _SHOWN),
        ("annotations.version", "data", "compared", _SHOWN),
        ("annotations.bundles", "data", "never", "shown"),
    ]),
    *_dep("nvidia:*", [
        _NAME,
        ("uri", "code", "never", _HERE),
        ("annotations.foundBy", "code", "never", "where the build found it: shown"),
        ("annotations.dest", "data", "never", "shown"),
        ("annotations.wheels", "data", "never", "shown"),
    ]),
    *_dep("tool:c++", [
        _NAME,
        ("uri", "code", "never", "the build's compiler: never run; this machine's (or --clang)"),
        ("annotations.version", "data", "compared", _SHOWN),
        ("annotations.linker", "data", "never", "shown"),
    ]),
    *_dep("tool:python", [
        _NAME,
        ("uri", "code", "never", "the build's interpreter: never run"),
        ("annotations.abi", "data", "never", "shown"),
    ]),
    Field("predicate.runDetails.builder.id", "data", "never", "a name, never fetched"),
    Field("predicate.runDetails.builder.version.tritonbuild", "data", "never", "shown"),
    Field("predicate.runDetails.builder.builderDependencies.**", "code", "never",
          "SLSA's; tritonbuild writes none and reads none"),
    Field("predicate.runDetails.byproducts.**", "code", "never", "SLSA's; tritonbuild writes none and reads none"),
    Field("predicate.runDetails.metadata.invocationId", "data", "never", "shown"),
    Field("predicate.runDetails.metadata.startedOn", "data", "never", "shown"),
    Field("predicate.runDetails.metadata.finishedOn", "data", "never", "shown"),
)
BY_PATH = {f.path: f for f in FIELDS}
_FAMILIES = ("plugin:", "patch:", "nvidia-tool:", "pypi:", "nvidia:")


def _dep_token(name: JSON) -> str:
    """A dependency's name as the table's rows name it: itself, or its family (``plugin:*``)."""
    if not isinstance(name, str):
        return "?"
    return next((f"{p}*" for p in _FAMILIES if name.startswith(p) and len(name) > len(p)), name)


def key_paths(obj: JSON) -> Iterator[tuple[str, JSON, str]]:
    """(row path, value, shown path) of every leaf of a provenance's JSON (a list of text or numbers is one
    leaf), walked without recursion and at most ``MAX_PATHS`` of them."""
    stack: list[tuple[str, str, JSON]] = [("", "", obj)]
    count = 0
    while stack and count < MAX_PATHS:
        row, shown, value = stack.pop()
        count += 1
        if isinstance(value, dict):
            for k, v in value.items():
                stack.append((f"{row}.{k}" if row else k, f"{shown}.{k}" if shown else k, v))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, v in enumerate(value):
                token = _dep_token(v.get("name")) if row == DEPS and isinstance(v, dict) else ""
                tag = show(v.get("name"), 60) if token and isinstance(v, dict) else str(i)
                stack.append((f"{row}[{token}]", f"{shown}[{tag}]", v))
        else:
            yield row, value, shown


def classify(row: str) -> Field | None:
    """The table's row of a key path (``key_paths``' first item), None when it has none."""
    if row in BY_PATH:
        return BY_PATH[row]
    origin = row.rsplit(".", 2)
    if len(origin) == 3 and origin[2] == "origin" and origin[0] == SETTINGS:
        return BY_PATH[f"{SETTINGS}.*.origin"]
    return next((f for f in FIELDS if f.path.endswith(".**") and (row + ".").startswith(f.path[:-2])), None)


def unclassified(obj: JSON) -> list[str]:
    """The key paths of a provenance that no row classifies (shown escaped), at most 10."""
    out = [shown for row, _, shown in key_paths(obj) if classify(row) is None]
    return [show(p, 120) for p in sorted(out)[:10]]


def _norm(value: JSON) -> JSON:
    out: JSON = json.loads(json.dumps(redact(value)))
    return out


def _is_set(field: Field, value: JSON) -> bool:
    """Whether a trusted field says something the rebuild would take: a setting other than its default (and not
    redacted: then this machine's is used), any other field that is present."""
    name = field.path[len(SETTINGS) + 1:-len(".value")] if field.path.startswith(SETTINGS + ".") else ""
    if not name:
        return value not in (None, "", [])
    items = value if isinstance(value, list) else [value]
    if any(isinstance(v, str) and REDACTED in v for v in items):
        return False
    default = next(s.default for s in SPECS if s.name == name)
    return value is not None and _norm(value) != _norm(default)


def refusals(obj: JSON, given: frozenset[str]) -> list[tuple[str, JSON, Field]]:
    """Each trusted field the provenance sets whose flag the user did not give (``given``: flag names as in
    ``REBUILD_FLAGS``' values): (shown path, value, row)."""
    out = []
    for row, value, shown in key_paths(obj):
        field = classify(row)
        if field is None or field.use != "trusted" or (field.flag and field.flag in given):
            continue
        if _is_set(field, value):
            out.append((shown, value, field))
    return sorted(out, key=lambda r: r[0])


def _plain(text: str) -> str:
    """A path as a message prints it: as is when printable, else escaped (its repr), cut short."""
    shown = show(text, 300)
    return text if shown[1:-1] == text else shown


def refusal(where: str, found: list[tuple[str, JSON, Field]], commit: str) -> UserError:
    """One paragraph: each field with its value (escaped) and the flag that would supply it."""
    named = "; ".join(f"{_plain(path)} = {show(value, 200)} ({field.kind}: "
                      f"{field.flag + ' or ' if field.flag else ''}--trust-provenance)" for path, value, field in found)
    hint = f"pass --source with a checkout at commit {commit}" if any(f.flag == "--source" for _, _, f in found) \
        else "pass the flags named"
    return UserError(f"The provenance {_plain(where)} says where code comes from or which host to reach, "
                     f"and a provenance is data, never a locator of code: {named}. Nothing was cloned, fetched, "
                     f"configured or built. {hint[0].upper()}{hint[1:]} (each replaces the provenance's value), or "
                     "--trust-provenance if you trust whoever wrote this file with these values (each is then "
                     "printed as taken from the provenance).")
