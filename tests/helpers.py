"""Helpers more than one test module uses: test modules import from here (or a conftest), never from each other.

- ``HOST``, ``llvm``, ``nvidia_facts``, ``facts``, ``plan_for``: the gathered facts of an example tree on a made-up
  host, and the plan resolved from them (pure: nothing is probed).
- ``wheel``, ``WHEEL_FILES``: a small well-formed wheel for ``compare``.
- ``serve``: a real HTTP server on 127.0.0.1 serving a directory.
- ``json_out``, ``one_of``: a ``--json`` run's one object, checked against its command's shipped JSON Schema.
- ``patch_headers``, ``lands_inside``, ``fine``: generated patch headers (modes in the spellings git reads, every
  kind of header, quoted and hostile names) and what tritonbuild must make of them, for the reader's property
  test and its comparison with git apply.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import http.server
import json
import os
import platform
import posixpath
import stat
import struct
import subprocess
import sys
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import IO, Literal

from hypothesis import strategies as st

from tritonbuild.gather import patches
from tritonbuild.gather.collect import environment_facts
from tritonbuild.gather.plugins import read_all
from tritonbuild.gather.source import inspect_source
from tritonbuild.nvidia.discover import driver_headers
from tritonbuild.reporter import Kind, ProgressBar, clamp, log_progress, shows
from tritonbuild.resolve.facts import Facts, HostFacts, LLVMInstall
from tritonbuild.resolve.nvidia_parts import NvidiaFacts, Source
from tritonbuild.resolve.resolver import resolve_plan
from tritonbuild.resolve.source import GitState
from tritonbuild.settings.model import resolve_settings

ALL_TARGETS = ("AArch64", "AMDGPU", "NVPTX", "SPIRV", "X86")

HOST = HostFacts(
    machine="x86_64", system="Linux", glibc="2.36", cpus=8, mem_total_gib=32.0, mem_available_gib=30.0,
    disk_free_gib=100.0, python="/usr/bin/python3",
    tools={"gcc": "/usr/bin/gcc", "g++": "/usr/bin/g++", "ccache": "/usr/bin/ccache", "clang": None,
           "clang++": None, "ld.lld": None, "ptxas": None},
    pybind11_cmake_dir="/py/pybind11/share/cmake/pybind11",
)


def llvm(prefix: str = "/usr/lib/llvm-22", **kw: object) -> LLVMInstall:
    base: dict[str, object] = {
        "prefix": prefix, "runs": True, "version": "22.1.8", "targets_built": ALL_TARGETS, "has_mlir": True,
        "has_lld": True, "mlir_tblgen_runs": True, "link_dylib": True, "revision": None,
        "found_by": "/usr/lib/llvm-*",
    }
    base.update(kw)
    return LLVMInstall(**base)  # type: ignore[arg-type]


def nvidia_facts(root: Path, cuda_include: str | None, tools: tuple[tuple[str, str, str], ...] = (),
                 **kw: object) -> NvidiaFacts:
    """What discover.gather would say for a toolkit whose include/ is ``cuda_include`` (None: no CUDA at all)."""
    src = inspect_source(root)
    headers = driver_headers(root / "third_party" / "nvidia", src.nvidia_missing_headers)
    found = {c: Source(c, (cuda_include,), "CUDA toolkit /usr/local/cuda") for c in ("cudart", "cupti", "cupti-lib")}
    base: dict[str, object] = {
        "driver_headers": headers, "sources": found if cuda_include else {}, "tools": tools,
        "header_files": tuple((cuda_include, h) for h in headers) if cuda_include else None,
        "cupti_header_files": ((cuda_include, "cupti.h"),) if cuda_include else None,
        "cupti_lib_files": ((cuda_include, "libcupti.so"),) if cuda_include else None}
    base.update(kw)
    return NvidiaFacts(**base)  # type: ignore[arg-type]


def facts(root: Path, *, host: HostFacts = HOST, system: tuple[LLVMInstall, ...] = (llvm(),),
          explicit: LLVMInstall | None = None, git: GitState | None = None,
          cuda_include: str | None = "/usr/local/cuda/include",
          nvidia_tools: tuple[tuple[str, str, str], ...] = (), nvidia: NvidiaFacts | None = None) -> Facts:
    return Facts(source=inspect_source(root, git), host=host, llvm_explicit=explicit, llvm_system=system,
                 plugin_git={}, cwd=str(root.parent), cmake_dir="/tb/cmake", cache_root=str(root.parent / "cache"),
                 json_prefix="/usr", nvidia=nvidia or nvidia_facts(root, cuda_include, nvidia_tools))


def plan_for(root: Path, cli: dict | None = None, env: dict | None = None, **kw: object):
    env = env or {}
    s = resolve_settings(cli or {}, env)
    base = facts(root, **kw)  # type: ignore[arg-type]
    found = replace(base, plugin_files=read_all(s.plugin_dirs, root.parent),
                    **environment_facts(env, base.source))
    return resolve_plan(s, found)


def provenance_of_example(base: Path, commit: str = "0123456789abcdef0123456789abcdef01234567",
                          **cli: object) -> dict:
    """A real provenance (``attestation.make``) of a plan of the example tree with an external plugin, a bundled
    ptxas from NVIDIA's wheel and a patch dependency: every resolvedDependencies kind the writer makes (#44)."""
    import json as _json

    from tritonbuild import example
    from tritonbuild.wheel import attestation

    tree = example.write_tree(base / "triton")
    plugin = example.write_plugin(base / "shared", "shared")
    plan = plan_for(tree, cli={"plugin_dirs": [str(plugin)], **cli}, git=GitState(commit, False, "main", 1769723034))
    sha = "ab" * 32
    info = {"toolchain": {"compiler": "g++"},
            "bundled_tools": {"ptxas": {"path": "/usr/local/cuda/bin/ptxas", "sha256": sha,
                                        "wheel": "nvidia-cuda-nvcc==12.8.93", "wheel_sha256": sha}}}
    stmt = attestation.make(plan, "triton-3.6.0-cp311-cp311-linux_x86_64.whl", sha, info, finished=1769723100.0,
                            seconds=60.0)
    data: dict = _json.loads(attestation.to_json(stmt))
    data["predicate"]["buildDefinition"]["resolvedDependencies"] += [  # as dependencies() writes a patch
        {"name": "patch:1:fix.patch", "uri": "file:///p/fix.patch", "digest": {"sha256": sha},
         "annotations": {"files": ["a.py"]}},
        {"name": "patch:2:plugin.patch", "uri": "file:///p/plugin.patch", "digest": {"sha256": sha},  # NAME=FILE
         "annotations": {"files": ["backend/compiler.py"], "plugin": "shared"}}]
    return data


# Files of a wheel that compare sees as the same in two builds (a big one among them: compare lists big files).
WHEEL_FILES = {"triton/__init__.py": b"", "triton/backends/nvidia/compiler.py": b"",
               "triton/_C/big.bin": b"x" * (2 << 20)}


def wheel(path: Path, files: dict[str, bytes], *, version: str = "3.6.0", requires_python: str = ">=3.10",
          requires: tuple[str, ...] = (), eps: str = "[triton.backends]\nnvidia = triton.backends.nvidia\n") -> Path:
    """A well-formed wheel (its RECORD matches: compare checks that, #35) named as a wheel is, in a directory
    named after ``path``'s stem: the path it returns."""
    dist = f"triton-{version}.dist-info"
    meta = f"Metadata-Version: 2.4\nName: triton\nVersion: {version}\nRequires-Python: {requires_python}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    members = {**files, f"{dist}/METADATA": meta.encode(), f"{dist}/entry_points.txt": eps.encode()}
    record = "".join(f"{n},{digest(d)},{len(d)}\n" for n, d in members.items()) + f"{dist}/RECORD,,\n"
    path = path.parent / path.stem / f"triton-{version}-py3-none-any.whl"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(f"{dist}/RECORD", record)
    return path


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(root: Path) -> Iterator[str]:
    """Serve ``root`` over HTTP on 127.0.0.1 while the block runs: the URL of its ``simple/`` index."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# wheel-shaped zips for the tests of verify on hostile wheels
EPS = "[triton.backends]\nnvidia = triton.backends.nvidia\n"
DIST = "triton-3.6.0.dist-info"

# enough of Triton that `import triton; from triton.backends import backends` works in a fresh venv
BACKENDS_INIT = (b"from importlib.metadata import entry_points\n"
                 b"backends = {ep.name: ep.value for ep in entry_points(group='triton.backends')}\n")
PACKAGE = {"triton/__init__.py": b"", "triton/backends/__init__.py": BACKENDS_INIT,
           "triton/backends/nvidia/__init__.py": b"", "triton/backends/nvidia/compiler.py": b""}


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def minimal_sbom(files: dict[str, bytes]) -> bytes:
    """The least CycloneDX 1.6 SBOM verify's ``sbom`` check accepts for ``files``: each ELF one with its sha256."""
    elves = [{"type": "file", "name": n, "bom-ref": f"file:{n}",
              "hashes": [{"alg": "SHA-256", "content": hashlib.sha256(d).hexdigest()}]}
             for n, d in sorted(files.items()) if d[:4] == b"\x7fELF"]
    return json.dumps({"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1, "components": elves}).encode()


def make_wheel(path: Path, files: dict[str, bytes], *, eps: str | bytes = EPS, info: object = None,
               record: str | bytes | None = None, requires: tuple[str, ...] = ()) -> Path:
    """A wheel-shaped zip with a RECORD that matches (unless ``record`` is given) and, when ``info`` is not
    None, a ``triton/_build_info.json`` holding it (bytes as they are, anything else as JSON); ``requires``: its
    Requires-Dist lines."""
    meta = "Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    members = {**files, f"{DIST}/METADATA": meta.encode(),
               f"{DIST}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
               f"{DIST}/entry_points.txt": eps.encode() if isinstance(eps, str) else eps}
    if info is not None:
        members["triton/_build_info.json"] = info if isinstance(info, bytes) else json.dumps(info).encode()
        if not any("/sboms/" in n for n in files):  # a wheel with tritonbuild's build info carries its SBOM (#38)
            members[f"{DIST}/sboms/tritonbuild.cdx.json"] = minimal_sbom(files)
    if record is None:
        record = "".join(f"{n},{digest(d)},{len(d)}\n" for n, d in members.items()) + f"{DIST}/RECORD,,\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(f"{DIST}/RECORD", record)
    return path


# NVIDIA's tool wheels and a ptxas that says its version, for the tests of the tools from the package index
NVIDIA_TOOL_PROJECTS = {"cuobjdump": "nvidia-cuda-cuobjdump", "nvdisasm": "nvidia-cuda-nvdisasm"}


def tool_wheel(dest: Path, tool: str, version: str, extra: dict[str, zipfile.ZipInfo | None] | None = None) -> Path:
    """NVIDIA's wheel of ``tool`` as it is shaped: one file, nvidia/cu<major>/bin/<tool>, executable (a real ELF:
    /bin/true); ``extra`` members are written with a link target's bytes."""
    arch = platform.machine()
    project = NVIDIA_TOOL_PROJECTS[tool].replace("-", "_")
    path = dest / f"{project}-{version}-py3-none-manylinux2014_{arch}.manylinux_2_17_{arch}.whl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo(f"nvidia/cu{version.split('.')[0]}/bin/{tool}")
        info.external_attr = (stat.S_IFREG | 0o755) << 16
        zf.writestr(info, Path("/bin/true").read_bytes())
        for member in (extra or {}).values():
            if member is not None:
                zf.writestr(member, b"../../../../tmp/pwned")
        zf.writestr(f"{project}-{version}.dist-info/METADATA",
                    f"Name: {NVIDIA_TOOL_PROJECTS[tool]}\nVersion: {version}\n")
    return path


def fake_ptxas(dest: Path, version: str) -> Path:
    """A real ELF executable that answers --version as ptxas does (``Cuda compilation tools, ..., V13.0.88``)."""
    src = dest.with_suffix(".c")
    dest.parent.mkdir(parents=True, exist_ok=True)
    src.write_text('#include <stdio.h>\nint main(void) { puts("ptxas: NVIDIA (R) Ptx optimizing assembler\\n'
                   f'Cuda compilation tools, release {version.rsplit(".", 1)[0]}, V{version}"); return 0; }}\n')
    subprocess.run(["gcc", "-o", str(dest), str(src)], check=True)
    return dest


# --- generated patches (#44) ----------------------------------------------------------------------------------------

def lands_inside(rel: str) -> bool:
    """``rel`` joined to a root stays under it, names no .git and no parent."""
    root = "/copy/tree"
    full = posixpath.normpath(posixpath.join(root, rel))
    return (full.startswith(root + "/") and ".." not in rel.split("/")
            and ".git" not in [p.lower() for p in rel.split("/")])


def fine(rel: str) -> bool:
    """``rel`` (relative to the top) is a name tritonbuild must accept: inside, no .git, no control character,
    no empty component, short."""
    return (lands_inside(rel) and all(p not in ("", ".") for p in rel.split("/")) and len(rel) < 200
            and not control(rel))


def control(text: str) -> bool:
    return any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)


SAFE_PARTS = ["a", "src", "x.h", "my file", "caf\u00e9", "b", "q\"t", "back\\slash", "-", "1"]
HOSTILE_PARTS = ["..", ".", ".git", ".GIT", "", "\x01", "\x7f"]
MODES = [0o100644, 0o100755, 0o120000, 0o120777, 0o160000, 0o040000, 0o100664, 0o644, 0o1100644]
SPELLINGS = ["{o}", "0{o}", "00{o}", " {o}", "  {o}", "\t{o}", "+{o}", "{o} junk", "{o}\r", "{o}x", "x{o}", ""]
KINDS = ["mode", "new", "deleted", "index", "rename", "copy", "binary"]


@st.composite
def patch_names(draw: st.DrawFn, hostile: bool = True) -> str:
    """A path relative to the top of the source: safe parts, at times (``hostile``) a hostile one or absolute."""
    parts = draw(st.lists(st.sampled_from(SAFE_PARTS) | st.sampled_from(HOSTILE_PARTS), min_size=1, max_size=4)
                 if hostile and draw(st.booleans()) else st.lists(st.sampled_from(SAFE_PARTS), min_size=1, max_size=4))
    return ("/" if hostile and draw(st.integers(0, 9)) == 0 else "") + "/".join(parts)


def quote(name: str, octal: set[int]) -> str:
    """``name`` C-quoted as git writes it, the characters at ``octal`` (and every byte that needs it) as \\ooo."""
    out = []
    for i, ch in enumerate(name):
        if ch in '"\\':
            out.append("\\" + ch)
        elif i in octal or ord(ch) < 0x20 or ord(ch) >= 0x7F:
            out.append("".join(f"\\{b:03o}" for b in ch.encode()))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@st.composite
def patch_headers(draw: st.DrawFn, hostile: bool = True) -> tuple[str, set[str], bool]:
    """A generated patch (one file's header and maybe a hunk), the paths it touches, and whether tritonbuild
    must accept it (every path fine, every mode a regular file's, spelled as git reads it, no binary diff);
    without ``hostile``, its paths are all fine."""
    kind = draw(st.sampled_from(KINDS))
    old = draw(patch_names(hostile))
    new = draw(patch_names(hostile)) if kind in ("rename", "copy") else old
    modes = [draw(st.sampled_from(MODES)) for _ in range(2)]
    spells = [draw(st.sampled_from(SPELLINGS)) for _ in range(2)]

    quoted: list[str] = []

    def shown(name: str, side: str) -> str:
        plain = not any(c in name for c in '"\\') and not control(name) and not name.startswith('"')
        if side == "b" and kind == "mode" and quoted == ["a"]:  # git reads no name from "a/x" b/x
            plain = False
        full = f"{side}/{name}" if side else name  # rename and copy names have no a/ or b/
        if plain and draw(st.booleans()):
            return full
        quoted.append(side)
        return quote(full, set(draw(st.lists(st.integers(0, len(full)), max_size=4))))

    def mode(n: int) -> str:
        return spells[n].format(o=f"{modes[n]:o}")

    lines = [f"diff --git {shown(old, 'a')} {shown(new, 'b')}"]
    used = {"mode": [0, 1], "new": [0], "deleted": [0], "index": [0]}.get(kind, [])
    hunk = [f"--- {shown(old, 'a')}", f"+++ {shown(new, 'b')}", "@@ -1 +1 @@", "-a", "+b"]
    if kind == "mode":
        lines += [f"old mode {mode(0)}", f"new mode {mode(1)}"]
    elif kind == "new":
        lines += [f"new file mode {mode(0)}", "--- /dev/null", f"+++ {shown(new, 'b')}", "@@ -0,0 +1 @@", "+x"]
    elif kind == "deleted":
        lines += [f"deleted file mode {mode(0)}", f"--- {shown(old, 'a')}", "+++ /dev/null", "@@ -1 +0,0 @@", "-x"]
    elif kind == "index":
        lines += [f"index 1234567..89abcde {mode(0)}", *hunk]
    elif kind in ("rename", "copy"):
        lines += ["similarity index 90%", f"{kind} from {shown(old, '')}", f"{kind} to {shown(new, '')}", *hunk]
    else:
        lines += ["index 1234567..89abcde 100644", "GIT binary patch", "literal 0", "HcmV?d00001", ""]
    paths_ok = all(fine(n) and not n.startswith("/") for n in {old, new})
    regular = all(modes[n] in patches.REGULAR_MODES and spells[n] not in ("{o}x", "x{o}", "") for n in used)
    return "\n".join(lines) + "\n", {old, new}, paths_ok and regular and kind != "binary"


# --- hostile archives for the one extractor's tests (issue 44) ------------------------------------------------

def sound(root: Path) -> list[str]:
    """What in ``root`` breaks the extractor's promises: a special mode bit, group or world write, another owner,
    an entry that is no file, dir or link, a link that resolves outside."""
    bad = []
    base = Path(os.path.realpath(root))
    for path in [root, *root.rglob("*")]:
        st_ = path.lstat()
        if stat.S_ISLNK(st_.st_mode):
            if not Path(os.path.realpath(path)).is_relative_to(base):
                bad.append(f"{path} leads outside")
            continue
        if not (stat.S_ISREG(st_.st_mode) or stat.S_ISDIR(st_.st_mode)):
            bad.append(f"{path} is special")
        if st_.st_mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | 0o022):
            bad.append(f"{path} has mode {oct(st_.st_mode)}")
        if st_.st_uid != os.geteuid() or st_.st_gid != os.getegid():
            bad.append(f"{path} is owned by {st_.st_uid}:{st_.st_gid}")
    return bad


def many_empty_members(n: int) -> bytes:
    """A plain tar of ``n`` empty members, written header by header (fast: no tarfile per member)."""
    template = bytearray(tarfile.TarInfo("m0000000").tobuf(tarfile.USTAR_FORMAT))
    blocks = []
    for k in range(n):
        block = bytearray(template)
        block[0:8] = b"m%07d" % k
        block[148:156] = b" " * 8
        block[148:156] = b"%06o\0 " % sum(block)
        blocks.append(bytes(block))
    return b"".join(blocks) + b"\0" * 1024


def claims(members: int, cd_size: int = 46) -> bytes:
    """A tiny file whose zip64 end record claims ``members`` members in a ``cd_size``-byte central directory."""
    eocd64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, members, members, cd_size, 0)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, cd_size, 1)
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return b"\0" * cd_size + eocd64 + locator + eocd


def deflated_zeros(n_mib: int) -> tuple[bytes, int]:
    """A raw deflate stream of ``n_mib`` MiB of zeros (each MiB flushed whole, so one MiB's bytes repeat: a GiB is
    made in milliseconds) and its CRC-32."""
    mib = bytes(1 << 20)
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = first.compress(mib) + first.flush(zlib.Z_FULL_FLUSH)
    again = first.compress(mib) + first.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(n_mib):
        crc = zlib.crc32(mib, crc)
    return head + again * (n_mib - 1) + first.flush(zlib.Z_FINISH), crc


def hand_zip(path: Path, members: list[tuple[str, bytes, int, int, int]]) -> Path:
    """A zip written by hand: each member ``(name, its raw deflate stream, CRC-32, uncompressed size, mode)``."""
    files, cd = b"", b""
    for name, data, crc, size, mode in members:
        raw = name.encode()
        cd += struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, 0, 8, 0, 0, crc, len(data), size,
                          len(raw), 0, 0, 0, 0, (stat.S_IFREG | mode) << 16, len(files)) + raw
        files += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), size, len(raw), 0) + raw
        files += data
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(cd), len(files), 0)
    path.write_bytes(files + cd + eocd)
    return path


def deflated(data: bytes) -> tuple[bytes, int, int]:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(), zlib.crc32(data), len(data)


def schema_path(command: str | None) -> Path:
    """Where the shipped JSON Schema (draft 2020-12) of ``command``'s output is (``tritonbuild/schemas/``, named by
    ``jsonout.COMMANDS``); None: the error envelope's."""
    from tritonbuild import jsonout

    name = jsonout.COMMANDS[command] if command is not None else "error"
    return Path(jsonout.__file__).parent / "schemas" / f"{name}.schema.json"


def json_out(stdout: str, returncode: int | None = None) -> dict:
    """The one object a ``--json`` run printed, valid against the shipped schema of its command (or the error
    envelope's when it failed), its ``exit`` the process's exit code when given."""
    import jsonschema

    from tritonbuild import jsonout

    data = json.loads(stdout)
    assert isinstance(data, dict) and data.get("schema") == jsonout.SCHEMA, stdout[:500]
    path = schema_path(None if "error" in data else data["command"])
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(data)
    if returncode is not None:
        assert data["exit"] == returncode, (data["exit"], returncode)
    return data


def one_of(stdout: str, key: str) -> dict:
    """The one element of the list ``key`` of a ``--json`` run's object (``plans``, ``wheels``, ``pairs``)."""
    [item] = json_out(stdout)[key]
    return item


def shared_ccache() -> str:
    """One ccache for the tests that only need a wheel (not a cold or counted compiler cache): the example tree
    compiles once per set of flags in a run instead of once per test. It lives under the run's TMPDIR (CI makes a
    fresh one), or where TRITONBUILD_TEST_CCACHE says; tests that count hits and misses keep their own."""
    import tempfile

    return os.environ.get("TRITONBUILD_TEST_CCACHE") or os.path.join(tempfile.gettempdir(), "tritonbuild-test-ccache")


# The environment of a test that needs a wheel and is about something else: the shared compiler cache, and no canary
# (its -fsyntax-only compiles are the most of a warm build: 12.9 s of 22.6 s; ccache cannot keep them). The canary's
# own tests (test_canary*.py, test_checkllvm_canary_off.py, test_llvm_compat.py) and the builds of test_build.py,
# test_provenance.py, test_fleet.py and test_plain_install.py keep it as the default has it (the nightly and Redis
# pairs build with NO_CANARY: they compare wheels and count cache hits).
NO_CANARY = {"TRITONBUILD_CANARY": "off"}  # a test about the wheel, with its own compiler cache
WHEEL_ONLY = {"CCACHE_DIR": shared_ccache(), **NO_CANARY}


class PlainReporter:
    """A ``Reporter`` writing ``topic: text`` lines to a stream, no colours and no bars (progress as log lines):
    for tests."""

    def __init__(self, stream: IO[str] | None = None, verbosity: int = 0) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self._verbosity = clamp(verbosity)

    @property
    def verbosity(self) -> int:
        return self._verbosity

    def _write(self, text: str, kind: Kind = "plain") -> None:
        if shows(kind, self._verbosity):
            self.stream.write(text + "\n")
            self.stream.flush()

    def note(self, text: str, topic: str = "note") -> None:
        self._write(f"{topic}: {text}", "note")

    def warn(self, text: str, topic: str = "warning") -> None:
        self._write(f"{topic}: {text}", "warn")

    def step(self, text: str) -> None:
        self._write(text, "step")

    def plain(self, text: str) -> None:
        self._write(text)

    def result(self, text: str) -> None:
        self._write(text, "result")

    def detail(self, text: str, kind: Literal["command", "output"] = "command") -> None:
        self._write(text, kind)

    def progress(self, label: str, *, transfer: bool = False) -> AbstractContextManager[ProgressBar]:
        return log_progress(lambda line: self._write(line, "progress"), label, transfer=transfer)


def running(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    found = []
    for p in Path("/proc").iterdir():
        try:
            cmd = (p / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (p / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, ValueError, IndexError):
            continue
        if marker in cmd and state != "Z" and "pytest" not in cmd:
            found.append(int(p.name))
    return found
