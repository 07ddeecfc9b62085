"""``tritonbuild rebuild PROVENANCE``: build again what a provenance file (``<wheel>.provenance.json``) says was
built, through the same request path as ``build`` (``tritonbuild.request`` with the provenance's settings as the
flag values), and say whether the result is byte-identical to the provenance's subject (exit 0) or what differs
(exit 1). The provenance is hostile input (``tritonbuild.wheel.attestation.parse``): a malformed one is exit 2
before any work."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tritonbuild.errors import UserError

if TYPE_CHECKING:
    from tritonbuild.reporter import Reporter


def read_claim(path: Path) -> Any:
    """The provenance file's claim (``attestation.Claim``): a missing, non-regular, huge or malformed file is a
    ``UserError`` paragraph (exit 2)."""
    from tritonbuild.wheel import attestation

    if not path.is_file():
        what = "is not a regular file" if path.exists() else "does not exist"
        raise UserError(f"The provenance {path} {what}. Give the <wheel>.provenance.json that `tritonbuild build` "
                        "published next to the wheel.")
    try:
        with path.open("rb") as f:
            data = f.read(attestation.MAX_BYTES + 1)
    except OSError as exc:
        raise UserError(f"The provenance {path} cannot be read ({exc.strerror or exc}). Nothing was built.") from None
    return attestation.parse(data, str(path))


def _checker(claim: Any, keep: list[Path]) -> Any:
    """The check ``provisioned_plans`` runs before any work: one plan, of the claimed source commit and Python
    ABI, publishing into a dir that does not hold the subject."""
    from tritonbuild.execute import outdir

    def check(plans: list[Any]) -> None:
        outdir.check(plans)
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

    return check


def _python(claim: Any, given: str | None, env: Any) -> str:
    """The interpreter to rebuild with: ``--python``, else the one running tritonbuild when it is the claim's
    major.minor (and free-threaded or not alike), else the first of that version ``gather.pythons.find`` finds (on
    PATH, in /opt/python, pyenv's and uv's dirs). Never the provenance's ``python.path``: it is not run."""
    import sysconfig

    from tritonbuild.gather import pythons

    if given:
        return given
    m = re.match(r"^cp3(\d{1,2})(t?)$", claim.abi)
    if m is None:
        raise UserError(f"The provenance's interpreter ABI {claim.abi!r} is not a CPython one (cp311, cp313t): "
                        "nothing was built; pass --python with an interpreter of the wheel's Python.")
    free = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    if sys.version_info[:2] == (3, int(m.group(1))) and free == bool(m.group(2)):
        return sys.executable
    try:
        return pythons.find(f"3.{m.group(1)}{m.group(2)}", env)
    except UserError as exc:
        raise UserError(f"The provenance's wheel is for {claim.abi}, and rebuild never runs the provenance's "
                        f"interpreter ({claim.python}): {exc} Nothing was built; or pass --python.") from None


def _source(claim: Any) -> str:
    """The source the provenance names: a git URL, or the absolute path the build recorded, which must exist."""
    if "://" in claim.source or claim.source.startswith("git@"):
        return str(claim.source)
    where = Path(claim.source)
    if not where.is_absolute() or not where.is_dir():
        what = "is not an absolute path" if not where.is_absolute() else "does not exist on this machine"
        raise UserError(f"The source {claim.source} (from the provenance: where its wheel was built from) {what}. "
                        f"Nothing was built; pass --source with a checkout at commit {claim.commit}.")
    return str(where)


@click.command()
@click.argument("provenance", type=click.Path())
@click.option("--out", "-o", default="rebuilt", show_default=True,
              help="Output directory for the rebuilt wheel (never the one that holds the provenance).")
@click.option("--cache-dir", help="Cache root for build dirs, clones and LLVMs.")
@click.option("--source", "-s", help="A local checkout at the provenance's source commit (default: the source the "
                                     "provenance names).")
@click.option("--python", help="Interpreter to build with (default: this machine's of the provenance's Python "
                               "version; the provenance's interpreter path is never run; its ABI must match).")
@click.option("--wheel", "subject", type=click.Path(),
              help="The subject wheel, for a member-by-member diff (default: the file of its name next to the "
                   "provenance).")
@click.option("--trust-provenance", is_flag=True,
              help="Take from the provenance the settings that run a program, load a script or reach a host "
                   "(cmake_args, patches, plugin dirs, deps, the LLVM and its mirror, ...; each is printed); "
                   "without it, a provenance that sets one is refused before any work.")
@click.option("--no-smoke-test", is_flag=True, help="Skip the wheel's build-time checks before publishing it: the "
              "import, and with it the compile check (and the RECORD and library checks).")
def rebuild(provenance: str, out: str, cache_dir: str | None, source: str | None, python: str | None,
            subject: str | None, trust_provenance: bool, no_smoke_test: bool) -> None:
    """Rebuild a wheel from its provenance (same source commit, plugins, LLVM and settings) and check that the
    result is byte-identical to it: exit 0 when it is, 1 when not (naming the sha256s, the settings and
    dependencies that differ and the wheel members that differ), 2 for a malformed or untrusted provenance."""
    from tritonbuild import request
    from tritonbuild.cli.options import environment, request_of
    from tritonbuild.execute import build as build_mod
    from tritonbuild.execute.runs import UNCHECKED
    from tritonbuild.report import render
    from tritonbuild.settings.model import show
    from tritonbuild.wheel import attestation

    path = Path(provenance)
    claim = read_claim(path)
    flags = request.flag_settings()
    found = attestation.untrusted(claim, flags)
    if found and not trust_provenance:
        raise attestation.refuse_untrusted(claim, str(path), found)
    interpreter = _python(claim, python, environment())
    kw, notes = attestation.rebuild_request(claim, source=source or _source(claim), python=interpreter,
                                            cache_dir=cache_dir, out=out, flags=flags)
    console = render.console()
    for name, value in found:
        console.plain(f"taken from the provenance: {name} = {show(value, 400)}")
    console.plain(f"source: {kw['source']} ({'--source' if source else 'from the provenance'}), commit {claim.commit}")
    console.plain(f"from this machine: python = {interpreter} ({'--python' if python else claim.abi}; the "
                  f"provenance's {claim.python} is never run)")
    for note in notes:
        console.warn(note, topic="note")
    req = request_of(kw, smoke_test=not no_smoke_test)
    plans = request.provisioned_plans(req, console, check=_checker(claim, [path.parent, Path(subject or path).parent]))
    if len(plans) != 1:
        raise UserError(f"The provenance's settings make {len(plans)} plans; a rebuild makes one wheel.")
    plan = plans[0]
    render.print_plan(plan, console)
    _print_machine(claim, plan.settings, flags, console)
    if not req.smoke_test:
        console.note(UNCHECKED)
    result = build_mod.build_wheel(plan, console, env=req.env, smoke=req.smoke_test)
    _report(claim, plan, result, Path(subject) if subject else path.parent / claim.wheel, console)


def _print_machine(claim: Any, settings: Any, flags: tuple[str, ...], console: Reporter) -> None:
    """The settings this machine gives instead of the provenance: each not at its default here, or whose value in
    the provenance differs (that one is said not to be used), then one line naming the rest."""
    from tritonbuild.settings.model import SPEC_BY_NAME, show

    rest = []
    for name in attestation_machine(flags):
        ours = settings.get(name, {})
        theirs = claim.settings.get(name)
        differs = name in claim.settings and json.dumps(theirs) != json.dumps(ours.get("value"))
        if not differs and ours.get("value") == SPEC_BY_NAME[name].default:
            rest.append(name)
            continue
        unused = f"; the provenance's {show(theirs, 400)} is not used" if differs else ""
        console.plain(f"from this machine: {name} = {show(ours.get('value'), 400)} "
                      f"({ours.get('origin', 'default')}){unused}")
    if rest:
        console.plain(f"from this machine, at their defaults as in the provenance: {', '.join(rest)}")


def attestation_machine(flags: tuple[str, ...]) -> list[str]:
    from tritonbuild.wheel import attestation

    return attestation.taken_from_machine(flags)


def _report(claim: Any, plan: Any, result: Any, wheel: Path, console: Reporter) -> None:
    from tritonbuild.wheel import attestation

    same = result.sha256 == claim.sha256
    console.plain(f"subject: {claim.wheel} sha256 {claim.sha256}")
    console.plain(f"rebuilt: {result.wheel} sha256 {result.sha256}")
    if same:
        console.plain("identical: yes, the rebuild is byte for byte the provenance's wheel")
        return
    ours = _rebuilt_claim(result.wheel)
    found = {"settings": attestation.setting_differences(claim, plan.settings),
             "dependencies": attestation.dependency_differences(claim, ours.dependencies if ours else {}),
             "new since the provenance": attestation.new_settings(claim, plan.settings)}
    found.update(_wheel_differences(wheel, claim.sha256, result.wheel))
    console.plain(f"identical: no, sha256 {claim.sha256} in the provenance, {result.sha256} rebuilt")
    if result.wheel.name != claim.wheel:
        console.plain(f"  the wheel's name differs: {claim.wheel} in the provenance, {result.wheel.name} rebuilt")
    for what, lines in found.items():
        for line in lines:
            console.plain(f"  {what}: {line}")
    sys.exit(1)


def _rebuilt_claim(wheel: Path) -> Any:
    """The claim of the provenance ``build`` published next to the rebuilt wheel (None if it is not there)."""
    from tritonbuild.wheel import attestation

    path = wheel.with_name(attestation.file_name(wheel.name))
    return read_claim(path) if path.is_file() else None


def _wheel_differences(subject: Path, sha256: str, rebuilt: Path) -> dict[str, list[str]]:
    """What differs between the subject wheel (when it is at hand and is the subject: same sha256) and the rebuilt
    one: their ``_build_info.json`` fields (with the settings that decide each) and their members (size or CRC)."""
    from tritonbuild.fileutil import sha256_of
    from tritonbuild.wheel import attestation, zipguard

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


def _member_differences(za: Any, zb: Any, limit: int = 40) -> list[str]:
    """Members present in one wheel only, or in both with another size or CRC (the dist-info dir's name, which
    holds the version, made comparable)."""
    def table(zf: Any) -> dict[str, tuple[int, int]]:
        out = {}
        for i in zf.infolist():
            head, _, rest = i.filename.partition("/")
            out[f"<dist-info>/{rest}" if head.endswith(".dist-info") else i.filename] = (i.file_size, i.CRC)
        return out

    a, b = table(za), table(zb)
    lines = [f"{n}: only in the subject" for n in sorted(set(a) - set(b))]
    lines += [f"{n}: only in the rebuild" for n in sorted(set(b) - set(a))]
    lines += [f"{n}: differs ({a[n][0]} bytes in the subject, {b[n][0]} rebuilt)" for n in sorted(set(a) & set(b))
              if a[n] != b[n]]
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])
