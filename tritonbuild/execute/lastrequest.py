"""``develop`` remembers per checkout (edge: reads and writes small records under the cache root).

The last ``develop`` request of a checkout (the flags typed, and ``--recipe``) is kept in ``<cache>/develop/<the
first 32 hex digits of the sha256 of the checkout's real path>.json`` and, for ``status``, in its build dir
(``develop-request.json``). A later ``develop`` or ``test`` of that checkout starts from it: a flag given now, or a
setting the environment gives now, overrides that part (and for ``develop`` the merged request is remembered).

A record is input tritonbuild wrote itself but is still checked before it is used: a regular file of this user's, not
writable by others, small, JSON of the one shape ``write`` makes, naming this checkout, holding only flag settings
whose values their ``Spec`` accepts (the same check a typed flag gets). Anything else is ignored with a note, never
trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritonbuild.errors import UserError
from tritonbuild.gather.git import is_git_url
from tritonbuild.settings import cacheroot, recipes
from tritonbuild.settings.model import SPEC_BY_NAME, SPECS, resolve_settings, text_problem
from tritonbuild.system.fileutil import owned_file_problem, replace_with

if TYPE_CHECKING:  # status reads records: it needs neither the request nor the resolver
    from tritonbuild.gather.request import Request

VERSION = 1
RECORD_LIMIT = 1 << 20  # bytes: a record tritonbuild writes is a few hundred
IN_BUILD_DIR = "develop-request.json"
# relative to the cwd they were typed in (``Spec.path``); never the source or ref (``Spec.identity``): the checkout
# is the record's key, and a ref belongs to a source URL, so neither is remembered
PATH_SETTINGS = tuple(s.name for s in SPECS if s.path and s.flag and not s.identity)


@dataclass(frozen=True)
class Remembered:
    """A checkout's last develop request: the flag settings typed (by name, as ``Request.flags`` holds them, paths
    made absolute) and the recipe."""

    checkout: str
    flags: Mapping[str, Any] = field(default_factory=dict)
    recipe: str | None = None


@dataclass(frozen=True)
class Recall:
    """``recall``'s answer: the request to plan, the remembered parts it used as a command line (empty: none), and a
    note when a record was found but ignored."""

    request: Request
    used: str = ""
    note: str | None = None
    checkout: Path | None = None
    remembered: Remembered | None = None


def checkout_of(request: Request) -> Path | None:
    """The checkout a develop request builds, as a real path: the ``source`` setting as the plan resolves it
    (``--source``, its variable, the recipe's; a path), else the working directory when it is a Triton tree; None
    for a source URL, for settings the plan will refuse, or when there is none."""
    from tritonbuild.gather.source import looks_like_triton

    try:
        recipe = recipes.load(request.recipe, request.cwd) if request.recipe else (recipes.Recipe(), "recipe")
        given = resolve_settings(dict(request.flags), request.env, recipe[0].settings(), recipe[1]).source
    except UserError:  # a setting the plan refuses, saying why: no checkout to remember
        return None
    if given is None:
        return request.cwd.resolve() if looks_like_triton(request.cwd) else None
    if not isinstance(given, str) or is_git_url(given) or text_problem(given):
        return None
    try:
        return (request.cwd / Path(given).expanduser()).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def record_path(request: Request, checkout: Path) -> Path:
    return cacheroot.cache_root(request.env, request.cache_dir) / "develop" / _record_name(checkout)


def _record_name(checkout: Path) -> str:
    return f"{hashlib.sha256(os.fsencode(checkout)).hexdigest()[:32]}.json"


def _absolute(name: str, value: Any, cwd: Path) -> Any:
    """A path setting's value made absolute against the cwd it was typed in (URLs and the setting's words as
    typed; of a ``KEY=PATH`` entry the PATH, the KEY kept: ``Spec.keyed``)."""
    spec = SPEC_BY_NAME[name]
    if name not in PATH_SETTINGS or value is None:
        return value

    def one(text: str) -> str:
        if text.startswith("git+") or is_git_url(text) or text in spec.words:
            return text
        return os.path.normpath(cwd / Path(text).expanduser())  # `../../p.patch` typed in the checkout: its place

    if spec.keyed is not None:
        split, join = spec.keyed
        return tuple(join(key, one(path)) for key, path in map(split, value))
    return tuple(one(v) for v in value) if isinstance(value, list | tuple) else one(value)


def _recipe_absolute(recipe: str | None, cwd: Path) -> str | None:
    if recipe and (recipe.endswith(".toml") or "/" in recipe):
        return str(cwd / Path(recipe).expanduser())
    return recipe


def typed_part(request: Request, checkout: Path) -> Remembered:
    """What the user typed in ``request`` that a checkout remembers (paths absolute)."""
    flags = {n: _absolute(n, v, request.cwd) for n, v in request.flags.items()
             if v is not None and v != () and v != [] and not SPEC_BY_NAME[n].identity}
    return Remembered(str(checkout), flags, _recipe_absolute(request.recipe, request.cwd))


def _env_gives(name: str, env: Mapping[str, str]) -> bool:
    for reader in SPEC_BY_NAME[name].env:
        try:
            if reader(env) is not None:
                return True
        except UserError:  # a bad value: the plan refuses it with its own paragraph
            return True
    return False


def recall(request: Request, *, forget: bool = False) -> Recall:
    """The request with the checkout's last develop request under it: each remembered flag the request does not
    give (typed now, or by the environment now) is used, and the recipe when none is given."""
    checkout = checkout_of(request)
    if checkout is None:
        return Recall(request)
    found, note = (None, None) if forget else read(record_path(request, checkout), checkout)
    if found is None:
        return Recall(request, note=note, checkout=checkout)
    use = {n: v for n, v in found.flags.items()
           if request.flags.get(n) in (None, (), []) and not _env_gives(n, request.env)}
    recipe = found.recipe if request.recipe is None else None
    merged = replace(request.with_flags(**use), recipe=request.recipe or recipe,
                     recalled=(tuple(use), str(record_path(request, checkout))))
    return Recall(merged, command_line(use, recipe), checkout=checkout, remembered=found)


def command_line(flags: Mapping[str, Any], recipe: str | None = None) -> str:
    """Flag settings as the options that give them, quoted for a shell."""
    words = ["--recipe", recipe] if recipe else []
    for name, value in flags.items():
        flag = SPEC_BY_NAME[name].flag or ""
        longs = [f for f in flag.split("/") if f.startswith("--")]
        if isinstance(value, bool):
            words.append(longs[0] if value or len(longs) < 2 else longs[1])
        elif isinstance(value, list | tuple):
            for item in value:
                words += [longs[0], str(item)]
        else:
            words += [longs[0], str(value)]
    return shlex.join(words)


def remember(request: Request, recalled: Recall, build_dir: Path) -> str | None:
    """Keep ``request`` (the one planned: typed now, over what was remembered) as its checkout's last develop
    request, under the cache root and in ``build_dir``. Best effort: a cache that cannot take it is no error; what
    could not be written is returned, to be said."""
    if recalled.checkout is None:
        return None
    now = typed_part(request, recalled.checkout)
    old = recalled.remembered
    flags = {**(old.flags if old else {}), **now.flags}
    record = {"version": VERSION, "checkout": now.checkout, "recipe": now.recipe,
              "flags": {n: list(v) if isinstance(v, tuple) else v for n, v in sorted(flags.items())}}
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    failed = None
    for path in (record_path(request, recalled.checkout), build_dir / IN_BUILD_DIR):
        try:
            _write(path, text)
        except OSError as exc:
            failed = failed or (f"this develop request is not remembered: {path} cannot be written "
                                f"({exc.strerror or exc}); the next bare develop uses only what it is given")
    return failed


RECORD_NAME = re.compile(r"\.?[0-9a-f]{32}\.json(\.[0-9]+\.tmp)?")  # a record, or one a killed write left


def records(cache_root: Path, checkout: Path | None = None) -> list[Path]:
    """The develop records under ``cache_root`` (``clean``'s to remove): every one, or ``checkout``'s. Only
    regular files named as tritonbuild names them (a link or anything else there is never taken)."""
    folder = cache_root / "develop"
    if folder.is_symlink() or not folder.is_dir():  # a link is never followed: what it leads to is not the cache's
        return []
    try:
        found = [folder / _record_name(checkout)] if checkout is not None else sorted(folder.iterdir())
    except OSError:
        return []
    return [p for p in found if RECORD_NAME.fullmatch(p.name) and p.is_file() and not p.is_symlink()]


def _write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``, atomically, readable and writable by this user only (whatever the umask:
    ``read`` refuses a record others may write)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_with(path, text, mode=0o600)  # a replace that failed (a directory in its place) leaves no temporary


def read(path: Path, checkout: Path | None) -> tuple[Remembered | None, str | None]:
    """The record at ``path`` checked (see the module's docstring), or None and why it is ignored (None: there is
    none). ``checkout``: the checkout it must name (None: any, for ``status``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):  # a file on the way (a --cache-dir that is one): there is none,
        return None, None  # and the plan says what is wrong with that path, once
    except OSError as exc:
        return None, _ignored(path, f"it cannot be opened ({exc.strerror or exc})")
    try:
        st = os.fstat(fd)
        problem = owned_file_problem(st)
        data = b"" if problem else os.read(fd, RECORD_LIMIT + 1)
    except OSError as exc:
        problem = f"it cannot be read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    if problem is None and len(data) > RECORD_LIMIT:
        problem = f"it is larger than {RECORD_LIMIT} bytes"
    if problem is None:
        try:
            return _parse(json.loads(data.decode("utf-8")), checkout), None
        except (ValueError, RecursionError) as exc:
            problem = f"it is not a record tritonbuild wrote ({str(exc)[:200]})"
        except UserError as exc:
            problem = f"it holds a value the settings refuse: {exc}"
    return None, _ignored(path, problem)


def _ignored(path: Path, why: str) -> str:
    return (f"the last develop request of this checkout ({path}) is ignored: {why}. Only what is typed now is used "
            "(and remembered in its place when it can be written).")


def _parse(data: Any, checkout: Path | None) -> Remembered:
    """A record's JSON as ``write`` makes it; ValueError (or the settings' UserError) for anything else."""
    if not isinstance(data, dict) or set(data) != {"version", "checkout", "recipe", "flags"}:
        raise ValueError("not the record's keys")
    if data["version"] != VERSION or not isinstance(data["checkout"], str) or not isinstance(data["flags"], dict):
        raise ValueError("not the record's version or types")
    if checkout is not None and data["checkout"] != str(checkout):
        raise ValueError(f"it names another checkout, {data['checkout'][:200]!r}")
    recipe = data["recipe"]
    if recipe is not None and (not isinstance(recipe, str) or text_problem(recipe) or len(recipe) > 1024):
        raise ValueError("its recipe is no name or path")
    allowed = {spec.name for spec in SPECS if spec.flag and not spec.identity}
    flags: dict[str, Any] = {}
    for name, value in data["flags"].items():
        if name not in allowed:
            raise ValueError(f"{name[:80]!r} is not a setting with a flag")
        spec = SPEC_BY_NAME[name]
        if value is None or value == []:  # never written: a flag not typed is not in the record
            raise ValueError(f"{name} has no value")
        if spec.kind == "bool" and not isinstance(value, bool):
            raise ValueError(f"{name} is not yes or no")
        spec.check(value, "the last develop request")
        flags[name] = tuple(value) if spec.kind == "list" else value
    return Remembered(data["checkout"], flags, recipe)
