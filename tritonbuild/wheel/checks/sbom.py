"""The SBOM check: the wheel's ``.dist-info/sboms/tritonbuild.cdx.json`` (PEP 770) is CycloneDX that validates
against its schema (cyclonedx-python-lib's own validator) and accounts for the wheel: every ELF file in it is a
``file`` component with its sha256 (listed once, or twice with the same one), and no file component names a member
the wheel lacks. Every other file in ``sboms/`` is an SBOM too (PEP 770): it must be UTF-8, JSON when named
``*.json``, and valid CycloneDX when it is CycloneDX.

A wheel with tritonbuild's build info (``triton/_build_info.json``) but no SBOM fails: the SBOM was stripped (every
tritonbuild that writes build info is 0.1.0, SBOM or not, so an older one cannot be told apart). A wheel without
build info (the official wheel) gets a note."""

from __future__ import annotations

import json
import zipfile
from typing import Any

from cyclonedx.schema import SchemaVersion

from tritonbuild.printable import printable
from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks.base import BUILD_INFO, Context, Finding, status

SBOM_LEAF = "/sboms/tritonbuild.cdx.json"
ELF_MAGIC = b"\x7fELF"
SCHEMAS = {v.to_version(): v for v in SchemaVersion}


def sbom_member(zf: zipfile.ZipFile) -> str | None:
    """The name of the wheel's ``<name>.dist-info/sboms/tritonbuild.cdx.json``, or None."""
    return next((n for n in sbom_members(zf) if n.count("/") == 2 and n.endswith(SBOM_LEAF)), None)


def _document(zf: zipfile.ZipFile, name: str) -> tuple[dict[str, Any] | None, str]:
    """The SBOM as JSON that validates against its CycloneDX schema, or None and what is wrong with it."""
    try:
        text = zipguard.read_text(zf, name)
        data = json.loads(text)
    except zipguard.BadWheel as exc:
        return None, str(exc)
    except RecursionError:
        return None, f"{name} is JSON nested too deep to read"
    except ValueError as exc:
        return None, f"{name} is not JSON ({exc})"
    if not isinstance(data, dict) or data.get("bomFormat") != "CycloneDX":
        return None, f"{name} is not a CycloneDX document (no \"bomFormat\": \"CycloneDX\")"
    schema = SCHEMAS.get(str(data.get("specVersion")))
    if schema is None:
        return None, f"{name} says specVersion {printable(str(data.get('specVersion'))[:20])}, not one of " \
                     f"{', '.join(sorted(SCHEMAS))}"
    # imported here: jsonschema's format checkers build ~40 grammars at import (0.9 s), which a no-op must not pay
    from cyclonedx.validation.json import JsonStrictValidator

    try:
        error = JsonStrictValidator(schema).validate_str(text)
    except RecursionError:
        return None, f"{name} is JSON nested too deep to validate"
    if error is not None:
        return None, f"{name} does not validate against CycloneDX {schema.to_version()}: " \
                     f"{printable(' '.join(str(error).split()))[:300]}"
    return data, ""


def _files(data: dict[str, Any]) -> dict[str, set[str | None]]:
    """The ``file`` components (nested ones too): name -> the SHA-256 each entry for it gives (None: one gives
    none)."""
    out: dict[str, set[str | None]] = {}
    todo = list(data.get("components") or [])
    while todo:
        comp = todo.pop()
        todo += comp.get("components") or []
        if comp.get("type") == "file":
            hashes = {h.get("alg"): h.get("content") for h in comp.get("hashes") or []}
            sha = hashes.get("SHA-256")
            out.setdefault(str(comp.get("name")), set()).add(sha.lower() if isinstance(sha, str) else None)
    return out


def _conflicts(listed: dict[str, set[str | None]]) -> list[str]:
    """File components listed more than once with different SHA-256s."""
    return [f"{printable(n)} is listed more than once in the SBOM with conflicting SHA-256s"
            for n, shas in sorted(listed.items(), key=lambda kv: kv[0]) if len(shas) > 1]


def _accounts(zf: zipfile.ZipFile, listed: dict[str, set[str | None]]) -> list[str]:
    """What the SBOM gets wrong about the wheel's ELF files: one not listed, one listed without a SHA-256, one whose
    sha256 differs, a listed file the wheel lacks."""
    bad, names = [], set(zf.namelist())
    for info in zf.infolist():
        if info.is_dir() or zipguard.head(zf, info) != ELF_MAGIC:
            continue
        shas = listed.get(info.filename)
        if shas is None:
            bad.append(f"{printable(info.filename)} is an ELF file of the wheel the SBOM does not list")
        elif len(shas) > 1:
            continue  # said by _conflicts
        elif shas == {None}:
            bad.append(f"{printable(info.filename)} has no SHA-256 in the SBOM")
        elif shas != {zipguard.digest(zf, info, "sha256")[0].hex()}:
            bad.append(f"{printable(info.filename)} does not match its SHA-256 in the SBOM")
    bad += [f"{printable(n)} is listed in the SBOM but missing from the wheel" for n in sorted(set(listed) - names)]
    return bad


def sbom_members(zf: zipfile.ZipFile) -> list[str]:
    """Every file in the wheel's ``<name>.dist-info/sboms/`` (PEP 770: each one an SBOM)."""
    return [n for n in zf.namelist() if n.count("/") >= 2 and n.split("/")[0].endswith(".dist-info")
            and n.split("/")[1] == "sboms" and not n.endswith("/")]


def _other(zf: zipfile.ZipFile, name: str) -> str | None:
    """What is wrong with an SBOM of ``sboms/`` other than tritonbuild's, or None: not UTF-8, a ``*.json`` that is
    not JSON, CycloneDX that does not validate."""
    try:
        text = zipguard.read_text(zf, name)
    except zipguard.BadWheel as exc:
        return str(exc)
    if not name.endswith(".json"):
        return None
    try:
        data = json.loads(text)
    except RecursionError:
        return f"{printable(name)} is JSON nested too deep to read"
    except ValueError as exc:
        return f"{printable(name)} is not JSON ({printable(str(exc))[:100]})"
    if (isinstance(data, dict) and data.get("bomFormat") == "CycloneDX") or name.endswith(".cdx.json"):
        return _document(zf, name)[1] or None
    return None


def _missing(ctx: Context) -> Finding:
    """The finding for a wheel without tritonbuild's SBOM: a failure when it has tritonbuild's build info."""
    if ctx.info is not None or ctx.info_problem is not None:
        return Finding("sbom", "fail", f"built by tritonbuild (it has {BUILD_INFO}) but its SBOM "
                       f"(.dist-info{SBOM_LEAF}) is missing")
    return Finding("sbom", "note", f"no SBOM (.dist-info{SBOM_LEAF}): not built by tritonbuild (no {BUILD_INFO})")


class Sbom:
    name = "sbom"

    def applies(self, ctx: Context) -> bool:
        return True

    def run(self, ctx: Context) -> list[Finding]:
        name = sbom_member(ctx.zf)
        others = [f for n in sbom_members(ctx.zf) if n != name and (f := _other(ctx.zf, n))]
        if name is None:
            return [_missing(ctx)] + ([Finding(self.name, "fail", "; ".join(others[:3]))] if others else [])
        data, problem = _document(ctx.zf, name)
        if data is None:
            return [Finding(self.name, "fail", "; ".join([problem, *others][:3]))]
        listed = _files(data)
        try:
            bad = _conflicts(listed) + _accounts(ctx.zf, listed)
        except zipguard.BadWheel as exc:
            bad = [str(exc)]
        bad += others
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        return [Finding(self.name, status(not bad), "; ".join(bad[:3]) + more or
                        f"CycloneDX {data.get('specVersion')}, {len(data.get('components') or [])} components; "
                        f"the wheel's {len(listed)} ELF files listed with their SHA-256")]
