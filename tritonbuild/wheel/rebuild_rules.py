"""What ``tritonbuild rebuild`` takes from a provenance and from the user (edge: reads the provenance file, finds an
interpreter on this machine). The classification of every field is ``tritonbuild.wheel.provenance_fields``; this
module applies it: the file read with a size cap, refused when a field is unclassified or locates code (or reaches
a host) without ``--trust-provenance`` or the user's own flag, the source and interpreter chosen, a recorded
relative plugin dir resolved, and the plans checked against the claim before any work; after the build, what the
rebuild took from where (``sources_said``, ``machine_said``) and what differs from the claim (``differences``), as
lines the command says."""

from __future__ import annotations

import json
import posixpath
import re
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonbuild.errors import UserError
from tritonbuild.settings.model import SPEC_BY_NAME, Settings, show
from tritonbuild.system.fileutil import given_file, sha256_of
from tritonbuild.wheel import attestation, zipguard
from tritonbuild.wheel import provenance_fields as fields

if TYPE_CHECKING:
    from tritonbuild.plan import Plan

# What a build without --reproducible may give differently on each run, though the source and settings are the same.
NOT_PROMISED = ("the zip members' dates; the build machine's directories in triton/_build_info.json (plan_key, "
                "source.root, source.checkout, the backends' and patches' paths) and in the SBOM, and the SBOM's "
                "time; the compiled libraries (the build dirs in their debug info: no prefix maps, no "
                "SOURCE_DATE_EPOCH)")


@dataclass(frozen=True)
class Read:
    """A provenance file read back: the claim, and its JSON for the table's checks."""

    claim: attestation.Claim
    data: fields.JSON


def read(path: Path) -> Read:
    """The provenance file: a missing, non-regular, huge or malformed file, or one with a field the table does not
    classify, is a ``UserError`` paragraph (exit 2)."""
    kind = given_file(path, "provenance", "Give the <wheel>.provenance.json that `tritonbuild build` published "
                      "next to the wheel.")
    if not kind:
        what = "is not a regular file" if kind is False else "does not exist"
        raise UserError(f"The provenance {show(str(path), 300)} {what}. Give the <wheel>.provenance.json that "
                        "`tritonbuild build` published next to the wheel.")
    try:
        with path.open("rb") as f:
            data = f.read(attestation.MAX_BYTES + 1)
    except OSError as exc:
        raise UserError(f"The provenance {show(str(path), 300)} cannot be read ({exc.strerror or exc}). Nothing was "
                        "built.") from None
    claim = attestation.parse(data, str(path))
    obj: fields.JSON = attestation.read_statement(data)
    odd = fields.unclassified(obj)
    if odd:
        raise UserError(f"The provenance {show(str(path), 300)} has fields tritonbuild never writes: "
                        f"{', '.join(odd)}. Nothing was built; give the <wheel>.provenance.json that `tritonbuild "
                        "build` published next to the wheel, unedited.")
    return Read(claim, obj)


def refuse_untrusted(read: Read, where: str, given: frozenset[str], trust: bool) -> None:
    """Exit 2 (``UserError``) naming every field that locates code or reaches a host which neither
    ``--trust-provenance`` nor the user's own flag (``given``: ``--source``, ``--plugin-dir``, ``--llvm``)
    supplies: before anything is cloned, fetched or configured."""
    if trust:
        return
    found = fields.refusals(read.data, given)
    if found:
        raise fields.refusal(where, found, read.claim.commit)


def source(claim: attestation.Claim, given: str | None, trust: bool) -> str:
    """The source to rebuild: ``--source`` as the user typed it; with ``--trust-provenance`` only, the provenance's
    git URL or the absolute path its build recorded, which must exist (``refuse_untrusted`` ran before)."""
    if given:
        return given
    if not trust:
        raise UserError(f"Pass --source with a checkout at commit {claim.commit}: a provenance never says where "
                        "the code is. Nothing was built.")
    if "://" in claim.source or claim.source.startswith("git@"):
        return claim.source
    where = Path(claim.source)
    if not where.is_absolute() or not where.is_dir():
        what = "is not an absolute path" if not where.is_absolute() else "does not exist on this machine"
        raise UserError(f"The source {show(claim.source, 300)} (from the provenance: where its wheel was built from) "
                        f"{what}. Nothing was built; pass --source with a checkout at commit {claim.commit}.")
    return str(where)


def _recorded_plugin_paths(claim: attestation.Claim) -> list[str]:
    return [d["annotations"]["path"] for n, d in claim.dependencies.items()
            if n.startswith("plugin:") and isinstance(d.get("annotations"), dict)
            and isinstance(d["annotations"].get("path"), str) and d["annotations"]["path"].startswith("/")]


def plugin_dirs(claim: attestation.Claim) -> tuple[str, ...]:
    """The provenance's plugin dirs for a trusted rebuild: a relative one (as typed in the build's directory,
    ``../triton-shared``) is the absolute path the same provenance recorded for that plugin (the one whose path
    ends with it), never resolved against this rebuild's current directory."""
    raw = claim.settings.get("plugin_dirs") or []
    recorded = _recorded_plugin_paths(claim)
    out = []
    for entry in raw:
        if entry.startswith(("/", "git+", "git@")) or "://" in entry:
            out.append(entry)
            continue
        tail = "/".join(p for p in posixpath.normpath(entry).split("/") if p not in ("..", "."))
        found = [p for p in recorded if tail and (p == "/" + tail or p.endswith("/" + tail))]
        if len(found) != 1:
            what = "no recorded plugin path ends with it" if not found else f"{len(found)} recorded paths end with it"
            raise UserError(f"The provenance's plugin dir {show(entry, 300)} is relative to the directory its build "
                            f"ran in, and {what}. Nothing was built; pass --plugin-dir with the plugin's checkout.")
        out.append(found[0])
    return tuple(out)


def check_plugin_count(claim: attestation.Claim, given: tuple[str, ...]) -> None:
    """``--plugin-dir`` replaces the provenance's plugin dirs one for one: another count would rebuild another
    wheel (a plugin left out without a word), so it is refused (exit 2) before any work."""
    recorded = claim.settings.get("plugin_dirs") or []
    if given and isinstance(recorded, list) and len(given) != len(recorded):
        names = ", ".join(show(str(r), 120) for r in recorded) or "none"
        raise UserError(f"The provenance's build had {len(recorded)} plugin dir(s) ({names}) and --plugin-dir gave "
                        f"{len(given)}. Nothing was built; pass one --plugin-dir for each, in the provenance's "
                        "order (a checkout of that plugin at the commit the provenance names).")


def not_promised(claim: attestation.Claim) -> str | None:
    """What to say first about a wheel built without ``--reproducible``: byte identity was never promised."""
    if claim.settings.get("reproducible") is True:
        return None
    return (f"{claim.wheel} was built without --reproducible: byte identity was never promised for it, so the "
            f"rebuild may differ where two builds of the same plan differ: {NOT_PROMISED}. The comparison below "
            "still names every difference; for a check that can pass, build with --reproducible.")


def interpreter(claim: attestation.Claim, given: str | None, env: Mapping[str, str]) -> str:
    """The interpreter to rebuild with: ``--python``, else the one running tritonbuild when it is the claim's
    major.minor (and free-threaded or not alike), else the first of that version ``gather.pythons.find`` finds (on
    PATH, in /opt/python, pyenv's and uv's dirs). Never the provenance's ``python.path``: it is not run."""
    import sysconfig

    from tritonbuild.gather import pythons

    if given:
        return given
    m = re.match(r"^cp3(\d{1,2})(t?)$", claim.abi)
    if m is None:
        raise UserError(f"The provenance's interpreter ABI {show(claim.abi)} is not a CPython one (cp311, cp313t): "
                        "nothing was built; pass --python with an interpreter of the wheel's Python.")
    free = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    if sys.version_info[:2] == (3, int(m.group(1))) and free == bool(m.group(2)):
        return sys.executable
    try:
        return pythons.find(f"3.{m.group(1)}{m.group(2)}", env)
    except UserError as exc:
        raise UserError(f"The provenance's wheel is for {claim.abi}, and rebuild never runs the provenance's "
                        f"interpreter ({show(claim.python, 300)}): {exc} Nothing was built; or pass --python."
                        ) from None


def check_plans(claim: attestation.Claim, keep: list[Path], plans: list[Plan]) -> None:
    """What the rebuild's plans must be before any work (besides the output dir's own check): of the claimed source
    commit and Python ABI, publishing into a dir that does not hold the subject (``keep``)."""
    p = plans[0]
    if p.source.commit != claim.commit:
        raise UserError(f"The source {p.source.checkout or p.source.root} is at commit {p.source.commit}, but "
                        f"the provenance's wheel was built from {claim.commit}. Nothing was built; check out "
                        f"{claim.commit} there, or pass --source with a checkout at that commit.")
    if p.wheel.python_abi != claim.abi:
        raise UserError(f"The interpreter {p.python} is {p.wheel.python_abi}, but the provenance's wheel is for "
                        f"{claim.abi}. Nothing was built; pass --python with a {claim.abi} interpreter.")
    out = Path(p.wheel.out_dir).resolve()
    if any(out == k.resolve() for k in keep):
        raise UserError(f"The output dir {out} holds the provenance and the wheel being checked: the rebuilt "
                        "wheel would replace it. Nothing was built; pass --out with another directory.")


def sources_said(claim: attestation.Claim, kw: Mapping[str, Any], *, source_given: bool, python_given: bool,
                 interpreter: str, trust: bool) -> list[str]:
    """Each value taken from the provenance that locates code or reaches a host (with --trust-provenance), the
    source and where it came from, and the interpreter: one line each. ``kw``: the rebuild's request values."""
    lines = []
    if trust:
        for name, value in kw.items():
            row = fields.BY_PATH.get(f"{fields.SETTINGS}.{name}.value")
            if row and row.use == "trusted" and not SPEC_BY_NAME[name].identity and value not in (None, (), []):
                shown = list(value) if isinstance(value, tuple) else value
                lines.append(f"taken from the provenance: {name} = {show(shown, 400)}")
    lines.append(f"source: {kw['source']} ({'--source' if source_given else 'from the provenance'}), "
                 f"commit {claim.commit}")
    lines.append(f"from this machine: python = {interpreter} ({'--python' if python_given else claim.abi}; the "
                 f"provenance's {claim.python} is never run)")
    return lines


def machine_said(claim: attestation.Claim, plan_settings: Settings, flags: tuple[str, ...]) -> list[str]:
    """The settings this machine gives instead of the provenance (``attestation.taken_from_machine``): a line for
    each not at its default here, or whose value in the provenance differs (that one is said not to be used), then
    one line naming the rest."""
    lines, rest = [], []
    for name in attestation.taken_from_machine(flags):
        (ours, origin), theirs = plan_settings.given(name), claim.settings.get(name)
        differs = name in claim.settings and json.dumps(theirs) != json.dumps(ours)
        if not differs and ours == SPEC_BY_NAME[name].default:
            rest.append(name)
            continue
        unused = f"; the provenance's {show(theirs, 400)} is not used" if differs else ""
        lines.append(f"from this machine: {name} = {show(ours, 400)} ({origin}){unused}")
    if rest:
        lines.append(f"from this machine, at their defaults as in the provenance: {', '.join(rest)}")
    return lines


def differences(claim: attestation.Claim, plan: Plan, rebuilt: Path, subject: Path) -> dict[str, list[str]]:
    """What differs between the claim and the rebuild, by kind: the settings, the dependencies (those of the
    provenance ``build`` published beside the ``rebuilt`` wheel), the settings new since the provenance, and the
    wheels themselves (``subject``: the provenance's wheel when it is at hand)."""
    ours = _rebuilt_claim(rebuilt)
    found = {"settings": attestation.setting_differences(claim, plan.settings),
             "dependencies": attestation.dependency_differences(claim, ours.dependencies if ours else {}),
             "new since the provenance": attestation.new_settings(claim, plan.settings)}
    found.update(_wheel_differences(subject, claim.sha256, rebuilt))
    return found


def _rebuilt_claim(wheel: Path) -> attestation.Claim | None:
    """The claim of the provenance ``build`` published next to the rebuilt wheel (None if it is not there)."""
    path = wheel.with_name(attestation.file_name(wheel.name))
    return read(path).claim if path.is_file() else None


def _wheel_differences(subject: Path, sha256: str, rebuilt: Path) -> dict[str, list[str]]:
    """What differs between the subject wheel (when it is at hand and is the subject: same sha256) and the rebuilt
    one: their ``_build_info.json`` fields (with the settings that decide each) and their members (size or CRC)."""
    if not subject.is_file():
        return {"subject": [f"{subject} is not here: only the sha256s are compared (pass --wheel)"]}
    if sha256_of(subject) != sha256:
        return {"subject": [f"{subject} is not the provenance's wheel (another sha256): not compared"]}
    try:
        with zipguard.open_wheel(subject) as za, zipguard.open_wheel(rebuilt) as zb:
            info = [json.loads(zipguard.read_text(z, "triton/_build_info.json")) if "triton/_build_info.json"
                    in z.namelist() else {} for z in (za, zb)]
            members = _member_differences(za, zb)
    except (zipguard.BadWheel, ValueError) as exc:
        return {"subject": [f"{subject} cannot be read as a wheel ({exc}): its members are not compared"]}
    return {"build info": attestation.build_info_differences(info[0], info[1]), "members": members}


def _member_table(zf: zipfile.ZipFile) -> dict[str, tuple[int, int]]:
    """Each member's size and CRC by name, the dist-info dir's name (which holds the version) made comparable."""
    out = {}
    for i in zf.infolist():
        head, _, rest = i.filename.partition("/")
        out[f"<dist-info>/{rest}" if head.endswith(".dist-info") else i.filename] = (i.file_size, i.CRC)
    return out


def _member_differences(za: zipfile.ZipFile, zb: zipfile.ZipFile, limit: int = 40) -> list[str]:
    """Members present in one wheel only, or in both with another size or CRC."""
    a, b = _member_table(za), _member_table(zb)
    lines = [f"{n}: only in the subject" for n in sorted(set(a) - set(b))]
    lines += [f"{n}: only in the rebuild" for n in sorted(set(b) - set(a))]
    lines += [f"{n}: differs ({a[n][0]} bytes in the subject, {b[n][0]} rebuilt)" for n in sorted(set(a) & set(b))
              if a[n] != b[n]]
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])
