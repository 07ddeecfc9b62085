"""One declaration per setting, read by attribute (#48): every ``Settings`` field carries its ``Spec`` (``setting``),
``SPECS`` is made from the fields, and no code of the package looks a setting up by its name as a string (the
``o["canary"].origin`` / ``s["wheelhouse"]`` / ``plan.settings.get("canary", {}).get("value")`` of before): it reads
``settings.canary`` and ``settings.origin("canary")``, a name ``origin`` checks against the declared ones."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from tritonbuild.settings import model
from tritonbuild.settings.model import SPEC, SPECS, Settings, Spec, setting, specs_of

PKG = Path(__file__).resolve().parents[2] / "tritonbuild"
SKIP = ("example/tree/", "example/backend_template/", "example/plugin_template/")
NAMES = frozenset(s.name for s in SPECS)
HOLDERS = ("s", "o", "settings", "resolved")  # what a settings mapping was called
# A provenance's claim (``attestation.Claim``) is JSON read from a file, hostile input whose settings attestation
# checks one by one: its own reader, not the settings the plan resolved.
JSON_READERS = ("claim",)


def test_every_field_is_a_setting_declared_with_its_spec_and_specs_are_made_from_them() -> None:
    public = [f for f in dataclasses.fields(Settings) if not f.name.startswith("_")]
    assert [f.name for f in dataclasses.fields(Settings) if f.name.startswith("_")] == ["_given"]  # the origins
    assert [f.name for f in public if not isinstance(f.metadata.get(SPEC), Spec)] == []
    assert [s.name for s in SPECS] == [f.name for f in public] and len(SPECS) == len(model.SPEC_BY_NAME)
    for f, spec in zip(public, SPECS, strict=True):  # the field's default is the spec's, typed
        assert f.default == (tuple(spec.default) if isinstance(spec.default, list) else spec.default), f.name


def test_a_field_declared_without_its_spec_is_refused_by_name() -> None:
    @dataclasses.dataclass(frozen=True)
    class Made:
        jobs: int | None = setting(None, "-j/--jobs", None, "parallel jobs", minimum=1, trust="", local=True,
                                   compiles=False)
        forgotten: int = 3
        _given: dict[str, str] = dataclasses.field(default_factory=dict)

    with pytest.raises(TypeError, match="Made declares forgotten without setting"):
        specs_of(Made)
    kept = specs_of(dataclasses.make_dataclass("Kept", [("jobs", int | None, dataclasses.fields(Made)[0])]))
    assert [(s.name, s.kind, s.flag) for s in kept] == [("jobs", "int", "-j/--jobs")]


def _string_lookups(source: str, rel: str) -> list[str]:
    """Where ``source`` looks a setting up by a string: ``x["name"]`` or ``x.get("name")`` on a settings mapping
    (``HOLDERS``, ``*.settings``) or followed by ``.value``/``.origin``/``["value"]``/``["origin"]``; an
    ``.origin("name")`` of no declared setting; any ``of_report`` or ``Resolved`` outside the model."""
    tree = ast.parse(source, rel)
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        name, holder = _looked_up(node)
        if name in NAMES and (_is_holder(holder) or _reads_resolved(node, parents)):
            found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "origin" \
                and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value not in NAMES:
            found.append(f"{rel}:{node.lineno}: {ast.unparse(node)} (no such setting)")
        if rel != "settings/model.py" and ((isinstance(node, ast.Attribute) and node.attr == "of_report")
                                           or (isinstance(node, ast.Name) and node.id == "Resolved")
                                           or (isinstance(node, ast.alias) and node.name == "Resolved")):
            found.append(f"{rel}:{getattr(node, 'lineno', 0)}: {ast.unparse(node)}")
    return sorted(found, key=lambda line: int(line.split(":")[1]))


def _looked_up(node: ast.AST) -> tuple[object, ast.expr | None]:
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value, node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and node.args and isinstance(node.args[0], ast.Constant):
        return node.args[0].value, node.func.value
    return None, None


def _is_holder(expr: ast.expr | None) -> bool:
    return (isinstance(expr, ast.Name) and expr.id in HOLDERS) or \
        (isinstance(expr, ast.Attribute) and expr.attr == "settings"
         and not (isinstance(expr.value, ast.Name) and expr.value.id in JSON_READERS))


def _reads_resolved(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """Whether what was looked up is read as a resolved value or a report entry (``.value``, ``["origin"]``,
    ``.get("value")``)."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute) and parent.attr == "get":
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and bool(call.args) and isinstance(call.args[0], ast.Constant) \
            and call.args[0].value in ("value", "origin")
    if isinstance(parent, ast.Attribute):
        return parent.attr in ("value", "origin")
    return isinstance(parent, ast.Subscript) and isinstance(parent.slice, ast.Constant) \
        and parent.slice.value in ("value", "origin")


def test_the_check_finds_each_old_way_of_reading_a_setting() -> None:
    old = ('origin = o["canary"].origin\nif s["wheelhouse"]: pass\n'
           'v = plan.settings.get("canary", {}).get("value")\nw = report["jobs"]["value"]\n'
           'x = settings.origin("canaryy")\ny = Settings.of_report(plan.settings)\n'
           'from tritonbuild.settings.model import Resolved\n')
    assert [line.split(": ", 1)[0] for line in _string_lookups(old, "x.py")] == [
        "x.py:1", "x.py:2", "x.py:3", "x.py:4", "x.py:5", "x.py:6", "x.py:7"]
    fine = 'a = s.canary\nb = s.origin("canary")\nc = data["llvm"]\nd = plan.settings.report()\n'
    assert _string_lookups(fine, "x.py") == []


# Outside settings/model.py a setting's name is no key at all: not of what was typed (``request.flags["canary"]``: None
# unless the flag was given, blind to the variable and the recipe: #48's llvm compat bug), not of the specs, a
# report or ``asdict``, not an attribute by ``getattr``, not an argument of the model's name-taking helpers.
NAME_TAKERS = ("env_resolved", "given")  # given: Settings.given, a value as the plan's JSON has it


def _keyed_by_name(source: str, rel: str) -> list[str]:
    """Where ``source`` reads a setting by a constant name: ``<...>.flags[...]``/``.get``, ``SPEC_BY_NAME[...]``,
    ``<...>.report()[...]``, ``asdict(...)[...]``, ``getattr(x, "name")``, ``env_resolved("name", env)``,
    ``settings.given("name")``."""
    found = []
    for node in ast.walk(ast.parse(source, rel)):
        name, holder = _looked_up(node)
        if name in NAMES and _names_settings(holder):
            found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Call) and _called(node) in ("getattr", *NAME_TAKERS) and any(
                isinstance(a, ast.Constant) and a.value in NAMES for a in node.args):
            found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return sorted(found, key=lambda line: int(line.split(":")[1]))


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _names_settings(holder: ast.expr | None) -> bool:
    if isinstance(holder, (ast.Name, ast.Attribute)):
        return (holder.id if isinstance(holder, ast.Name) else holder.attr) in ("flags", "SPEC_BY_NAME")
    return isinstance(holder, ast.Call) and _called(holder) in ("report", "asdict")


def test_the_check_finds_each_way_of_keying_a_setting_by_its_name() -> None:
    bad = ('a = req.flags["canary"]\nb = request.flags.get("source")\nc = flags["jobs"]\n'
           'd = SPEC_BY_NAME["http_retries"].default\ne = model.SPEC_BY_NAME["llvm"]\n'
           'f = plan.settings.report()["canary"]\ng = dataclasses.asdict(s)["jobs"]\nh = asdict(s).get("jobs")\n'
           'i = getattr(settings, "canary")\nj = env_resolved("llvm", env)\n'
           'k = model.env_resolved("cache_root", env)\nl = plan.settings.given("jobs")\n')
    assert [line.split(": ", 1)[0] for line in _keyed_by_name(bad, "x.py")] == [f"x.py:{n}" for n in range(1, 13)]
    fine = ('a = req.flags[name]\nb = data["canary"]\nc = getattr(s, name)\nd = SPEC_BY_NAME[n]\n'
            'e = s.origin("canary")\nf = getattr(s, "nope")\ng = env_resolved(name, env)\nh = s.given(name)\n')
    assert _keyed_by_name(fine, "x.py") == []


def test_no_code_of_the_package_looks_a_setting_up_by_a_string() -> None:
    found = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if not rel.startswith(SKIP):
            found += _string_lookups(path.read_text(), rel)
            found += [] if rel == "settings/model.py" else _keyed_by_name(path.read_text(), rel)
    assert found == [], "read settings as attributes (settings.x, settings.origin('x')):\n" + "\n".join(found)


# A setting is consumed where its value is read as ``s.name`` / ``settings.name`` / ``<...>.settings.name`` (the
# names a ``Settings`` goes by; ``Settings.name``, its default, is no consumer). The modules that only describe the
# settings (the declarations, README's table, the recipe schema) consume none.
DESCRIBERS = ("settings/model.py", "settings/docs.py", "settings/recipes.py")


def _settings_read(source: str) -> set[str]:
    return {node.attr for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load) and node.attr in NAMES and _is_settings(node.value)}


def _is_settings(expr: ast.expr) -> bool:
    """``s``, ``settings``, ``given`` (what the environment gives, outside a plan), ``<...>.settings`` or a call of
    ``env_settings(...)`` (architecture.md's way to read a setting outside a plan)."""
    call = expr.func if isinstance(expr, ast.Call) else None
    return ((isinstance(expr, ast.Name) and expr.id in ("s", "settings", "given"))
            or (isinstance(expr, ast.Attribute) and expr.attr == "settings")
            or (isinstance(call, ast.Name) and call.id == "env_settings")
            or (isinstance(call, ast.Attribute) and call.attr == "env_settings"))


def test_the_consumer_check_sees_only_reads_of_a_settings_value() -> None:
    assert _settings_read("a = s.jobs\nb = plan.settings.canary\nc = settings.llvm + 1\nd = env_settings(e).offline"
                          "\ne = model.env_settings(e).strict\nf = given.container\n") == {
        "jobs", "canary", "llvm", "offline", "strict", "container"}
    assert _settings_read("a = line.strip()\nb = Settings.jobs\ns.canary = 1\nc = plan.source\n") == set()


def test_every_setting_is_read_by_some_consumer() -> None:
    """A declared setting that nothing reads is accepted on the command line, shown, recorded in the provenance and
    does nothing: a new setting's one declaration comes with its consumer, or this fails naming it."""
    read: set[str] = set()
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if not rel.startswith(SKIP) and rel not in DESCRIBERS:
            read |= _settings_read(path.read_text())
    assert sorted(NAMES - read) == [], "settings nothing reads (as s.name or plan.settings.name)"
