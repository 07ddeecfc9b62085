"""Will this backend work with this Triton? The Python interface check, from the sources alone."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import facts, plan_for
from tritonbuild.errors import UserError
from tritonbuild.gather import compat
from tritonbuild.gather.plugins import read_all
from tritonbuild.resolve import backend_api
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.settings.model import resolve_settings


def check(root: Path, plugin: Path) -> backend_api.BackendApi:
    return compat.gather(root, None, [], [("p", plugin, None)])[str(plugin)]


def test_backends_written_for_this_triton_are_compatible(tree, plugin) -> None:
    root = tree()
    result = compat.gather(root, None, [(n, root / "third_party" / n) for n in ("nvidia", "amd", "cpu", "spirv")],
                           [("p", plugin("p"), None)])
    assert {Path(k).name: v.verdict for k, v in result.items()} == {
        "nvidia": "compatible", "amd": "compatible", "cpu": "compatible", "spirv": "compatible", "p": "compatible"}


def test_a_missing_abstract_method_will_fail_and_names_the_import_error(tree, plugin) -> None:
    result = check(tree(), plugin("p", api="old"))
    assert result.verdict == "will fail"
    error = next(f for f in result.findings if f.severity == "error")
    assert "PluginBackend does not define hash" in error.message and "Can't instantiate abstract class" in error.message
    # the source calls add_stages(stages, options, language): the 2-argument one cannot take that call
    assert any("add_stages" in f.message and "the source calls it with 3" in f.message for f in result.findings)


def test_a_staticmethod_change_and_an_uncalled_method_are_risky(tree, plugin) -> None:
    root = tree()
    plain = check(root, plugin("s", api="plain-supports-target"))
    assert plain.verdict == "risky"
    assert any("PluginBackend.supports_target" in f.message and "Triton calls it on the class" in f.message
               for f in plain.findings)
    extra = check(root, plugin("e", api="extra"))
    assert extra.verdict == "risky"
    assert any("get_codegen_implementation" in f.message and "nothing in the source or the backend calls it" in
               f.message for f in extra.findings)


def test_signature_rules() -> None:
    base = backend_api.parse_classes("class BaseBackend:\n    def add_stages(self, stages, options): ...\n")
    ok = backend_api.parse_classes("class B(BaseBackend):\n    def add_stages(self, stages, options, lang=None): ...\n")
    star = backend_api.parse_classes("class B(BaseBackend):\n    def add_stages(self, *args): ...\n")
    usage = backend_api.Usage({"add_stages"}, {"add_stages": {3}})
    for mod in (ok, star):
        assert backend_api.check_module(mod, base, usage, usage.calls) == []
    short = backend_api.parse_classes("class B(BaseBackend):\n    def add_stages(self, stages): ...\n")
    [finding] = backend_api.check_module(short, base, usage, {})
    assert finding.message.endswith("takes 1 positional arguments but the source's base declares it with 2")


def test_the_plan_refuses_a_backend_that_will_fail_unless_told_not_to(tree, plugin) -> None:
    root = tree()
    old = plugin("old-plugin", "old_plugin", api="old")
    f = facts(root)
    f = type(f)(**{**f.__dict__, "api": compat.gather(root, None, [], [("old_plugin", old, None)]),
                   "plugin_files": read_all([str(old)], root)})
    with pytest.raises(UserError, match=r"old_plugin: PluginBackend does not define hash.*--no-api-check"):
        resolve_plan(resolve_settings({"plugin_dirs": (str(old),)}, {}), f)
    p = resolve_plan(resolve_settings({"plugin_dirs": (str(old),), "api_check": False}, {}), f)
    assert any("'old_plugin' (will fail with this Triton)" in w for w in p.warnings)
    assert p.backends[-1].api is not None and p.backends[-1].api["verdict"] == "will fail"
    assert plan_for(root).backends[0].api is None  # no facts gathered: nothing claimed


def test_source_usage_is_parsed_once_per_file_version(tmp_path, monkeypatch) -> None:
    from tritonbuild.gather import compat
    from tritonbuild.resolve import backend_api

    root = tmp_path / "triton"
    root.mkdir()
    (root / "a.py").write_text("x.hash()\n")
    (root / "b.py").write_text("y.add_stages(1, 2, 3)\n")
    parsed: list[str] = []
    real = backend_api.usage

    def counting(texts):
        texts = list(texts)
        parsed.extend(texts)
        return real(texts)

    monkeypatch.setattr(backend_api, "usage", counting)
    first = compat.cached_usage(root, tmp_path / "cache")
    assert first.names >= {"hash", "add_stages"} and first.calls["add_stages"] == {3}
    assert len(parsed) == 2
    assert compat.cached_usage(root, tmp_path / "cache") == first and len(parsed) == 2  # nothing parsed again
    (root / "b.py").write_text("y.add_stages(1, 2)\nz.native_info()\n")
    again = compat.cached_usage(root, tmp_path / "cache")
    assert parsed[2:] == ["y.add_stages(1, 2)\nz.native_info()\n"]  # only the changed file
    assert again.calls["add_stages"] == {2} and "native_info" in again.names


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_a_damaged_usage_cache_is_parsed_again_never_an_error(data: st.DataObject) -> None:
    """The parse memo in the cache dir is hostile input: cut short, no JSON, another shape, an entry of the right
    size and mtime holding junk, nesting past the parser's depth, a number too long to read: the usage is parsed
    again (the same answer), never a traceback out of ``plan``."""
    with tempfile.TemporaryDirectory() as tmp:
        root, cache = Path(tmp) / "triton", Path(tmp) / "cache"
        root.mkdir()
        (root / "a.py").write_text("x.hash()\ny.add_stages(1, 2, 3)\n")
        want = compat.cached_usage(root, cache)
        [store] = cache.iterdir()
        good, path, st_ = store.read_text(), str(root / "a.py"), (root / "a.py").stat()
        names = st.lists(JSON, max_size=3).map(lambda n: [*n, 7])  # never sound: a memo the stat matches is kept
        entry = JSON | st.tuples(names, st.lists(JSON, max_size=2)).map(
            lambda rest: [st_.st_size, st_.st_mtime_ns, rest[0], *rest[1]])
        damaged = data.draw(st.one_of(
            st.integers(0, len(good) - 1).map(lambda n: good[:n]), JSON.map(json.dumps),
            entry.map(lambda e: json.dumps({path: e})),
            entry.map(lambda e: json.dumps({**json.loads(good), "files": {path: e}})),
            JSON.filter(lambda v: not isinstance(v, str)).map(lambda v: good.replace('"hash"', json.dumps(v))),
            st.integers(1, 3000).map(lambda n: "[" * n),  # past the parser's depth: RecursionError
            st.integers(4301, 6000).map(lambda n: f'{{"{path}": [{"9" * n}, 1]}}')))  # too many digits for int()
        store.write_text(damaged)
        assert compat.cached_usage(root, cache) == want
        assert compat.cached_usage(root, cache) == want and json.loads(store.read_text()) == json.loads(good)


def test_many_files_parse_on_several_cores_to_the_same_usage(tmp_path: Path) -> None:
    """A first plan of a real tree parses its ~90 files on every core (forked): the same answer as one by one."""
    root = tmp_path / "triton"
    root.mkdir()
    for i in range(40):
        (root / f"m{i}.py").write_text(f"x.hook_{i}(1, 2)\ny.attr_{i % 7}\ngetattr(z, 'name_{i}')\n")
    (root / "broken.py").write_text("def (:\n")
    together = compat.cached_usage(root, None)
    serial = backend_api.usage(p.read_text() for p in sorted(root.glob("*.py")))
    assert together == serial
    assert together.calls["hook_39"] == {2} and {"attr_6", "name_0"} <= together.names
