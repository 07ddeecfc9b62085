"""The typed ``Settings`` (#37): one field per declared setting, typed by its kind, its words those of the spec."""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from pathlib import Path

import pytest

from tritonbuild.settings import model
from tritonbuild.settings.model import SPEC_BY_NAME, SPECS, Resolved, Settings, resolve_settings

HINTS = typing.get_type_hints(Settings)


def _parts(hint: object) -> tuple[object, ...]:
    """The members of a union (``int | None``), or the type itself."""
    return typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
        else (hint,)


def _literal_words(hint: object) -> tuple[str, ...]:
    return tuple(w for part in _parts(hint) if typing.get_origin(part) is typing.Literal for w in typing.get_args(part))


# What each kind of spec may be typed as (besides None where the default is None).
KIND_TYPES: dict[str, tuple[object, ...]] = {"str": (str, Path), "int": (int,), "float": (float,),
                                              "bool": (bool,), "list": (tuple[str, ...],)}


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_each_field_is_typed_by_its_specs_kind(spec: model.Spec) -> None:
    hint = HINTS[spec.name]
    parts = [p for p in _parts(hint) if p is not type(None)]
    if spec.default is None:  # a setting without a default may be unset
        assert type(None) in _parts(hint), f"{spec.name} defaults to None but its field cannot be None"
    else:
        assert type(None) not in _parts(hint), f"{spec.name} has a default but its field may be None"
    if spec.kind == "word":
        assert len(parts) == 1 and typing.get_origin(parts[0]) is typing.Literal, hint
        assert typing.get_args(parts[0]) == spec.choices  # the one list of words, in the spec's order
        return
    others = [p for p in parts if typing.get_origin(p) is not typing.Literal]
    assert others and all(p in KIND_TYPES[spec.kind] for p in others), f"{spec.name}: {hint} is no {spec.kind}"
    assert _literal_words(hint) == spec.recipe_also  # a yes/no setting's extra recipe words (clang's "auto")
    if Path in others:  # a Path only where the value is a path, never a URL or a word
        assert spec.validate is model._path and spec.name not in ("source", "llvm", "llvm_src")


def test_word_settings_declare_their_words_once() -> None:
    """The spec's choices are the Literal's args: the same tuple, not a copy of it."""
    for name, literal in (("linker", model.Linker), ("debug_info", model.DebugInfo),
                          ("compiler_cache", model.CompilerCache), ("llvm_link", model.LLVMLink),
                          ("canary", model.Canary), ("version_scheme", model.VersionScheme),
                          ("build_type", model.BuildType)):
        assert SPEC_BY_NAME[name].choices == typing.get_args(literal), name


def test_of_types_the_values_whatever_their_origin(tmp_path: Path) -> None:
    env = {"TRITON_PTXAS_BLACKWELL_PATH": str(tmp_path / "bw" / "ptxas"), "TRITONBUILD_LINKER": "gold",
           "TRITON_PLUGIN_DIRS": "a;b", "MAX_JOBS": "3", "TRITONBUILD_HTTP_TIMEOUT": "2.5"}
    recipe = {"zip_level": 1, "clang": "auto", "repair_exclude": ["libcuda.so.1", "libfoo.so"]}
    s = resolve_settings({"cmake_args": ("-DA=1",), "jobs": 5}, env, recipe, "recipe r.toml")
    assert s.ptxas_blackwell == tmp_path / "bw" / "ptxas" and isinstance(s.ptxas_blackwell, Path)
    assert s.linker == "gold" and s.plugin_dirs == ("a", "b") and s.cmake_args == ("-DA=1",)
    assert s.jobs == 5 and s.zip_level == 1 and s.clang == "auto" and s.http_timeout == 2.5
    assert s.repair_exclude == ("libcuda.so.1", "libfoo.so")
    default = resolve_settings({}, {})
    assert default.ptxas_blackwell is None and default.patches == () and default.jobs is None
    assert default.zip_level == SPEC_BY_NAME["zip_level"].default
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.jobs = 2  # type: ignore[misc]


def test_of_refuses_an_incomplete_mapping_and_the_report_says_each_value_as_given() -> None:
    given = {spec.name: Resolved(spec.default, "default") for spec in model.SPECS}
    del given["jobs"]
    with pytest.raises(ValueError, match="jobs"):
        Settings.of(given)
    s = resolve_settings({"linker": "bfd", "targets": ("triton-opt",)}, {"TRITON_PTXAS_PATH": "./cuda//bin/ptxas/"})
    assert s.ptxas == Path("cuda/bin/ptxas") and s.targets == ("triton-opt",)
    report = s.report()  # the plan's JSON (and its identity): the path as typed, a list as a list
    assert list(report) == sorted(report) and len(report) == len(model.SPECS)
    assert report["ptxas"] == {"value": "./cuda//bin/ptxas/", "origin": "env TRITON_PTXAS_PATH"}
    assert report["targets"] == {"value": ["triton-opt"], "origin": "cli --target"}
    assert report["linker"] == {"value": "bfd", "origin": "cli --linker"}
    cloned = dataclasses.replace(s, plugin_dirs=("/cache/plugin",))  # a value replaced after resolving (git plugins)
    assert cloned.report()["plugin_dirs"] == {"value": ["/cache/plugin"], "origin": "default"}
    assert Settings().report() == resolve_settings({}, {}).report()  # the fields' defaults are the specs'
    with pytest.raises(ValueError, match="no setting"):
        s.origin("no_such_setting")


def _elf(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 57)
    path.chmod(0o755)
    return path


def _wants_blackwell(root: Path) -> Path:
    compiler = root / "third_party" / "nvidia" / "backend" / "compiler.py"
    compiler.write_text(compiler.read_text() + "\n# knobs: ptxas-blackwell\n")
    return root


def test_the_ptxas_blackwell_setting_is_what_nvidia_discovery_uses(tree, tmp_path: Path) -> None:
    """#37: nvidia.discover read TRITON_PTXAS_BLACKWELL_PATH itself, so the declared setting's value was never
    used. Now the setting (env is its one origin: it has no flag, and a recipe may not set a machine path) reaches
    discovery, and the variable in the environment discovery is handed is not read again."""
    from tritonbuild.nvidia import discover
    from tritonbuild.reporter import silent

    spec = SPEC_BY_NAME["ptxas_blackwell"]
    assert spec.flag is None and not spec.recipe and spec.env_names == ("TRITON_PTXAS_BLACKWELL_PATH",)
    root, bw = _wants_blackwell(tree()), _elf(tmp_path / "cuda-13" / "bin" / "ptxas")
    bare = {"PATH": "", "CUDA_HOME": str(tmp_path / "no-cuda")}  # no toolkit: no second ptxas to fall back on
    resolved = resolve_settings({}, {**bare, "TRITON_PTXAS_BLACKWELL_PATH": str(bw)})
    assert resolved.origin("ptxas_blackwell") == "env TRITON_PTXAS_BLACKWELL_PATH"
    found = discover.gather(root, resolved, bare, tmp_path / "cache", log=silent)
    assert ("ptxas-blackwell", str(bw), "env TRITON_PTXAS_BLACKWELL_PATH") in found.tools
    unset = resolve_settings({}, bare)
    ignored = discover.gather(root, unset, {**bare, "TRITON_PTXAS_BLACKWELL_PATH": str(bw)}, tmp_path / "cache",
                              log=silent)
    assert found.wants_ptxas_blackwell and not [t for t in ignored.tools if t[0] == "ptxas-blackwell"]


# The TRITON_*_PATH settings NVIDIA discovery does not read, each with its reader.
NOT_NVIDIA = {"roctracer_include": "the amd backend's staging", "rocm_include": "the amd backend's staging",
              "xpupti_include": "the intel backend's staging"}


def test_every_nvidia_path_setting_reaches_discovery_as_given(tree, tmp_path: Path) -> None:
    """Discovery reads the typed settings, no map of their variable names: each TRITON_*_PATH setting (but
    ``NOT_NVIDIA``'s) given in the environment is a tool or component found at that path, by that variable. A new
    NVIDIA path setting that discovery does not read fails here."""
    from tritonbuild.nvidia import discover
    from tritonbuild.reporter import silent

    given = {spec.env_names[0]: str(_elf(tmp_path / "given" / spec.name)) for spec in SPECS
             if spec.env_names[:1] and re.fullmatch(r"TRITON_\w+_PATH", spec.env_names[0])
             and spec.name not in NOT_NVIDIA}
    assert len(given) == 8 and all(SPEC_BY_NAME[name].env_names for name in NOT_NVIDIA)
    bare = {"PATH": "", "CUDA_HOME": str(tmp_path / "no-cuda")}
    found = discover.gather(_wants_blackwell(tree()), resolve_settings({}, {**bare, **given}), bare,
                            tmp_path / "cache", log=silent)
    seen = {(path, by) for _, path, by in found.tools} | {(s.dirs[0], s.found_by) for s in found.sources.values()}
    assert seen == {(path, f"env {var}") for var, path in given.items()}



def test_the_llvm_download_takes_mirror_retries_and_timeout_from_the_plan(tree) -> None:
    """#37: the provider read TRITONBUILD_HTTP_* from the environment again at download time; the plan carries
    them now, as resolved (and checked) with every other setting."""
    from tests.helpers import plan_for
    from tritonbuild.llvm import provision

    root = tree()
    env = {"TRITONBUILD_HTTP_RETRIES": "5", "TRITONBUILD_HTTP_TIMEOUT": "2.5",
           "TRITONBUILD_LLVM_MIRROR": "http://10.0.0.2:8080/llvm"}
    req = provision.request_from(plan_for(root, env=env))
    assert (req.retries, req.timeout, req.mirror) == (5, 2.5, "http://10.0.0.2:8080/llvm")
    default = provision.request_from(plan_for(root))
    assert (default.retries, default.timeout, default.mirror) == tuple(
        SPEC_BY_NAME[n].default for n in ("http_retries", "http_timeout", "llvm_mirror"))
