"""The SBOM check: the wheel's ``.dist-info/sboms/tritonbuild.cdx.json`` (PEP 770) is CycloneDX that validates
against its schema (cyclonedx-python-lib's own validator) and accounts for the wheel: every ELF file in it is a
``file`` component with its sha256, and no file component names a member the wheel lacks. A wheel without one
(the official wheel, an older tritonbuild's) gets a note, not a failure, as a missing ``_build_info.json`` does."""

from __future__ import annotations

import json
import zipfile
from typing import Any

from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tritonbuild.printable import printable
from tritonbuild.wheel import zipguard
from tritonbuild.wheel.checks.base import Context, Finding, status

SBOM_LEAF = "/sboms/tritonbuild.cdx.json"
ELF_MAGIC = b"\x7fELF"
SCHEMAS = {v.to_version(): v for v in SchemaVersion}


def sbom_member(zf: zipfile.ZipFile) -> str | None:
    """The name of the wheel's ``<name>.dist-info/sboms/tritonbuild.cdx.json``, or None."""
    return next((n for n in zf.namelist() if n.count("/") == 2 and n.split("/")[0].endswith(".dist-info")
                 and n.endswith(SBOM_LEAF)), None)


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
    try:
        error = JsonStrictValidator(schema).validate_str(text)
    except RecursionError:
        return None, f"{name} is JSON nested too deep to validate"
    if error is not None:
        return None, f"{name} does not validate against CycloneDX {schema.to_version()}: " \
                     f"{printable(' '.join(str(error).split()))[:300]}"
    return data, ""


def _files(data: dict[str, Any]) -> dict[str, str | None]:
    """The ``file`` components (nested ones too): name -> their SHA-256 (None: they give none)."""
    out: dict[str, str | None] = {}
    todo = list(data.get("components") or [])
    while todo:
        comp = todo.pop()
        todo += comp.get("components") or []
        if comp.get("type") == "file":
            hashes = {h.get("alg"): h.get("content") for h in comp.get("hashes") or []}
            out[str(comp.get("name"))] = hashes.get("SHA-256")
    return out


def _accounts(zf: zipfile.ZipFile, listed: dict[str, str | None]) -> list[str]:
    """What the SBOM gets wrong about the wheel's ELF files: one not listed, one whose sha256 differs, a listed
    file the wheel lacks."""
    bad, names = [], set(zf.namelist())
    for info in zf.infolist():
        if info.is_dir() or zipguard.head(zf, info) != ELF_MAGIC:
            continue
        if info.filename not in listed:
            bad.append(f"{printable(info.filename)} is an ELF file of the wheel the SBOM does not list")
        elif listed[info.filename] != zipguard.digest(zf, info, "sha256")[0].hex():
            bad.append(f"{printable(info.filename)} does not match its SHA-256 in the SBOM")
    bad += [f"{printable(n)} is listed in the SBOM but missing from the wheel" for n in sorted(set(listed) - names)]
    return bad


class Sbom:
    name = "sbom"

    def applies(self, ctx: Context) -> bool:
        return True

    def run(self, ctx: Context) -> list[Finding]:
        name = sbom_member(ctx.zf)
        if name is None:
            return [Finding(self.name, "note", "no SBOM (.dist-info/sboms/tritonbuild.cdx.json): not built by "
                            "tritonbuild")]
        data, problem = _document(ctx.zf, name)
        if data is None:
            return [Finding(self.name, "fail", problem)]
        listed = _files(data)
        try:
            bad = _accounts(ctx.zf, listed)
        except zipguard.BadWheel as exc:
            bad = [str(exc)]
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        return [Finding(self.name, status(not bad), "; ".join(bad[:3]) + more or
                        f"CycloneDX {data.get('specVersion')}, {len(data.get('components') or [])} components; "
                        f"the wheel's {len(listed)} ELF files listed with their SHA-256")]
