"""``tritonbuild rebuild PROVENANCE``: build again what a provenance file (``<wheel>.provenance.json``) says was
built, through the same request path as ``build`` (``tritonbuild.request`` with the provenance's data settings as
the flag values), and say whether the result is byte-identical to the provenance's subject (exit 0) or what differs
(exit 1). The provenance is hostile input: data, never a locator of code. What may be taken from it is
``tritonbuild.wheel.provenance_fields``; the rules that apply it (the file read, the refusal, the source and
interpreter chosen, the plans checked) are ``tritonbuild.wheel.rebuild_rules``. A malformed or untrusted one is exit
2 before any work."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from tritonbuild.cli.options import NonEmpty, cache_dir_option, verbosity_options
from tritonbuild.errors import UserError

if TYPE_CHECKING:
    from tritonbuild.reporter import Reporter


@click.command()
@click.argument("provenance", type=click.Path())
@click.option("--out", "-o", default="rebuilt", show_default=True,
              type=NonEmpty("the current directory", "name the output directory, or leave --out out for ./rebuilt"),
              help="Output directory for the rebuilt wheel (never the one that holds the provenance).")
@cache_dir_option()
@click.option("--source", "-s", help="A checkout (or git URL) at the provenance's source commit; needed unless "
                                     "--trust-provenance (a provenance never says where the code is).")
@click.option("--plugin-dir", "plugin_dirs", multiple=True,
              help="A plugin dir (repeatable) instead of the provenance's (its commit is compared).")
@click.option("--llvm", help="The LLVM (auto, system, download, source or a prefix path) instead of the provenance's.")
@click.option("--python", help="Interpreter to build with (default: this machine's of the provenance's Python "
                               "version; the provenance's interpreter path is never run; its ABI must match).")
@click.option("--wheel", "subject", type=click.Path(),
              help="The subject wheel, for a member-by-member diff (default: the file of its name next to the "
                   "provenance).")
@click.option("--trust-provenance", is_flag=True,
              help="Take from the provenance the fields that locate code or reach a host (the source's path or "
                   "URL, cmake_args, patches, plugin dirs, deps, the LLVM and its mirror, ...; each is printed); "
                   "without it (or the flag that replaces each), a provenance that sets one is refused before any "
                   "work.")
@click.option("--no-smoke-test", is_flag=True, help="Skip the wheel's build-time checks before publishing it: the "
              "import, and with it the compile check (and the RECORD and library checks).")
@verbosity_options
def rebuild(provenance: str, out: str, cache_dir: str | None, source: str | None, plugin_dirs: tuple[str, ...],
            llvm: str | None, python: str | None, subject: str | None, trust_provenance: bool,
            no_smoke_test: bool, verbose: int, quiet: int) -> int:
    """Rebuild a wheel from its provenance (same source commit, plugins, LLVM and settings) and check that the
    result is byte-identical to it: exit 0 when it is, 1 when not (naming the sha256s, the settings and
    dependencies that differ and the wheel members that differ), 2 for a malformed or untrusted provenance. A
    provenance is data: the source is --source (or, with --trust-provenance, the provenance's)."""
    from tritonbuild import request
    from tritonbuild.cli.options import environment, request_of
    from tritonbuild.execute import build as build_mod
    from tritonbuild.execute.runs import UNCHECKED
    from tritonbuild.report import render
    from tritonbuild.wheel import attestation, rebuild_rules

    path = Path(provenance)
    read = rebuild_rules.read(path)
    claim = read.claim
    given = {k: v for k, v in (("plugin_dirs", plugin_dirs), ("llvm", llvm)) if v}
    typed = frozenset(f for f, v in (("--source", source), ("--plugin-dir", plugin_dirs), ("--llvm", llvm)) if v)
    rebuild_rules.refuse_untrusted(read, str(path), typed, trust_provenance)
    rebuild_rules.check_plugin_count(read.claim, plugin_dirs)
    console = render.console(verbosity=verbose - quiet)
    promise = rebuild_rules.not_promised(claim)
    if promise:
        console.warn(promise, topic="note")
    if trust_provenance and "plugin_dirs" not in given and claim.settings.get("plugin_dirs"):
        given["plugin_dirs"] = rebuild_rules.plugin_dirs(claim)
    interpreter = rebuild_rules.interpreter(claim, python, environment())
    flags = request.flag_settings()
    kw, notes = attestation.rebuild_request(claim, source=rebuild_rules.source(claim, source, trust_provenance),
                                            python=interpreter, cache_dir=cache_dir, out=out, flags=flags,
                                            trust=trust_provenance, given=given)
    _print_sources(claim, kw, source, python, interpreter, trust_provenance, console)
    for note in notes:
        console.warn(note, topic="note")
    req = request_of(kw, smoke_test=not no_smoke_test)
    plans = request.provisioned_plans(req, console, check=_checker(claim, [path.parent, Path(subject or path).parent]))
    if len(plans) != 1:
        raise UserError(f"The provenance's settings make {len(plans)} plans; a rebuild makes one wheel.")
    plan = plans[0]
    if console.verbosity >= 0:
        render.print_plan(plan, console)
    _print_machine(claim, plan.settings, flags, console)
    if not req.smoke_test:
        console.note(UNCHECKED)
    result = build_mod.build_wheel(plan, console, env=req.env, smoke=req.smoke_test)
    return _report(claim, plan, result, Path(subject) if subject else path.parent / claim.wheel, promise, console)


def _checker(claim: Any, keep: list[Path]) -> Any:
    """The check ``provisioned_plans`` runs before any work: the output dir's, then ``rebuild_rules``'."""
    from tritonbuild.execute import outdir
    from tritonbuild.wheel import rebuild_rules

    def check(plans: list[Any]) -> None:
        outdir.check(plans)
        rebuild_rules.check_plans(claim, keep, plans)

    return check


def _print_sources(claim: Any, kw: dict[str, Any], source: str | None, python: str | None, interpreter: str,
                   trust: bool, console: Reporter) -> None:
    """Each value taken from the provenance that locates code or reaches a host (with --trust-provenance), the
    source and where it came from, and the interpreter."""
    from tritonbuild.settings.model import show
    from tritonbuild.wheel import provenance_fields as fields

    if trust:
        for name, value in kw.items():
            row = fields.BY_PATH.get(f"{fields.SETTINGS}.{name}.value")
            if row is not None and row.use == "trusted" and name != "source" and value not in (None, (), []):
                shown = list(value) if isinstance(value, tuple) else value
                console.plain(f"taken from the provenance: {name} = {show(shown, 400)}")
    console.plain(f"source: {kw['source']} ({'--source' if source else 'from the provenance'}), commit {claim.commit}")
    console.plain(f"from this machine: python = {interpreter} ({'--python' if python else claim.abi}; the "
                  f"provenance's {claim.python} is never run)")


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


def _report(claim: Any, plan: Any, result: Any, wheel: Path, promise: str | None, console: Reporter) -> int:
    """The subject's and the rebuild's sha256, and what differs when they do: the command's exit code (0: the
    same wheel, 1: not)."""
    from tritonbuild.wheel import attestation

    same = result.sha256 == claim.sha256
    console.result(f"subject: {claim.wheel} sha256 {claim.sha256}")
    console.result(f"rebuilt: {result.wheel} sha256 {result.sha256}")
    if same:
        console.result("identical: yes, the rebuild is byte for byte the provenance's wheel")
        return 0
    ours = _rebuilt_claim(result.wheel)
    found = {"settings": attestation.setting_differences(claim, plan.settings),
             "dependencies": attestation.dependency_differences(claim, ours.dependencies if ours else {}),
             "new since the provenance": attestation.new_settings(claim, plan.settings)}
    found.update(_wheel_differences(wheel, claim.sha256, result.wheel))
    why = " (built without --reproducible: byte identity was never promised, see the note above)" if promise else ""
    console.result(f"identical: no, sha256 {claim.sha256} in the provenance, {result.sha256} rebuilt{why}")
    if result.wheel.name != claim.wheel:
        console.result(f"  the wheel's name differs: {claim.wheel} in the provenance, {result.wheel.name} rebuilt")
    for what, lines in found.items():
        for line in lines:
            console.result(f"  {what}: {line}")
    return 1


def _rebuilt_claim(wheel: Path) -> Any:
    """The claim of the provenance ``build`` published next to the rebuilt wheel (None if it is not there)."""
    from tritonbuild.wheel import attestation, rebuild_rules

    path = wheel.with_name(attestation.file_name(wheel.name))
    return rebuild_rules.read(path).claim if path.is_file() else None


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
