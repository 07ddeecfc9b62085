"""``build --container IMAGE``: the same build, run inside a container image by docker or podman (edge).

As cibuildwheel runs its builds in a manylinux image, tritonbuild runs itself there: the build's inputs are bind
mounted at the same paths inside as outside (the source, plugin dirs, patches, recipe, wheelhouse and local tool
paths read-only; the image's own dir of the cache and the out dir read-write), so every path of the plan means the
same file on both sides (the image never writes the host's LLVM cache or build dirs). tritonbuild is this
installation's own package, mounted read-only and put on ``PYTHONPATH``; its dependencies go into a venv of the
image's Python kept in the image's own dir of the cache (``<cache>/container/<key>/venv``, beside its ``cache`` root
and ``home``, made once per image and interpreter, refreshed when the dependencies change). The command line is
given again as an argument list (never a shell string), less the container options, with ``--container ''`` so the
inner run builds where it is. Only the variables tritonbuild reads as settings go in (``-e NAME`` for each one set;
never the whole environment), the run is the user's uid and gid (podman rootless: ``--userns=keep-id``), an offline
build gets ``--network=none``, and the container's exit code is tritonbuild's.

Everything is checked before the engine runs: the image reference (by its setting), the engine on PATH, each path to
mount (it exists, and holds no ':' the engine's volume syntax would split on).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tritonbuild.errors import EnvironmentProblem, UserError
from tritonbuild.reporter import Reporter
from tritonbuild.settings import cacheroot
from tritonbuild.settings.model import SPEC_BY_NAME, SPECS, Settings, show
from tritonbuild.system import paths, proc

ENGINES = ("docker", "podman")
PYPA_PYTHON = "/opt/python/cp312-cp312/bin/python"  # pypa's manylinux and musllinux images
# Settings whose local paths are mounted read-only (``Spec.path``; the source, ``Spec.identity``, on its own).
PATH_SETTINGS = tuple(s.name for s in SPECS if s.path and not s.identity)
# Options typed on the host whose values are host paths: made absolute for the inner run (its workdir may differ).
PATH_OPTIONS = (*(s.name for s in SPECS if s.path and s.flag), "recipe")
EXTRA_ENV = ("NO_COLOR",)  # read besides the settings' variables
# Options typed on the host that are no setting and are given again, absolute: the inner run's cache and out dirs.
GIVEN_AGAIN = ("cache_dir", "out")
STEP_TIMEOUT = 3600.0  # seconds the image's pull and venv, or the dependencies' install, may take


@dataclass(frozen=True)
class Mount:
    path: str  # absolute, the same inside as outside
    writable: bool


@dataclass(frozen=True)
class Container:
    """How the inner runs go: the engine (an absolute path), the image, the mounts, the variables passed by name
    (``passed``) and set by tritonbuild (``values``), the workdir, the user, and the venv the inner run uses."""

    engine: str
    image: str
    python: str
    mounts: tuple[Mount, ...]
    passed: tuple[str, ...]
    values: tuple[tuple[str, str], ...]
    workdir: str
    user: tuple[int, int]
    offline: bool
    venv: str
    cache: str
    out: str

    @property
    def podman(self) -> bool:
        return Path(self.engine).name.startswith("podman")


def passed_env(env: Mapping[str, str]) -> tuple[str, ...]:
    """The names of the variables tritonbuild reads (the settings' own, and ``EXTRA_ENV``) that are set in ``env``,
    less the host's own (``Spec.host_only``: the container's, the cache root's, the inner run finds the rest): each
    goes in as ``-e NAME``."""
    names = [n for spec in SPECS if not spec.host_only for n in spec.env_names] + list(EXTRA_ENV)
    return tuple(sorted({n for n in names if n in env}))


def image_python(image: str, given: str | None) -> str:
    """The image's Python that runs tritonbuild: ``--container-python``, else pypa's CPython 3.12 in a manylinux or
    musllinux image, else ``python3``."""
    if given:
        return given
    name = image.split("@")[0].rsplit("/", 1)[-1].split(":")[0]
    return PYPA_PYTHON if name.startswith(("manylinux", "musllinux")) else "python3"


def find_engine(choice: str, env: Mapping[str, str]) -> str:
    """The engine's absolute path: the one asked for, or the first of docker and podman found; refused (exit 2)
    when it is not installed."""
    names = ENGINES if choice == "auto" else (choice,)
    for name in names:
        if found := proc.tool(name, env):
            return found
    raise UserError(f"--container needs {' or '.join(names)}, and {'neither is' if len(names) > 1 else 'it is not'} "
                    "on PATH. Install one (Debian: apt install podman, or Docker's docker-ce), or pick the one you "
                    "have with --container-engine; nothing was run.")


def absolute(cwd: Path, value: str) -> str:
    """A host path made absolute against ``cwd``, links not followed (the engine mounts what the link names)."""
    return os.path.normpath(cwd / Path(value).expanduser())


def _local(value: str) -> bool:
    return "://" not in value and not value.startswith(("git@", "git+"))


def _url(value: str, cwd: Path) -> bool:
    """Whether a path setting's value is a URL to clone rather than a path to mount: ``scheme://``, ``git+``,
    ``git@host:``, or another ``user@host:path`` form that names nothing here."""
    return not _local(value) or (re.match(r"[\w.-]+@[\w.-]+:", value) is not None and not os.path.lexists(cwd / value))


# A file or unix-socket URL names this host's file or socket (ccache's ``file:``/``redis+unix:`` storages, pip's
# ``file://`` index); a URL's host (``scheme://[user@]host``, git's ``user@host:``) may be the loopback.
_SCHEME = re.compile(r"(?i)(?:^|(?<=[\s,;|=(\"']))([a-z][a-z0-9+.-]*):(\S*)")
_SCP = re.compile(r"(?:^|(?<=[\s,;=]))[\w.-]+@(\[[^\]\s]*\]|[\w.-]+):")
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


def check(s: Settings, cwd: Path) -> None:
    """What ``build --container`` refuses before the engine is looked for (``plan --container`` refuses the same):
    a value passed into the image that names this host, a path to mount that does not exist."""
    _host_references(s)
    _mount_paths(s, cwd)


def _host_references(s: Settings) -> None:
    """Refuse a setting passed into the image (not ``host_only``; a path setting only when it is a URL, since a
    path is mounted) whose value names this host: inside the image it names the container, so the build would
    silently use another storage, index or clone, or none."""
    for spec in SPECS:
        value = getattr(s, spec.name)
        items = [str(v) for v in value] if isinstance(value, tuple) else [value] if isinstance(value, str) else []
        for item in items if not spec.host_only else []:
            part = spec.keyed[0](item)[1] if spec.keyed and spec.path else item  # NAME=PATH|URL: the URL
            if spec.path and _local(part) and not _SCP.match(part):
                continue
            if names_this_host(part, distcc=spec.name == "distcc"):
                raise UserError(f"--container passes {spec.name} = {show(item)} ({s.origin(spec.name)}) into the "
                                "image, and it names this host (a file, a unix socket or the loopback), which inside "
                                "the image is the container itself. Give a storage, index or host the image can reach "
                                "over the network (a local checkout as a path, which is mounted), or build without "
                                "--container; nothing was run.")


def names_this_host(value: str, *, distcc: bool = False) -> bool:
    """Whether ``value`` names this host: a ``file:`` or ``*unix:`` URL, or a URL or git host that is the loopback
    (``loopback``); in distcc's host list also a loopback host other than distcc's own ``localhost``, which means
    "compile here" (in the image: the image's compiler, as wanted)."""
    for m in _SCHEME.finditer(value):
        parts, rest = m.group(1).lower().split("+"), m.group(2)
        if parts[-1].endswith("unix") or ("file" in parts and (rest.startswith(("/", ".")) or m.start() == 0)):
            return True  # redis+unix:SOCKET; file:/path, file:///path, git+file://, file:x as the whole value
        if rest.startswith("//") and loopback(_host_of(rest[2:])):
            return True
    if any(loopback(m.group(1)) for m in _SCP.finditer(value)):
        return True
    return distcc and any(loopback(h) and not _LOCAL_DISTCC.fullmatch(word) for word, h in _distcc_hosts(value))


def _host_of(rest: str) -> str:
    """The host of a URL's part after ``//``: its authority less the user and the port."""
    authority = re.split(r"[/?#|]", rest, maxsplit=1)[0].rpartition("@")[2]
    return authority[1:].partition("]")[0] if authority.startswith("[") else authority.partition(":")[0]


_LOCAL_DISTCC = re.compile(r"localhost(?:/\d+)?")  # distcc(1): LOCAL_HOST = localhost[/LIMIT], compile here


def _distcc_hosts(value: str) -> list[tuple[str, str]]:
    """Each word of a DISTCC_HOSTS list (``[@][user@]host[:port][/limit][,opt]``; ``--randomize``, ``+zeroconf``:
    no host) and its host."""
    hosts = []
    for word in value.split():
        if word.startswith(("-", "+")):
            continue
        spec = word.lstrip("@").rpartition("@")[2]
        host = spec[1:].partition("]")[0] if spec.startswith("[") else re.split(r"[:/,]", spec, maxsplit=1)[0]
        hosts.append((word, host))
    return hosts


def loopback(host: str) -> bool:
    """Whether a host names this machine: the loopback or the unspecified address in any form the resolver takes
    (``127.1``, ``2130706433``, ``0177.0.0.1``, ``0x7f000001``, ``[::]``, ``::ffff:127.0.0.1``), or a loopback name
    (``localhost.``, ``foo.localhost``). Parsed only: no name is looked up."""
    import ipaddress
    import socket

    h = host.strip().lower().removesuffix(".")
    h = h[1:-1] if h.startswith("[") and h.endswith("]") else h
    if h in _LOOPBACK_NAMES or h.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(h.partition("%")[0])
    except ValueError:
        try:
            packed = socket.inet_aton(h) if h.isascii() and h.isprintable() and h else b"\1"
        except OSError:
            return False
        return packed[0] == 127 or packed == bytes(4)
    ip = ip.ipv4_mapped or ip if isinstance(ip, ipaddress.IPv6Address) else ip
    return ip.is_loopback or ip.is_unspecified


def _mount_paths(s: Settings, cwd: Path) -> list[str]:
    """The host paths the build reads: the source (the working directory when none is given), every local path of
    ``PATH_SETTINGS``; each must exist."""
    if s.submodules:
        raise UserError(f"--container does not mount --submodule's clones ({', '.join(map(show, s.submodules))}, "
                        f"from {s.origin('submodules')}): check the submodule out in the checkout (`git submodule "
                        "update --init`), which is mounted, or build without --container; nothing was run.")
    found = [str(cwd)] if s.source is None else [s.source] if _local(s.source) else []
    for name in PATH_SETTINGS:
        spec, value = SPEC_BY_NAME[name], getattr(s, name)
        items = [str(v) for v in value] if isinstance(value, tuple) else [] if value is None else [str(value)]
        for item in items:
            path = spec.keyed[0](item)[1] if spec.keyed else item  # NAME=FILE: the file is mounted
            if item in spec.words or _url(path, cwd):
                continue  # `--llvm system`; a plugin dir or llvm-project to clone in the image
            found.append(path)
    out = []
    for item in found:
        path = absolute(cwd, item)
        if not os.path.lexists(path):
            raise UserError(f"--container mounts {show(item)} into the image, and it does not exist. Give a path "
                            "that does (or leave the setting out); nothing was run.")
        out.append(path)
    return out


def mounts(read: Sequence[str], write: Sequence[str]) -> tuple[Mount, ...]:
    """The bind mounts: each written path read-write, each read path read-only unless it lies under another read
    one; in order of depth (a parent before what is mounted inside it). A path with ':' (the engines split
    ``--volume`` on it) or a character that is not text is refused."""
    for path in (*read, *write):
        if ":" in path or "," in path or re.search(r"[\x00-\x1f\x7f]", path):
            raise UserError(f"--container cannot mount {show(path)}: docker and podman split a volume on ':' (and "
                            "',' in --mount), and a control character is no path to give them. Move it to a path "
                            "without them; nothing was run.")
    ro = sorted(set(read) - set(write))
    kept = [p for p in ro if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in ro)]
    found = [Mount(p, False) for p in kept] + [Mount(p, True) for p in sorted(set(write))]
    return tuple(sorted(found, key=lambda m: (m.path.count("/"), m.path)))


def run_argv(c: Container, command: Sequence[str]) -> list[str]:
    """``ENGINE run ... IMAGE COMMAND...`` for one inner command, as an argument list."""
    argv = [c.engine, "run", "--rm", "--init", "--user", f"{c.user[0]}:{c.user[1]}"]
    if c.podman and c.user[0] != 0:
        argv.append("--userns=keep-id")  # rootless podman maps the user's own id, not a subordinate one
    if c.offline:
        argv.append("--network=none")
    for m in c.mounts:
        argv += ["--volume", f"{m.path}:{m.path}:{'rw' if m.writable else 'ro'}"]
    for name in c.passed:
        argv += ["--env", name]
    for name, value in c.values:
        argv += ["--env", f"{name}={value}"]
    return [*argv, "--workdir", c.workdir, c.image, *command]


def inner_args(given: Sequence[tuple[str, str, str | None]], c: Container, cwd: Path) -> list[str]:
    """The inner ``build``'s arguments: the typed options (``cli.options.given_options``) less the host's own
    (``Spec.host_only``: the container ones), the cache dir and the out dir (given again, absolute), host paths made
    absolute; ``--container ''``."""
    args: list[str] = []
    for name, opt, value in given:
        if name in GIVEN_AGAIN or (name in SPEC_BY_NAME and SPEC_BY_NAME[name].host_only):
            continue
        keyed = SPEC_BY_NAME[name].keyed if name in SPEC_BY_NAME else None
        target, file = keyed[0](value) if keyed and value is not None else (None, value)
        if file is not None and name in PATH_OPTIONS and _local(file) and os.path.lexists(cwd / file) \
                and not (name in SPEC_BY_NAME and file in SPEC_BY_NAME[name].words):
            value = keyed[1](target, absolute(cwd, file)) if keyed else absolute(cwd, file)
        args += [opt] if value is None else [opt, value]
    return [*args, "--cache-dir", c.cache, "--out", c.out, "--container", ""]


def dependencies() -> list[str]:
    """tritonbuild's own requirements (not its extras), as pip takes them: this installation's metadata, else the
    checkout's pyproject.toml."""
    from importlib import metadata

    try:
        found = metadata.requires("tritonbuild") or []
    except metadata.PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        found = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return [r for r in found if "extra ==" not in r.replace("extra==", "extra ==")]


def own_files(package: Path) -> list[str]:
    """What tritonbuild itself needs in the image: its package, and its data (``cmake/``, ``recipes/``,
    ``llvm-hash.txt``), which sit at the top of a checkout rather than in the package."""
    data = paths.data_dir()
    found = [package, paths.cmake_dir(), paths.recipes_dir(), data / "llvm-hash.txt"]
    return [str(p) for p in found if p.exists()]


def prepare(s: Settings, env: Mapping[str, str], cwd: Path, cache_root: Path, out: Path,
            recipe_file: Path | None) -> Container:
    """The container of a request's settings, every check done (nothing is created or run here)."""
    assert s.container
    _host_references(s)
    engine = find_engine(s.container_engine, env)
    python = image_python(s.container, s.container_python)
    package = Path(__file__).resolve().parents[1]
    read = [*_mount_paths(s, cwd), *own_files(package), *([str(recipe_file)] if recipe_file else [])]
    key = hashlib.sha256(f"{s.container}\0{python}".encode()).hexdigest()[:16]
    # the image writes only its own dir of the cache (its venv, home and cache root) and the out dir: never the
    # host's LLVM cache, build dirs or clones, whose programs (llvm-config, a build dir's tools) the host runs
    home = cache_root / "container" / key
    mounted = mounts(read, [str(home), str(out)])
    inside = any(str(cwd) == m.path or str(cwd).startswith(m.path.rstrip("/") + "/") for m in mounted)
    values = (("HOME", str(home / "home")), ("PYTHONPATH", str(package.parent)),
              ("PIP_DISABLE_PIP_VERSION_CHECK", "1"))
    return Container(engine, s.container, python, mounted, passed_env(env), values,
                     str(cwd) if inside else str(home), (os.getuid(), os.getgid()), s.offline,
                     str(home / "venv"), str(home / "cache"), str(out))


def _step(c: Container, command: list[str], what: str, env: Mapping[str, str], console: Reporter) -> None:
    argv = run_argv(c, command)
    console.step(f"container: {what}: {shlex.join(argv)}")
    res = proc.run(argv, env=env, timeout=STEP_TIMEOUT)
    if not res.ok:
        raise EnvironmentProblem(
            f"--container could not {what} in {c.image} with {Path(c.engine).name} (exit {res.returncode}):\n"
            f"{res.output[-2000:]}\nIs the engine's daemon (or rootless podman) working, is the image's Python "
            f"{c.python} 3.11 or newer with venv (give another with --container-python), and can the image reach "
            "the package index (or give --wheelhouse with the dependencies' wheels)?")


def bootstrap(c: Container, wheelhouse: Path | None, env: Mapping[str, str], console: Reporter) -> str:
    """The venv's interpreter in the image, made and given tritonbuild's dependencies when they are not there
    yet (the cache keeps both: a second build starts at once)."""
    venv = Path(c.venv)
    for d in (Path(c.cache), Path(c.out), venv.parent / "home"):
        d.mkdir(parents=True, exist_ok=True)  # made by the user: the engine would make them root's
    if not (venv / "pyvenv.cfg").is_file():
        _step(c, [c.python, "-m", "venv", c.venv], f"make a venv of {c.python}", env, console)
        if not (venv / "pyvenv.cfg").is_file():
            raise EnvironmentProblem(f"--container made no venv at {venv} ({c.python} -m venv in {c.image} ended "
                                     "well, but nothing is there): the image may not see the cache mounted as "
                                     "this user's (rootless docker maps ids differently; try podman).")
    wanted = "\n".join(sorted(dependencies())) + "\n"
    marker = venv / "tritonbuild-dependencies.txt"
    if not marker.is_file() or marker.read_text() != wanted:
        index = ["--no-index", *(["--find-links", str(wheelhouse)] if wheelhouse else [])] if c.offline else []
        _step(c, [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *index, *sorted(dependencies())],
              "install tritonbuild's dependencies", env, console)
        try:
            marker.write_text(wanted)
        except OSError as exc:  # the next run installs again: slower, not wrong
            console.warn(f"could not record the installed dependencies in {marker}: {exc.strerror or exc}")
    return str(venv / "bin" / "python")


def build_in_container(s: Settings, given: Sequence[tuple[str, str, str | None]], env: Mapping[str, str], cwd: Path,
                       cache_dir: str | None, out: Path, recipe_file: Path | None, console: Reporter) -> int:
    """Run ``build`` inside ``s.container``; its exit code."""
    root = cacheroot.cache_root(env, cache_dir)
    c = prepare(s, env, cwd, root, out, recipe_file)
    python = bootstrap(c, s.wheelhouse if s.wheelhouse is None else cwd / s.wheelhouse, env, console)
    argv = run_argv(c, [python, "-m", "tritonbuild", "build", *inner_args(given, c, cwd)])
    console.step(f"container: build: {shlex.join(argv)}")
    return proc.run(argv, env=env, capture=False).returncode
