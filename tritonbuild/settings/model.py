"""Every setting, declared once, and the one precedence chain: default < recipe < env < CLI.

A ``Spec`` holds all there is to know of a setting: its kind (str, int, bool, list or a word from fixed
choices), default, range or choices, environment variables, command-line flag (with its ``--no-`` form),
whether a recipe may set it, and what it is to the rest of the build (``trust``, ``local``, ``compiles``,
``decides``: the provenance's rules, ``llvm compat``'s key and ``rebuild``'s differences are made from these; one
test walks every spec for them). Each setting is declared once, as a field of ``Settings`` whose metadata holds its
Spec (``setting(...)``, as scikit-build-core's settings model does); ``SPECS`` is made from the fields. The click
options (``tritonbuild.cli.options``), the recipe model and schema (``tritonbuild.settings.recipes``) and the
README's settings table (``tritonbuild.settings.docs``) are made from ``SPECS``; nothing else declares a setting.

``resolve_settings`` returns a frozen, typed ``Settings`` (word settings are the Literals whose args are the specs'
choices) that remembers where each value came from (``default``, ``recipe <path>``, ``env NAME``, ``cli --flag``:
``settings.origin("jobs")``); it is the plan's ``settings`` as it is, and ``Settings.report`` its JSON. Code reads
attributes, never a setting's name as a string (tests/unit/test_settings_declared_once.py). ``resolve_settings``
takes the environment as an argument, never os.environ; the variables of others the build reads
(``SOURCE_DATE_EPOCH``, ``TRITON_LLVM_SYSTEM_SUFFIX``, ``SCCACHE_SERVER_PORT``, the cache root's) are settings
without a flag, so resolvers take no environment (what else they need of it, sccache's configuration and the tree's
own proton variables, the edge gathers as facts).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal, cast, get_args, get_origin, get_type_hints
from urllib.parse import SplitResult

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from tritonbuild import manylinux
from tritonbuild.errors import UserError
from tritonbuild.redact import redact_text
from tritonbuild.urls import split_url

TRUE = {"ON", "1", "YES", "TRUE", "Y"}
FALSE = {"OFF", "0", "NO", "FALSE", "N", ""}


@dataclass(frozen=True)
class Resolved:
    value: Any
    origin: str


def env_bool(env: Mapping[str, str], name: str) -> bool | None:
    if name not in env:
        return None
    text = env[name].strip().upper()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise UserError(
        f"The environment variable {name}={show(env[name])} is not a yes/no value. Use 1/0, ON/OFF, YES/NO or "
        f"TRUE/FALSE, or unset it."
    )


_WHOLE = re.compile(r"[0-9]+|-[1-9][0-9]*")  # no -0, -00 or -007: a sign on a zero or a leading zero is a typo
# inf and nan are read, so that the setting's range refuses them as it refuses any number outside it
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|-?(?i:inf|infinity|nan)")


def ascii_int(text: str) -> int:
    """A whole number written as people write one: ASCII digits, an optional minus, nothing else. ``int`` also
    reads other scripts' digits (``MAX_JOBS=\uff14``, a fullwidth 4), ``1_6``, ``+4`` and spaces around it, which a
    reviewer of a CI file reads as something else; nor ``-0`` or ``-07`` (a negative number with no leading zero).
    ValueError otherwise."""
    if not _WHOLE.fullmatch(text):
        raise ValueError(f"not a whole number in ASCII digits: {text!r}")
    return int(text)


def ascii_float(text: str) -> float:
    """A number in ASCII decimal notation (``12``, ``0.5``, ``1e3``; ``inf`` and ``nan`` for the setting's range to
    refuse; no ``_``, ``+`` or spaces), and, as ``ascii_int`` refuses ``-0``, no sign on a zero (``-0``, ``-0.0``,
    ``-1e-400``, which is -0.0 too: a typo, shown back as ``-0.0``). ValueError otherwise."""
    value = float(text) if _NUMBER.fullmatch(text) else math.nan
    if not _NUMBER.fullmatch(text) or (value == 0 and math.copysign(1.0, value) < 0):
        raise ValueError(f"not a number in ASCII digits: {text!r}")
    return value


def env_int(env: Mapping[str, str], name: str) -> int | None:
    """A whole number; its range is the setting's, checked with every other origin's in ``resolve_settings``."""
    if name not in env or not env[name].strip():
        return None
    try:
        return ascii_int(env[name])
    except ValueError:
        raise UserError(f"The environment variable {name}={show(env[name])} is not a whole number.") from None


def env_float(env: Mapping[str, str], name: str) -> float | None:
    """A number (seconds); its range is the setting's."""
    if name not in env or not env[name].strip():
        return None
    try:
        return ascii_float(env[name])
    except ValueError:
        raise UserError(f"The environment variable {name}={show(env[name])} is not a number.") from None


EnvReader = Callable[[Mapping[str, str]], "tuple[Any, str] | None"]


def _from(name: str, read: Callable[[Mapping[str, str], str], Any]) -> EnvReader:
    def reader(env: Mapping[str, str]) -> tuple[Any, str] | None:
        value = read(env, name)
        return None if value is None else (value, name)

    return reader


def _str(env: Mapping[str, str], name: str) -> str | None:
    return env.get(name) or None


def _list_semicolon(env: Mapping[str, str], name: str) -> list[str] | None:
    """A ';' separated list; an empty entry beside others (a trailing ';') is dropped, but a value of separators
    only (``TRITON_PLUGIN_DIRS=";;"``) is refused: it was set to name something and names nothing."""
    if name not in env or not env[name].strip():
        return None
    items = [p.strip() for p in env[name].strip().split(";") if p.strip()]
    if not items:
        raise UserError(f"The environment variable {name}={show(env[name])} names nothing: its ';' separated "
                        "entries are all empty. Name at least one (a path), or unset it.")
    return items


def _shlex(env: Mapping[str, str], name: str) -> list[str] | None:
    if name not in env or not env[name].strip():
        return None
    problem = text_problem(env[name])
    if problem:  # checked before the split, which would hide a NUL or a newline
        raise UserError(f"The environment variable {name}={show(env[name])} {problem}.")
    try:
        return shlex.split(env[name])
    except ValueError as exc:
        raise UserError(f"The environment variable {name} cannot be split into arguments: {exc}.") from None


MAX_EPOCH = 253402300799  # 9999-12-31T23:59:59Z: the last second a wheel's date (and Python's time) can name


def parse_epoch(text: str) -> int | None:
    """Seconds since 1970 as git's %ct or SOURCE_DATE_EPOCH give them: ASCII digits only, at most MAX_EPOCH; None
    for anything else (a negative or unparsable commit date, a hostile checkout's out-of-range one)."""
    text = text.strip()
    if not re.fullmatch(r"[0-9]{1,12}", text) or int(text) > MAX_EPOCH:
        return None
    return int(text)


def _epoch(env: Mapping[str, str], name: str) -> int | None:
    given = env.get(name)
    if not given:
        return None
    epoch = parse_epoch(given)
    if epoch is None:
        raise UserError(f"{name}={show(given)} must be a whole number of seconds since 1970, at most {MAX_EPOCH} "
                        "(the end of the year 9999).")
    return epoch


SUFFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # ubuntu-x64, almalinux-arm64, macos-arm64


def check_suffix(value: str, origin: str = "TRITON_LLVM_SYSTEM_SUFFIX") -> str:
    """A platform suffix is part of a file name in the cache: a plain name, never a path."""
    why = text_problem(value)  # undecodable bytes and control characters are said as for every text setting
    if why:
        raise UserError(f"{origin}={show(value)} is not a platform suffix: it {why}. Fix or unset {origin}.")
    if SUFFIX.fullmatch(value) and ".." not in value and len(value) <= 64:
        return value
    raise UserError(
        f"{origin}={value[:80]!r} is not a platform suffix: it must be a plain name such as ubuntu-x64, "
        "ubuntu-arm64, almalinux-x64, almalinux-arm64 or macos-arm64 (letters, digits, '.', '_', '-'; no '/', no "
        f"'..'; at most 64 characters), because it names a file in the LLVM cache. Fix or unset {origin}."
    )


def _suffix(env: Mapping[str, str], name: str) -> str | None:
    return check_suffix(env[name], name) if env.get(name) else None


# The cache root's variables, in order, with the dirs below each (the home directory's ~/.cache/tritonbuild, the
# last resort, is the edge's: tritonbuild.system.paths).
CACHE_ENV = (("TRITONBUILD_CACHE_DIR", ()), ("TRITON_HOME", (".triton", "tritonbuild")),
             ("XDG_CACHE_HOME", ("tritonbuild",)))


def _cache_root(env: Mapping[str, str]) -> tuple[Any, str] | None:
    """The first cache variable set (an empty one is unset, as every setting's is), with its dirs below."""
    for name, below in CACHE_ENV:
        if env.get(name):
            return (str(PurePosixPath(env[name]).joinpath(*below)) if below else env[name]), name
    return None


# setup.py's build-type variables, in setup.py's order of priority.
BUILD_TYPE_ENV = (
    ("DEBUG", "Debug"),
    ("REL_WITH_DEB_INFO", "RelWithDebInfo"),
    ("TRITON_REL_BUILD_WITH_ASSERTS", "TritonRelBuildWithAsserts"),
    ("TRITON_BUILD_WITH_O1", "TritonBuildWithO1"),
)


def _build_type(env: Mapping[str, str]) -> tuple[Any, str] | None:
    for name, value in BUILD_TYPE_ENV:
        if env_bool(env, name):
            return value, name
    return None


KINDS = ("str", "int", "float", "bool", "list", "word")
Trust = Literal["", "runs", "reaches"]  # what a value, if trusted, lets its author do: ``Spec.trust``
MAX_TEXT = 4096  # characters of one text value (PATH_MAX): longer is no path, URL or name anyone means
MAX_ITEMS = 256  # items of one list setting
MAX_NAME_BYTES = 255  # one path component (NAME_MAX)
Validator = Callable[[Any], "str | None"]  # a value's problem ("must be ..."), None when it is fine


def show(value: Any, limit: int = 80) -> str:
    """A value as a message quotes it: its repr (escapes control characters and undecodable bytes), cut short, the
    secrets of URLs in it redacted (a CI's mistyped secret must not reach its log through an error)."""
    text = repr(redact_text(value) if isinstance(value, str) else value)
    return text if len(text) <= limit else f"{text[:limit - 10]}... ({len(text)} characters)"


def text_problem(text: str) -> str | None:
    """What makes a text value unusable whatever the setting: undecodable bytes, control characters, a huge size."""
    if len(text) > MAX_TEXT:
        return f"is {len(text)} characters long; at most {MAX_TEXT} are accepted"
    if any("\ud800" <= c <= "\udfff" for c in text):
        return ("holds bytes that are not UTF-8 (an environment variable or argument in another encoding); "
                "give it as UTF-8 text")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text):  # C0, DEL and C1 (\x9b is a terminal's CSI)
        return "holds a control character (a newline, tab, escape or NUL); remove it"
    return None


_KIND_WORDS = {"str": "text", "word": "text", "int": "a whole number", "float": "a number", "bool": "yes or no",
               "list": "a list of text"}


def _kind_problem(kind: str, value: Any, also: tuple[str, ...]) -> str | None:
    """Whether ``value`` has the setting's type (a recipe can give any TOML value; flags and env give text)."""
    ok = {"str": isinstance(value, str), "word": isinstance(value, str),
          "int": isinstance(value, int) and not isinstance(value, bool),
          "float": isinstance(value, int | float) and not isinstance(value, bool),
          "bool": isinstance(value, bool) or (isinstance(value, str) and value in also),
          "list": isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)}[kind]
    if ok:
        return None
    words = _KIND_WORDS[kind] + (f" (or {', '.join(also)})" if also else "")
    return f"must be {words}, not {type(value).__name__}"


def _texts_problem(value: Any) -> str | None:
    items = [value] if isinstance(value, str) else list(value) if isinstance(value, list | tuple) else []
    if len(items) > MAX_ITEMS:
        return f"lists {len(items)} items; at most {MAX_ITEMS} are accepted"
    return next((problem for item in items if (problem := text_problem(item))), None)


@dataclass(frozen=True)
class Spec:
    name: str
    default: Any
    flag: str | None  # "--x", "-j/--jobs", or for yes/no settings "--x/--no-x"
    env: tuple[EnvReader, ...]
    env_names: tuple[str, ...]
    help: str
    kind: str = "str"  # one of KINDS: the type of the value, whichever origin gives it
    minimum: int | None = None  # number settings: the one range for flag, environment and recipe
    maximum: int | None = None
    choices: tuple[str, ...] = ()  # "word" settings: the one set of words for flag, env and recipe
    recipe: bool = True  # whether a recipe may set it (under its own name)
    recipe_also: tuple[str, ...] = ()  # words a recipe may give a yes/no setting besides true/false ("auto")
    validate: Validator | None = None  # the value's own rule (a wheel name, a URL, a path): its problem or None
    refusal_hint: str = ""  # said after the refusal of a value outside the choices (where the rest go)
    # What the setting is, declared with it: None is "not decided", which tests/unit/test_spec_attributes.py refuses.
    # ``trust``: what trusting a value takes: "runs" (it names a program, script, code or files the build runs, loads
    # or ships), "reaches" (it names a host the build talks to), "" (neither); ``tritonbuild rebuild`` takes no such
    # value from a provenance (hostile input) unless told to (--trust-provenance).
    trust: Trust | None = None
    # ``local``: it says how this machine builds, not what (parallelism, compiler caches and launchers, the network,
    # the container): a rebuild takes this machine's value, and a different one is no difference.
    local: bool | None = None
    # ``compiles``: it can change whether a tree configures and compiles (``llvm compat`` keys its answers by it).
    compiles: bool | None = None
    decides: tuple[str, ...] = ()  # the fields of the wheel's triton/_build_info.json it decides
    # ``identity``: it says which tree ("tree") or revision of it ("revision") is built, not how: a rebuild takes it
    # from its --source and the claimed commit, a checkout's record is keyed by it, llvm compat's steps set it.
    identity: Literal["tree", "revision"] | None = None
    # ``host_only`` (decided by every ``local`` setting; None elsewhere): it names this host's own state (its cache
    # root, Debian's LLVM suffix, its sccache server) or the container itself: a ``--container`` run neither passes
    # its variables in nor types its flag again, since the inner run builds where it is and finds its own.
    host_only: bool | None = None

    @property
    def path(self) -> bool:
        """Whether its value is a local path or paths (a URL or a word too, where its rule allows), as its rule (one of
        ``PATH_RULES``) says: made absolute against the directory it was typed in, mounted into a --container."""
        return self.validate in PATH_RULES or self.keyed is not None

    @property
    def keyed(self) -> tuple[Callable[[str], tuple[str | None, str]], Callable[[str | None, str], str]] | None:
        """For a setting whose entries are ``KEY=PATH`` (``--patch NAME=FILE``, ``--submodule PATH=REPO``): how an
        entry splits into (key, path) and joins back, so the path alone is made absolute or mounted; else None."""
        return KEYED_RULES.get(self.validate) if self.validate else None

    @property
    def words(self) -> tuple[str, ...]:
        """The words a path setting takes that are no path (``--llvm system``), as its rule says."""
        return WORDS_OF.get(self.validate, ()) if self.validate else ()

    def check(self, value: Any, origin: str) -> None:
        """Refuse a value of the wrong type, outside the setting's range or choices, or that its own rule refuses,
        whichever origin it came from: one paragraph that names the setting, the value and its origin."""
        if value is None:
            return
        problem = (_kind_problem(self.kind, value, self.recipe_also) or _texts_problem(value)
                   or self._range_problem(value) or (self.validate(value) if self.validate else None))
        if problem:
            hint = f" {self.refusal_hint}" if self.refusal_hint and self.choices else ""
            raise UserError(f"The setting {self.name} = {show(value)} ({origin}) {problem}.{hint}")

    def _range_problem(self, value: Any) -> str | None:
        if self.choices and value not in self.choices:
            return f"must be one of: {', '.join(self.choices)}"
        if self.kind not in ("int", "float") or self.minimum is None:
            return None
        number = "a whole number" if self.kind == "int" else "a number of"
        if isinstance(value, float) and (not math.isfinite(value) or (value == 0 and math.copysign(1.0, value) < 0)):
            return f"must be {number} {self.minimum}-{self.maximum}"  # inf, nan, -0.0 (a recipe's TOML float)
        if value < self.minimum or (self.maximum is not None and value > self.maximum):
            span = f"{self.minimum}-{self.maximum}" if self.maximum is not None else f"{self.minimum} or more"
            return f"must be {number} {span}"
        return None


def _kind(default: Any, flag: str | None, minimum: int | None, choices: tuple[str, ...]) -> str:
    if choices:
        return "word"
    if minimum is not None:
        return "float" if isinstance(default, float) else "int"
    if isinstance(default, bool) or (flag and "/--no-" in flag):
        return "bool"
    return "list" if isinstance(default, list) else "str"


def setting(default: Any, flag: str | None, env: dict[str, Callable[..., Any]] | None, help: str,
            extra: tuple[EnvReader, ...] = (), extra_names: tuple[str, ...] = (), minimum: int | None = None,
            maximum: int | None = None, choices: tuple[str, ...] = (), recipe: bool | None = None,
            recipe_also: tuple[str, ...] = (), validate: Validator | None = None, refusal_hint: str = "",
            trust: Trust | None = None, local: bool | None = None, compiles: bool | None = None,
            decides: tuple[str, ...] = (), identity: Literal["tree", "revision"] | None = None,
            host_only: bool | None = None) -> Any:
    """A ``Settings`` field and its ``Spec`` (in the field's metadata, named after the field): the one declaration
    of a setting. Its kind follows from its default, flag, range and choices. A recipe may set every setting that
    has a flag unless ``recipe`` says otherwise (machine-specific paths come from the environment only). The
    field's default is the typed one (a list's is a tuple)."""
    env = env or {}
    readers = tuple(_from(n, r) for n, r in env.items()) + extra
    spec = Spec("", default, flag, readers, tuple(env) + extra_names, help, _kind(default, flag, minimum, choices),
                minimum, maximum, choices, flag is not None if recipe is None else recipe, recipe_also, validate,
                refusal_hint, trust, local, compiles, decides, identity, host_only)
    return field(default=tuple(default) if isinstance(default, list) else default, metadata={SPEC: spec})


SPEC = "tritonbuild.spec"  # the key of a ``Settings`` field's metadata that holds its ``Spec``


# The values' own rules (pure: nothing here looks at the disk; a path that must exist is checked where it is read).
_WHEEL_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")  # each used with fullmatch
_TARGET = re.compile(r"[A-Za-z0-9_.+][A-Za-z0-9_.+-]*")  # a CMake target or a library's file name
MAX_JOBS = 4096


def wheel_name_problem(value: str) -> str | None:
    if _WHEEL_NAME.fullmatch(value):
        return None
    return ("is not a wheel distribution name: use letters, digits, '.', '_' and '-', starting and ending with a "
            "letter or digit (PEP 427/503), e.g. triton or triton-nightly")


def version_problem(version: str) -> str | None:
    """Whether a wheel version is one PEP 440 (and so pip, scikit-build-core and the wheel's file name) accepts."""
    try:
        Version(version)
    except InvalidVersion:
        return (f"makes the version {show(version)}, which is not a PEP 440 version (a suffix is .devN, .postN, "
                "aN/bN/rcN or a local label +LABEL of letters, digits and '.')")
    return None


def _version_suffix(value: str) -> str | None:
    """A suffix that makes no valid version after a release (3.6.0) nor after a git one (3.6.0+git<sha8>, where
    setup.py's rule turns a second '+' into '-'); the plan checks the actual version again."""
    plain, local = version_problem("3.6.0" + value), version_problem("3.6.0+git01234567" + value.replace("+", "-"))
    return plain if plain and local else None


_URL_RULE = "no spaces, control characters or #fragment"


def _url_parts(value: str) -> SplitResult | None:
    """A URL's parts, or None where it is none a mirror or index may be: urlsplit strips or keeps whitespace and
    control characters (``https://h/llvm builds``, a tab), and a ``#fragment`` is never sent, so a base URL with
    one would have the archive's name appended to the fragment, not the path."""
    if "#" in value or any(c.isspace() or ord(c) < 32 or 127 <= ord(c) < 160 for c in value):
        return None
    return split_url(value)


def _http_url(value: str) -> str | None:
    parts = _url_parts(value)
    if parts is not None and parts.scheme in ("http", "https") and parts.netloc:
        return None
    return f"must be an http:// or https:// URL with a host (a mirror or an index), {_URL_RULE}"


def _index_url(value: str) -> str | None:
    """A package index: http(s), or a file:// index as pip itself takes in PIP_INDEX_URL (a user's pip setting)."""
    parts = _url_parts(value)
    if parts is not None and parts.scheme == "file" and parts.path:
        return None
    return None if _http_url(value) is None else \
        f"must be an http://, https:// or file:// URL of a package index, {_URL_RULE}"


def _path(value: str) -> str | None:
    """A path (or a URL) whose parts the file system can hold (the OS would refuse a longer component), and that no
    program it is handed to (git, cmake) could read as an option. An empty one (a script's unset variable in
    ``--wheelhouse "$HOUSE"``) names nothing: it was dropped, or taken as the current directory."""
    if not value.strip():
        return "is empty, which names no path (name it, '.' for the current directory, or leave the setting out)"
    if value.startswith("-"):
        return "starts with '-', which git or CMake would read as an option (a relative path: write it as ./NAME)"
    long = next((part for part in value.split("/") if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES),
                None)
    return None if long is None else f"has a path component of {len(long)} characters (at most {MAX_NAME_BYTES})"


def _source(value: str) -> str | None:
    """The source: a path or a URL. An empty one would be the current directory, as an empty --plugin-dir or
    --patch would, which nobody types on purpose (a CI's unset variable: ``--source "$TRITON_SRC"``)."""
    if not value.strip():
        return "is empty, which would mean the current directory (name the directory, '.' if you mean it)"
    return _path(value)


LLVM_STRATEGIES = ("auto", "system", "download", "source")  # --llvm's words; anything else is a prefix


def _llvm(value: str) -> str | None:
    """--llvm: a strategy or a prefix; an empty one would be the current directory taken as the prefix."""
    if not value.strip():
        return ("is empty, which would mean the current directory as the LLVM prefix (name the prefix, '.' if you "
                "mean it, or a strategy: auto, system, download, source)")
    return _path(value)


def _arguments(value: list[str]) -> str | None:
    """CMake arguments: an empty one (``--cmake-arg "$UNSET"``) is no argument anyone means, yet it went into the
    configure command and changed the build dir's key."""
    if any(not item.strip() for item in value):
        return "lists an empty argument, which CMake would be handed as '' (remove it, or give the argument)"
    return None


def _git_ref(value: str) -> str | None:
    """A branch, tag or commit: git would read a leading '-' as an option, and no ref holds a space."""
    if not value.strip() or value.startswith("-") or any(c.isspace() for c in value):
        return "is not a git ref (a branch, tag or commit: no leading '-' and no spaces)"
    return None


def _paths(value: list[str]) -> str | None:
    if any(not item.strip() for item in value):
        return "lists an empty path, which would mean the current directory (name the directory, '.' if you mean it)"
    return next((problem for item in value if (problem := _path(item))), None)


PATCH_TARGET = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)  # NAME=FILE: a patch for the plugin NAME


def split_patch(entry: str) -> tuple[str | None, str]:
    """A ``--patch`` entry (a recipe's ``patches``, ``TRITONBUILD_PATCHES``) as (the plugin it targets, the patch
    file): ``NAME=FILE``, NAME an identifier (a plugin's backend name, as its backend/name.conf gives it), targets
    that plugin's dir; anything else (``FILE``, ``./x=y.patch``, ``a-b=c``) is a patch file for the Triton source
    (None). A file whose own name looks like ``NAME=FILE`` is written ``./NAME=FILE`` to mean the source; the plain
    spelling of one that exists is refused as ambiguous (``gather.collect``)."""
    match = PATCH_TARGET.fullmatch(entry)
    return (match.group(1), match.group(2)) if match else (None, entry)


def join_patch(target: str | None, file: str) -> str:
    """The entry ``split_patch`` reads back as (``target``, ``file``)."""
    return file if target is None else f"{target}={file}"


def _patch_entries(value: list[str]) -> str | None:
    """Every patch entry's file is a path (its NAME= part, when there is one, is checked against the plugins)."""
    files = [split_patch(item)[1] for item in value]
    if any(not f.strip() for f in files):
        return ("lists an empty patch file (a NAME= with nothing after it, or an empty entry): name the patch "
                "file, NAME=FILE for a plugin's dir, FILE for the Triton source")
    return _paths(files)


def split_submodule(entry: str) -> tuple[str, str]:
    """A ``--submodule PATH=REPO`` entry as (PATH, REPO); PATH as ``.gitmodules`` writes it (no trailing '/')."""
    sub, _, repo = entry.partition("=")
    sub = sub.strip().rstrip("/")
    while sub.startswith("./"):
        sub = sub[2:]
    return sub, repo.strip()


def join_submodule(sub: str | None, repo: str) -> str:
    """The entry ``split_submodule`` reads back as (``sub``, ``repo``)."""
    return f"{sub}={repo}"


def _submodule_entries(value: list[str]) -> str | None:
    """Each entry is PATH=REPO: PATH a relative path inside the source (no '..', no '.git'), REPO a path."""
    for item in value:
        sub, repo = split_submodule(item)
        parts = sub.split("/")
        if "=" not in item or not sub or not repo.strip():
            return f"lists {item[:200]!r}, not PATH=REPO (the submodule's path in the source, then a clone of it)"
        if sub.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts) or \
                any(not ch.isprintable() for ch in sub):
            return f"names the submodule path {sub[:200]!r}, which is not a plain path inside the source"
    places = [split_submodule(item)[0] for item in value]
    twice = sorted({p for p in places if places.count(p) > 1})
    if twice:
        return f"names the submodule {twice[0]!r} more than once (one clone per submodule)"
    return _paths([split_submodule(item)[1] for item in value])


def split_dep(entry: str) -> tuple[str | None, str]:
    """A ``--dep NAME=PATH|URL`` entry as (NAME, PATH or URL)."""
    name, _, where = entry.partition("=")
    return name.strip(), where.strip()


def join_dep(name: str | None, where: str) -> str:
    """The entry ``split_dep`` reads back as (``name``, ``where``)."""
    return f"{name}={where}"


def _dep_entries(value: list[str]) -> str | None:
    """Each entry is NAME=PATH or NAME=URL (a URL is cloned; a path is checked where it is read)."""
    for item in value:
        name, where = split_dep(item)
        if "=" not in item or not name or not where:
            return (f"lists {item[:200]!r}, not NAME=PATH or NAME=URL (NAME as the tree's FetchContent_Declare names "
                    "it, e.g. googletest=/src/googletest)")
    return _paths([split_dep(item)[1] for item in value])


PATH_RULES: tuple[Validator, ...] = (_path, _paths, _source, _llvm)  # the rules of ``Spec.path`` (and KEYED_RULES')
# The rules of settings whose entries are KEY=PATH: how one splits, and joins back (``Spec.keyed``).
KEYED_RULES: dict[Validator, tuple[Callable[[str], tuple[str | None, str]], Callable[[str | None, str], str]]] = {
    _patch_entries: (split_patch, join_patch), _submodule_entries: (split_submodule, join_submodule),
    _dep_entries: (split_dep, join_dep)}
WORDS_OF: dict[Validator, tuple[str, ...]] = {_llvm: LLVM_STRATEGIES}  # ``Spec.words``


def _names(what: str) -> Validator:
    def problem(value: list[str]) -> str | None:
        bad = [v for v in value if not _TARGET.fullmatch(v)]
        return f"lists {show(bad[0])}, which is not {what} (letters, digits, '_', '.', '+' and '-', not first)" \
            if bad else None

    return problem


def _not_options(value: list[str]) -> str | None:
    bad = [v for v in value if v.startswith("-")]
    return f"lists {show(bad[0])}, which CMake would read as an option, not a target" if bad else None


_CCACHE_REMOTE = re.compile(r"^(file|http|https|redis|redis\+unix):")


def _ccache_remote(value: str) -> str | None:
    """ccache's remote_storage: space-separated URLs (each with optional |attributes) of schemes it knows."""
    entries = value.split()
    bad = [i for i, e in enumerate(entries, 1) if not _CCACHE_REMOTE.match(e)
           or (not e.startswith(("file:", "redis+unix:")) and split_url(e.split("|")[0]) is None)]
    if entries and not bad:
        return None
    # the entry itself is not quoted: a space inside an attribute (|header=Authorization=Bearer TOKEN) splits a
    # secret into an entry of its own
    return (f"{f'has an entry (number {bad[0]} of {len(entries)}, space-separated)' if bad else 'names no storage'} "
            "that is not a ccache remote storage URL (file:, http://, redis:// or redis+unix:, as ccache's "
            "remote_storage takes; a port must be a number up to 65535)")


def _plat(value: str) -> str | None:
    return manylinux.policy_problem(value)


def _specifier(value: str) -> str | None:
    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        return "is not a PEP 440 version specifier such as >=3.10"
    return None


# A container image reference as docker and podman take it: [registry[:port]/]path[:tag][@digest], the path's parts
# lowercase (the distribution reference grammar; no IPv6 registry), at most 255 characters before the tag.
_LABEL = r"(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
_DOMAIN = rf"{_LABEL}(?:\.{_LABEL})*"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(rf"(?P<name>(?:{_DOMAIN}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*)"
                    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*"
                    r":[0-9A-Fa-f]{32,})?")


def image_problem(value: str) -> str | None:
    """Whether ``value`` is a container image reference (``quay.io/pypa/manylinux_2_28_x86_64:latest``); the empty
    value means no container (the build runs on this host)."""
    if value == "":
        return None
    match = _IMAGE.fullmatch(value)
    if match and len(match["name"]) <= 255:
        return None
    return ("is not a container image reference such as quay.io/pypa/manylinux_2_28_x86_64 or "
            "debian:bookworm (REGISTRY/PATH:TAG or @sha256:DIGEST; the path in lowercase letters, digits and "
            "'.', '_', '-' between them)")


def _container_python(value: str) -> str | None:
    if value.startswith("/") or (re.fullmatch(r"[A-Za-z0-9_.+-]+", value) and not value.startswith("-")):
        return None
    return "must be an absolute path inside the image or a command name on its PATH (python3.12)"


def _positive_seconds(value: float) -> str | None:
    return None if value > 0 else "must be more than 0 seconds"


# The words of each "word" setting, declared once: the spec's choices are these Literals' args, and the typed
# ``Settings`` field is the Literal itself.
BuildType = Literal["TritonRelBuildWithAsserts", "Release", "Debug", "RelWithDebInfo", "MinSizeRel",
                    "TritonBuildWithO1"]
CompilerCache = Literal["ccache", "sccache", "none"]
Linker = Literal["auto", "lld", "gold", "bfd", "default"]
DebugInfo = Literal["auto", "lines", "full", "none", "tree"]
Canary = Literal["auto", "on", "off"]
VersionScheme = Literal["setup", "git", "date", "date+git", "none"]
LLVMLink = Literal["auto", "static", "shared"]
CudaToolsFrom = Literal["auto", "host", "pypi"]
ContainerEngine = Literal["auto", "docker", "podman"]
Auto = Literal["auto"]  # the word a recipe may give a yes/no setting besides true/false (clang)
BUILD_TYPES: tuple[str, ...] = get_args(BuildType)


@dataclass(frozen=True)
class Settings:
    """Every setting, declared once: a typed field whose metadata holds its ``Spec`` (``setting``). Word settings
    are the Literals above, lists are tuples, machine paths are ``Path``. ``resolve_settings`` makes one, and it
    travels as it is from there to execution (``Plan.settings``); ``origin`` says where a value came from, and
    ``report`` is the plan's JSON of it (each value as it was given, with its origin)."""

    # a path or a git URL
    source: str | None = setting(
        None, "-s/--source", None, "Triton source: a path or a git URL (default: the current directory)",
        validate=_source, trust="runs", local=False, compiles=True, identity="tree")
    ref: str | None = setting(None, "--ref", None, "git ref to check out when --source is a URL", validate=_git_ref,
        trust="", local=False, compiles=True, identity="revision")
    patches: tuple[str, ...] = setting([], "--patch", {"TRITONBUILD_PATCHES": _list_semicolon},
        "a unified diff (git diff, diff -u; -p1) applied, in order, to a copy of the source in the cache: the "
        "checkout is never edited; one that does not apply stops the plan (repeatable; env ';' separated; "
        "a recipe's paths are relative to the recipe and must stay in its directory); their sha256 go into the "
        "build dir key and the version (+...pHASH8); NAME=FILE patches the plugin named NAME (its backend "
        "name) in a copy of its dir instead", validate=_patch_entries, trust="runs",
        local=False, compiles=True, decides=("source.patches",))
    submodules: tuple[str, ...] = setting([], "--submodule", {"TRITONBUILD_SUBMODULES": _list_semicolon},
        "PATH=REPO: the source's git submodule at PATH, not checked out, exported at the commit the checkout "
        "records from REPO (a clone or mirror on this machine; nothing is fetched) into tritonbuild's copy of the "
        "source, as --patch makes one: the checkout is never written (repeatable; env ';' separated)",
        recipe=False, validate=_submodule_entries, trust="runs", local=False, compiles=True,
        decides=("source.submodules",))
    backends: str | None = setting(None, "-b/--backends", {"TRITON_CODEGEN_BACKENDS": _str},
        "in-tree backends: ';' or ',' separated, or 'all' (default: the source's own default list)",
        trust="", local=False, compiles=True, decides=("backends_tuple",))
    # paths or git+URL@REF
    plugin_dirs: tuple[str, ...] = setting([], "--plugin-dir", {"TRITON_PLUGIN_DIRS": _list_semicolon},
        "external plugin directories (repeatable; env: ';' separated; in a recipe: the key plugins)",
        recipe=False, validate=_paths, trust="runs", local=False, compiles=True, decides=("backends_tuple",))
    # auto, system, download, source or a prefix path
    llvm: str = setting("auto", "--llvm", {"LLVM_SYSPATH": _str},
        "LLVM: auto, system, download, source or a prefix path", validate=_llvm, trust="runs",
        local=False, compiles=True)
    llvm_mirror: str = setting("https://oaitriton.blob.core.windows.net/public/llvm-builds", "--llvm-mirror",
        {"TRITONBUILD_LLVM_MIRROR": _str}, "base URL of prebuilt LLVM archives (a company mirror): http or https",
        validate=_http_url, trust="reaches", local=False, compiles=False)
    allow_unpinned: bool = setting(
        False, "--allow-unpinned/--no-allow-unpinned", {"TRITONBUILD_ALLOW_UNPINNED": env_bool},
        "accept a prebuilt LLVM the pin has no sha256 for (llvm-hash.txt pins); its sha256 is logged",
        trust="", local=False, compiles=True)
    # a URL or a local clone
    llvm_src: str | None = setting(None, "--llvm-src", {"TRITONBUILD_LLVM_SRC": _str},
        "llvm-project URL or local clone for --llvm source (default: the upstream repository)", validate=_path,
        trust="runs", local=False, compiles=True)
    llvm_assertions: bool = setting(False, "--llvm-assertions/--no-llvm-assertions", None,
        "build LLVM from source with assertions", trust="", local=False, compiles=True)
    clang: bool | Auto = setting(False, "--clang/--no-clang", {"TRITON_BUILD_WITH_CLANG_LLD": env_bool},
        "build with clang and lld instead of the default compiler (a recipe may say \"auto\": when installed)",
        recipe_also=get_args(Auto), trust="", local=False, compiles=True,
        decides=("toolchain.compiler", "toolchain.compiler_path", "toolchain.linker"))
    ccache: bool | None = setting(None, "--ccache/--no-ccache", {"TRITON_BUILD_WITH_CCACHE": env_bool},
        "use ccache (default: on when ccache is found)", trust="", local=True, compiles=False, host_only=False)
    compiler_cache: CompilerCache | None = setting(None, "--compiler-cache", {"TRITONBUILD_COMPILER_CACHE": _str},
        "compiler cache: ccache, sccache or none (default: ccache when found; sccache's remote storage comes "
        "from its own SCCACHE_* variables)", choices=get_args(CompilerCache), trust="runs",
        local=True, compiles=False, host_only=False)
    distcc: str | None = setting(None, "--distcc", {"TRITONBUILD_DISTCC_HOSTS": _str},
        "distcc hosts (DISTCC_HOSTS syntax, 'host[:port]/jobs ...'): compile on a distcc fleet behind ccache, "
        "with compile jobs sized to its slots", trust="reaches", local=True, compiles=False, host_only=False)
    stable_paths: bool = setting(True, "--stable-paths/--no-stable-paths", {"TRITONBUILD_STABLE_PATHS": env_bool},
        "with a compiler cache, CMake sees the source and plugins through links in the build dir, so another "
        "checkout of the same commit at another path hits the cache", trust="", local=False, compiles=True)
    unity_build: int = setting(0, "--unity-build", {"TRITONBUILD_UNITY_BUILD": env_int},
        "CMake unity builds: this many source files per translation unit (0: off); a target whose files fail "
        "to compile joined is learned and built file by file (unity-learned.txt in the build dir)",
        minimum=0, maximum=64, trust="", local=False, compiles=True)
    unity_exclude: tuple[str, ...] = setting([], "--unity-exclude", None,
        "a CMake target compiled file by file under --unity-build (repeatable): one whose files clash when joined",
        validate=_names("a CMake target name"), trust="", local=False, compiles=True)
    jobs: int | None = setting(None, "-j/--jobs", {"MAX_JOBS": env_int},
        "parallel compile jobs (default: min(cores, total GiB / 2.5))", minimum=1,
        maximum=MAX_JOBS, trust="", local=True, compiles=False, host_only=False)
    link_jobs: int | None = setting(None, "--link-jobs", {"TRITON_PARALLEL_LINK_JOBS": env_int},
        "parallel link jobs (default: min(jobs, total GiB / 8), at least 1)", minimum=1,
        maximum=MAX_JOBS, trust="", local=True, compiles=False, host_only=False)
    build_type: BuildType = setting("TritonRelBuildWithAsserts", "--build-type", None,
        "CMake build type; the default is setup.py's (-O2 -g, assertions on); another one goes in with "
        "--cmake-arg -DCMAKE_BUILD_TYPE=NAME",
        extra=(_build_type,), extra_names=tuple(n for n, _ in BUILD_TYPE_ENV), choices=BUILD_TYPES,
        refusal_hint="A build type of the tree's own CMake goes in with --cmake-arg -DCMAKE_BUILD_TYPE=NAME "
                     "(the last -D wins).", trust="", local=False, compiles=True, decides=("toolchain.build_type",))
    linker: Linker = setting("auto", "--linker", {"TRITONBUILD_LINKER": _str},
        "linker for gcc builds: auto (lld when installed, else gold), lld, gold, bfd, default (the compiler's); "
        "--clang always links with lld", choices=get_args(Linker),
        trust="", local=False, compiles=True, decides=("toolchain.linker",))
    debug_info: DebugInfo = setting("auto", "--debug-info", {"TRITONBUILD_DEBUG_INFO": _str},
        "debug info in the objects: lines (-g1, file:line in backtraces), full (-g, as setup.py), none (-g0), "
        "tree (the build type's own flags); auto: lines for build types that compile with -g "
        "(TritonRelBuildWithAsserts, Debug, RelWithDebInfo), tree otherwise",
        choices=get_args(DebugInfo), trust="", local=False, compiles=True)
    proton: bool | None = setting(None, "--proton/--no-proton", {"TRITON_BUILD_PROTON": env_bool},
        "build the proton profiler (default: on when the source has it and CUPTI headers are found)",
        trust="", local=False, compiles=True, decides=("backends_tuple", "toolchain.proton"))
    offline: bool = setting(False, "--offline/--no-offline", {"TRITON_OFFLINE_BUILD": env_bool},
        "never touch the network; fail listing what is missing", trust="", local=True, compiles=True, host_only=False)
    cmake_args: tuple[str, ...] = setting([], "--cmake-arg", {"TRITON_APPEND_CMAKE_ARGS": _shlex},
        "extra CMake arguments appended to the configure command", validate=_arguments, trust="runs",
        local=False, compiles=True)
    deps: tuple[str, ...] = setting([], "--dep", {"TRITONBUILD_DEPS": _list_semicolon},
        "NAME=PATH|URL: a local checkout (or a git URL, cloned at the pinned tag) for a dependency the tree "
        "fetches at configure time (FETCHCONTENT_SOURCE_DIR_<NAME>); repeatable, env ';' separated",
        validate=_dep_entries, trust="runs", local=False, compiles=True)
    targets: tuple[str, ...] = setting([], "--target", None,
        "extra CMake targets to build besides libtriton (triton-opt, a plugin's tool such as triton-shared-opt); "
        "they stay in the build dir, the wheel does not change", validate=_not_options,
        trust="", local=False, compiles=True)
    strict: bool = setting(False, "--strict/--no-strict", None, "refuse to add back backends the source cannot drop",
        trust="", local=False, compiles=True)
    compile_check: bool = setting(True, "--compile-check/--no-compile-check", {"TRITONBUILD_COMPILE_CHECK": env_bool},
        "after the import, compile real kernels (matmul fp16/bf16/fp8, reduction, softmax, split/permute, atomics) "
        "with the launcher's specialisations for each backend's targets; a failure or hang keeps the wheel out",
        trust="", local=False, compiles=True)
    compile_check_timeout: int = setting(120, "--compile-check-timeout", {"TRITONBUILD_COMPILE_CHECK_TIMEOUT": env_int},
        "seconds one kernel of the compile check may take before it counts as a hang", minimum=1,
        maximum=86400, trust="", local=False, compiles=False)
    canary: Canary = setting("auto", "--canary", {"TRITONBUILD_CANARY": _str},
        "after configure, compile with -fsyntax-only a few translation units that together include every header "
        "of the tree (and the LLVM/MLIR headers those include) and stop a build the errors doom, summarised by "
        "cause; auto: only when the LLVM is not (or does not record being) the source's pin",
        choices=get_args(Canary), trust="", local=False, compiles=True)
    # seconds; 0: none
    canary_budget: float = setting(120.0, "--canary-budget", {"TRITONBUILD_CANARY_BUDGET": env_float},
        "seconds the canary may take after configure (generating the headers it needs counts): the first units "
        "(one per job, the most widely included headers) always start, then no unit starts once the budget has "
        "passed (the units running finish; the full build "
        "compiles the rest), so a doomed build stops early while the canary's cost stays bounded; 0: no budget, "
        "the whole cover. The default applies to build; check-llvm (and llvm compat) compile the whole cover "
        "unless a budget is given", minimum=0, maximum=86400, trust="", local=False, compiles=True)
    require_pinned_llvm: bool = setting(False, "--require-pinned-llvm/--no-require-pinned-llvm",
        {"TRITONBUILD_REQUIRE_PINNED_LLVM": env_bool},
        "refuse an LLVM that is not (or does not record being) the source's pin (the nightly recipe sets it)",
        trust="", local=False, compiles=True)
    api_check: bool = setting(True, "--api-check/--no-api-check", None,
        "refuse a backend that lacks a method the source's BaseBackend/DriverBase declare abstract (off: a warning)",
        trust="", local=False, compiles=True)
    wheelhouse: Path | None = setting(None, "--wheelhouse", {"TRITONBUILD_WHEELHOUSE": _str},
        "a dir of wheels, offline: scikit-build-core and pybind11/nanobind for the isolated build environment of a "
        "target interpreter that lacks them, and NVIDIA's nvidia-cuda-cuobjdump/-nvdisasm wheels",
        validate=_path, trust="runs", local=True, compiles=False, host_only=False)
    stable_abi: bool | None = setting(None, "--stable-abi/--no-stable-abi", {"TRITON_STABLE_ABI": env_bool},
        "one cp312-abi3 wheel for CPython 3.12+ (TRITON_STABLE_ABI; 3.10/3.11 and free-threaded Pythons get their "
        "own); default: on when the tree has the option, as upstream's wheels.yml builds; --no-stable-abi: a wheel "
        "per interpreter", trust="", local=False, compiles=True)
    ext_headers: bool = setting(True, "--ext-headers/--no-ext-headers", {"TRITON_EXT_ENABLED": env_bool},
        "extension headers in the wheel (triton/include: Triton's *.h, *.td and generated *.h.inc, for every tree "
        "generation) and TRITON_EXT_ENABLED=ON where the tree has it, as PyTorch's and Intel's wheels do",
        trust="", local=False, compiles=True)
    wheel_name: str = setting("triton", "--wheel-name", {"TRITON_WHEEL_NAME": _str},
        "distribution name of the wheel (letters, digits, '.', '_', '-'; PEP 427/503)", validate=wheel_name_problem,
        trust="", local=False, compiles=False, decides=("wheel.name",))
    version_suffix: str | None = setting(None, "--version-suffix", {"TRITON_WHEEL_VERSION_SUFFIX": _str},
        "appended to the version (default: +git<sha8> off release branches, like setup.py); the version must "
        "stay PEP 440", validate=_version_suffix, trust="", local=False, compiles=False, decides=("wheel.version",))
    version_scheme: VersionScheme = setting("setup", "--version-scheme", {"TRITONBUILD_VERSION_SCHEME": _str},
        "version suffix: setup (+git<sha8> off release branches), git, date (.devYYYYMMDD), date+git, none",
        choices=get_args(VersionScheme), trust="", local=False, compiles=False, decides=("wheel.version",))
    requires_python: str = setting(">=3.10", None, None, "Requires-Python of the wheel", recipe=True,
        validate=_specifier, trust="", local=False, compiles=True)
    zip_level: int = setting(6, "--zip-level", {"TRITONBUILD_ZIP_LEVEL": env_int},
        "deflate level of the wheel, 0-9 (default 6, like zipfile; the dev recipe uses 1: a 400 MB libtriton "
        "zips several times faster)", minimum=0, maximum=9, trust="", local=False, compiles=False)
    reproducible: bool = setting(False, "--reproducible/--no-reproducible", {"TRITONBUILD_REPRODUCIBLE": env_bool},
        "byte-identical wheels: SOURCE_DATE_EPOCH from the commit, prefix maps, fixed zip metadata",
        trust="", local=False, compiles=False, decides=("wheel.reproducible",))
    strip: bool = setting(False, "--strip/--no-strip", None, "strip debug info from the installed libtriton",
        trust="", local=False, compiles=False)
    repair: bool = setting(False, "--repair/--no-repair", {"TRITONBUILD_REPAIR": env_bool},
        "manylinux repair with auditwheel (grafts needed libraries into the wheel)",
        trust="", local=False, compiles=False)
    repair_exclude: tuple[str, ...] = setting(["libcuda.so.1"], "--repair-exclude", None,
        "libraries the user's system provides (like the CUDA driver): never bundled, never grafted by auditwheel",
        validate=_names("a library file name"),
        trust="", local=False, compiles=False, decides=("wheel.system_libs",))
    plat: str | None = setting(None, "--plat", {"TRITONBUILD_PLAT": _str},
        "the policy --repair gives the wheel (manylinux_2_28_x86_64, manylinux2014_x86_64, musllinux_1_2_x86_64: "
        "auditwheel's names), refused with the symbols that need a newer glibc; default: the lowest the wheel "
        "meets", validate=_plat, trust="", local=False, compiles=True)
    llvm_link: LLVMLink = setting("auto", "--llvm-link", {"TRITONBUILD_LLVM_LINK": _str},
        "how libtriton links a shared-libLLVM LLVM (Debian's): auto (static for wheels when its static libraries "
        "are installed, shared for develop), static, shared", choices=get_args(LLVMLink),
        trust="", local=False, compiles=True, decides=("llvm.link", "llvm.shared_libllvm"))
    bundle_libs: bool = setting(True, "--bundle-libs/--no-bundle-libs", {"TRITONBUILD_BUNDLE_LIBS": env_bool},
        "self-contained wheels: copy needed libraries from outside the manylinux allow-list into triton/_C "
        "($ORIGIN run paths) and drop needed entries nothing uses",
        trust="", local=False, compiles=True, decides=("wheel.self_contained",))
    ccache_remote: str | None = setting(None, "--ccache-remote", {"TRITONBUILD_CCACHE_REMOTE": _str},
        "ccache remote storage shared by build machines (redis://host:port, http://host/path)",
        validate=_ccache_remote, trust="reaches", local=True, compiles=False, host_only=False)
    json_syspath: Path | None = setting(
        None, None, {"JSON_SYSPATH": _str}, "nlohmann/json prefix (default: /usr when found)",
        validate=_path, trust="runs", local=False, compiles=True)
    bundle_nvidia_tools: bool = setting(True, "--bundle-nvidia-tools/--no-bundle-nvidia-tools", None,
        "copy ptxas, cuobjdump and nvdisasm (TRITON_<TOOL>_PATH, else a CUDA toolkit's, else NVIDIA's wheels: "
        "cuda_tools_from) into backends/nvidia/bin, "
        "as setup.py does", trust="", local=False, compiles=True)
    ptxas: Path | None = setting(None, None, {"TRITON_PTXAS_PATH": _str},
        "ptxas given to Triton's CMake; also the one bundled (default: a CUDA toolkit's real binary)",
        validate=_path, trust="runs", local=False, compiles=True)
    cuobjdump: Path | None = setting(None, None, {"TRITON_CUOBJDUMP_PATH": _str},
        "cuobjdump bundled as backends/nvidia/bin/cuobjdump (default: see cuda_tools_from)", validate=_path,
        trust="runs", local=False, compiles=True)
    nvdisasm: Path | None = setting(None, None, {"TRITON_NVDISASM_PATH": _str},
        "nvdisasm bundled as backends/nvidia/bin/nvdisasm (default: see cuda_tools_from)", validate=_path,
        trust="runs", local=False, compiles=True)
    cuda_tools_from: CudaToolsFrom = setting("auto", "--cuda-tools-from", {"TRITONBUILD_CUDA_TOOLS_FROM": _str},
        "where the bundled cuobjdump and nvdisasm come from when TRITON_<TOOL>_PATH is not set: auto (a CUDA "
        "toolkit or PATH, else NVIDIA's nvidia-cuda-<tool> wheel from pypi_index or --wheelhouse, at the CUDA major "
        "of the bundled ptxas), host (never a wheel), pypi (the wheel even when the host has the tool)",
        choices=get_args(CudaToolsFrom), trust="", local=False, compiles=True)
    cupti_include: Path | None = setting(None, None, {"TRITON_CUPTI_INCLUDE_PATH": _str},
        "CUPTI headers for proton (default: a CUDA toolkit's, else NVIDIA's CUPTI wheel at the tree's pin)",
        validate=_path, trust="runs", local=False, compiles=True)
    cupti_lib: Path | None = setting(None, None, {"TRITON_CUPTI_LIB_PATH": _str},
        "CUPTI libraries copied into backends/nvidia/lib/cupti (default: a toolkit's, else the CUPTI wheel's)",
        validate=_path, trust="runs", local=False, compiles=True)
    cudart_path: Path | None = setting(None, None, {"TRITON_CUDART_PATH": _str},
        "CUDA runtime headers (cuda.h) for backends/nvidia/include (default: a toolkit's, else the PyPI wheel's)",
        validate=_path, trust="runs", local=False, compiles=True)
    cudacrt_path: Path | None = setting(
        None, None, {"TRITON_CUDACRT_PATH": _str}, "CUDA CRT headers (an include dir with crt/)",
        validate=_path, trust="runs", local=False, compiles=True)
    ptxas_blackwell: Path | None = setting(None, None, {"TRITON_PTXAS_BLACKWELL_PATH": _str},
        "ptxas for sm_100+ bundled as backends/nvidia/bin/ptxas-blackwell, for trees that look for it "
        "(default: a second CUDA toolkit's ptxas)", validate=_path, trust="runs", local=False, compiles=True)
    roctracer_include: Path | None = setting(None, None, {"TRITON_ROCTRACER_INCLUDE_PATH": _str},
        "roctracer headers for proton (default: the amd backend's third_party/amd/backend/include)", validate=_path,
        trust="runs", local=False, compiles=True)
    rocm_include: Path | None = setting(None, None, {"TRITON_ROCM_INCLUDE_PATH": _str},
        "ROCm headers for proton in trees that require ROCM_INCLUDE_DIR (default: third_party/amd/backend/include)",
        validate=_path, trust="runs", local=False, compiles=True)
    xpupti_include: Path | None = setting(None, None, {"TRITON_XPUPTI_INCLUDE_PATH": _str},
        "Intel XPUPTI headers for proton in trees that require XPUPTI_INCLUDE_DIR (default: "
        "third_party/intel/backend/proton/include)", validate=_path, trust="runs", local=False, compiles=True)
    pypi_index: str = setting("https://pypi.org/simple", None,
        {"TRITONBUILD_PYPI_INDEX": _str, "PIP_INDEX_URL": _str},
        "package index NVIDIA's CUDA/CUPTI wheels are fetched from when no toolkit has the files (http, https or "
        "file, as pip takes it)",
        validate=_index_url, trust="reaches", local=False, compiles=False)
    http_retries: int = setting(3, None, {"TRITONBUILD_HTTP_RETRIES": env_int},
        "attempts of each download of a prebuilt LLVM before it counts as a network failure",
        minimum=1, maximum=100, trust="", local=True, compiles=False, host_only=False)
    http_timeout: float = setting(30.0, None, {"TRITONBUILD_HTTP_TIMEOUT": env_float},
        "seconds a download of a prebuilt LLVM may wait for the server before the attempt fails", minimum=0,
        maximum=3600, validate=_positive_seconds, trust="", local=True, compiles=False, host_only=False)
    # seconds for all the attempts of one download
    http_deadline: float = setting(3600.0, None, {"TRITONBUILD_HTTP_DEADLINE": env_float},
        "seconds one download (a prebuilt LLVM, an NVIDIA wheel) may take, all its attempts together, before it "
        "is stopped (a read may overrun it by up to http_timeout)", minimum=0, maximum=604800,
        validate=_positive_seconds, trust="", local=True, compiles=False, host_only=False)
    # bytes/s over a sliding window; 0: no minimum
    http_min_rate: int = setting(1024, None, {"TRITONBUILD_HTTP_MIN_RATE": env_int},
        "bytes per second a download must average over each 60 s window once its first 60 s have passed, else "
        "the attempt is stopped (and retried while the deadline allows); 0: no minimum", minimum=0,
        maximum=1 << 30, trust="", local=True, compiles=False, host_only=False)
    http_max_bytes: int = setting(4 << 30, None, {"TRITONBUILD_HTTP_MAX_BYTES": env_int},
        "bytes one download may have: a larger Content-Length is refused before the body is read, and a body that "
        "grows past it is stopped (not retried); a prebuilt LLVM archive is about 0.5-1 GiB", minimum=1,
        maximum=1 << 40, trust="", local=True, compiles=False, host_only=False)
    source_date_epoch: int | None = setting(None, None, {"SOURCE_DATE_EPOCH": _epoch},
        "seconds since 1970 that a reproducible build and the date version schemes take for the build's time "
        "(reproducible-builds.org's variable; default: the source's commit time)", minimum=0, maximum=MAX_EPOCH,
        trust="", local=False, compiles=False)
    llvm_system_suffix: str | None = setting(None, None, {"TRITON_LLVM_SYSTEM_SUFFIX": _suffix},
        "the platform suffix of Triton's prebuilt LLVM archive (ubuntu-x64, ubuntu-arm64, almalinux-x64, "
        "almalinux-arm64, macos-arm64; Triton's variable; default: this host's)",
        trust="", local=True, compiles=False, host_only=True)
    sccache_server_port: int | None = setting(None, None, {"SCCACHE_SERVER_PORT": env_int},
        "the port of the sccache server the build uses (sccache's variable; default: one port per SCCACHE_* "
        "configuration and base dirs, 20000-29999)", minimum=1, maximum=65535,
        trust="", local=True, compiles=False, host_only=True)
    # from the environment; --cache-dir and a recipe's cache_dir come before it
    cache_root: str | None = setting(None, None, None,
        "the cache root when neither --cache-dir nor a recipe's cache_dir names one: TRITONBUILD_CACHE_DIR, else "
        "$TRITON_HOME/.triton/tritonbuild, else $XDG_CACHE_HOME/tritonbuild, else ~/.cache/tritonbuild",
        extra=(_cache_root,), extra_names=tuple(n for n, _ in CACHE_ENV), trust="runs", local=True,
        compiles=False, host_only=True)
    # an image reference; "" or None: this host
    container: str | None = setting(None, "--container", {"TRITONBUILD_CONTAINER": _str},
        "run the build inside this container image (docker or podman), as cibuildwheel does: the source, "
        "plugins, patches and wheelhouse mounted read-only, the cache and the out dir read-write, at the same "
        "paths; tritonbuild from this installation, run as your user; an empty value builds on this host",
        validate=image_problem, trust="runs", local=True, compiles=False, host_only=True)
    container_engine: ContainerEngine = setting("auto", "--container-engine", {"TRITONBUILD_CONTAINER_ENGINE": _str},
        "the engine of --container: docker, podman, or auto (the first of them found on PATH)",
        choices=get_args(ContainerEngine), trust="runs", local=True, compiles=False, host_only=True)
    # inside the image
    container_python: str | None = setting(None, "--container-python", {"TRITONBUILD_CONTAINER_PYTHON": _str},
        "the image's Python 3.11+ that runs tritonbuild in --container (a path inside the image or a command "
        "name; default: /opt/python/cp312-cp312/bin/python in pypa's manylinux and musllinux images, else "
        "python3); the wheel is for it unless --python names another",
        validate=_container_python, trust="runs", local=True, compiles=False, host_only=True)

    _given: Mapping[str, Resolved] = field(default_factory=dict, repr=False, hash=False)

    def origin(self, name: str) -> str:
        """Where the value of the setting ``name`` came from: ``default``, ``recipe <path>``, ``env NAME``,
        ``cli --flag``."""
        return self._resolved(name).origin

    def _resolved(self, name: str) -> Resolved:
        if name not in SPEC_BY_NAME:
            raise ValueError(f"no setting is named {name!r}")
        return self._given.get(name) or Resolved(SPEC_BY_NAME[name].default, "default")

    def given(self, name: str) -> tuple[Any, str]:
        """The setting ``name``'s value as the plan's JSON holds it, and its origin: the value as it was given (a list
        as a list, a path as typed), unless it was replaced since (``dataclasses.replace``: the checkouts of git
        plugins), then the new one as JSON holds it."""
        given, value = self._resolved(name), getattr(self, name)
        return given.value if _typed(_HINTS[name], given.value) == value else _plain(value), given.origin

    def report(self) -> dict[str, dict[str, Any]]:
        """``{"name": {"value": ..., "origin": ...}}`` by name (``given``): the plan's settings as JSON says them."""
        return {name: dict(zip(("value", "origin"), self.given(name), strict=True)) for name in sorted(SPEC_BY_NAME)}

    def with_origin(self, names: Iterable[str], origin: str) -> Settings:
        """These settings, the values the same, said to come from ``origin`` (a remembered request's flags)."""
        given = {**self._given, **{n: Resolved(self._resolved(n).value, origin) for n in names}}
        return replace(self, _given=given)

    @classmethod
    def of(cls, resolved: Mapping[str, Resolved]) -> Settings:
        """The typed values of what ``resolve_settings`` decided for each setting (checked by their specs)."""
        missing = [name for name in SPEC_BY_NAME if name not in resolved]
        if missing:
            raise ValueError(f"settings missing from the resolved mapping: {missing}")
        return cls(**{name: _typed(_HINTS[name], resolved[name].value) for name in SPEC_BY_NAME},
                   _given=dict(resolved))


def specs_of(cls: type) -> tuple[Spec, ...]:
    """The ``Spec`` of each public field of the dataclass ``cls``, named after it, in the fields' order; a field
    declared without ``setting`` (no ``Spec`` in its metadata) is refused: it would be a value nothing reads."""
    bare = [f.name for f in fields(cls) if not f.name.startswith("_") and not isinstance(f.metadata.get(SPEC), Spec)]
    if bare:
        raise TypeError(f"{cls.__name__} declares {', '.join(bare)} without setting(...): every setting is declared "
                        "with its Spec")
    return tuple(replace(f.metadata[SPEC], name=f.name) for f in fields(cls) if not f.name.startswith("_"))


SPECS = specs_of(Settings)
SPEC_BY_NAME = {s.name: s for s in SPECS}
_HINTS = get_type_hints(Settings)


def _plain(value: Any) -> Any:
    """A typed value as JSON holds it: a tuple as a list, a path as its text."""
    return list(value) if isinstance(value, tuple) else str(value) if isinstance(value, Path) else value


def _typed(hint: Any, value: Any) -> Any:
    """``value`` as the field's type: a list as a tuple, a path's text as a ``Path``; None stays None."""
    if value is None:
        return None
    if get_origin(hint) is tuple:
        return tuple(value)
    if hint is Path or Path in get_args(hint):
        return Path(value) if value != "" else None  # an empty path (--wheelhouse '') is no path, not the cwd
    return value


def resolve_settings(
    cli: Mapping[str, Any],
    env: Mapping[str, str],
    recipe: Mapping[str, Any] | None = None,
    recipe_origin: str = "recipe",
) -> Settings:
    """Apply default < recipe < environment < CLI to every setting. ``None`` in ``cli`` means not given. Every
    value is checked by its ``Spec`` whichever origin gave it, so a plan never holds a value the build refuses."""
    recipe = recipe or {}
    unknown = set(cli) - set(SPEC_BY_NAME)
    if unknown:
        raise ValueError(f"unknown settings from the CLI: {sorted(unknown)}")
    return Settings.of({spec.name: _resolve(spec, cli, env, recipe, recipe_origin) for spec in SPECS})


def _resolve(spec: Spec, cli: Mapping[str, Any], env: Mapping[str, str], recipe: Mapping[str, Any],
             recipe_origin: str) -> Resolved:
    chosen = Resolved(spec.default, "default")
    if spec.name in recipe and recipe[spec.name] is not None:
        chosen = Resolved(recipe[spec.name], recipe_origin)
    for reader in spec.env:
        hit = reader(env)
        if hit is not None:
            chosen = Resolved(hit[0], f"env {hit[1]}")
            break
    given = cli.get(spec.name)
    if given is not None and given != [] and given != ():
        chosen = Resolved(list(given) if isinstance(given, tuple) else given, f"cli {spec.flag}")
    spec.check(chosen.value, chosen.origin)
    return chosen


def env_settings(env: Mapping[str, str]) -> Settings:
    """The settings as the environment alone gives them (default < env), for the edge code that reads the
    environment outside a plan (doctor's LLVM, the cache root): read by attribute, ``.llvm``, ``.origin("llvm")``.
    Each is resolved and checked by its spec when it is read, so a refused variable of a setting the caller does not
    read refuses nothing (as ``resolve_settings`` would); typed as ``Settings`` (only its attributes and ``origin``
    are there) so that a misspelt name fails mypy."""
    return cast(Settings, _FromEnv(env))


class _FromEnv:
    """``env_settings``' view: an attribute is the setting's value, resolved (default < env) when read."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def __getattr__(self, name: str) -> Any:
        if name not in SPEC_BY_NAME:
            raise AttributeError(f"no setting is named {name!r}")
        return _typed(_HINTS[name], env_resolved(name, self._env).value)

    def origin(self, name: str) -> str:
        if name not in SPEC_BY_NAME:
            raise ValueError(f"no setting is named {name!r}")
        return env_resolved(name, self._env).origin


def env_resolved(name: str, env: Mapping[str, str]) -> Resolved:
    """The setting ``name`` as the environment alone gives it (default < env, checked like any other), with its
    origin (``default`` or ``env NAME``)."""
    return _resolve(SPEC_BY_NAME[name], {}, env, {}, "recipe")
