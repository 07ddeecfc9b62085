"""Issue #35, paths confined to their roots: what a plugin dir, a source tree, an archive or the environment names
never leads tritonbuild outside the directory it belongs to. Each hostile input ends in exit code 2, one
paragraph on stderr, no traceback, and nothing written outside the test's own directories."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from tests.integration.conftest import LLVM, flat, run_cli
from tests.integration.llvm_fixtures import Server, make_archive, prefix_files
from tritonbuild import example
from tritonbuild.wheel import writer

H = "2eb709b95d8f521aa15401e159fac0729d56a677"
TOP = "llvm-2eb709b9-ubuntu-x64-1"
ENV = {"TRITONBUILD_HTTP_TIMEOUT": "2", "TRITONBUILD_HTTP_RETRIES": "1"}


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every entry under ``root`` (not following links): a file's size and mtime, a link's target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            is_dir = p.is_dir() and not p.is_symlink()  # a dir's size and mtime change with what comes and goes
            out[str(p.relative_to(root))] = (0 if is_dir else st.st_size, 0 if is_dir else st.st_mtime_ns,
                                             os.readlink(p) if p.is_symlink() else "")
    return out


def one_paragraph_exit_2(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    paragraphs = [p for p in proc.stderr.strip().split("\n\n") if p.strip()]
    assert len(paragraphs) == 1, proc.stderr
    err = flat(proc.stderr)
    for needle in needles:
        assert needle in err, err
    return err


def g3_tree(tmp_path: Path, data: bytes, suffix: str = "ubuntu-x64") -> Path:
    root = example.write_tree(tmp_path / "triton", generation="G3")
    sums = {suffix: hashlib.sha256(data).hexdigest()}
    (root / "cmake" / "llvm-info.json").write_text(json.dumps({"llvm_hash": H, "build_number": 1, "sha256sum": sums}))
    return root


# --- 1. TRITON_LLVM_SYSTEM_SUFFIX ------------------------------------------------------------------------------

def test_a_suffix_with_dotdot_is_refused_at_plan_time_and_nothing_leaves_the_cache(tmp_path: Path) -> None:
    evil = "x/../../../escaped"
    cache = tmp_path / "a" / "b" / "cache"  # cache/llvm/../../../escaped lands in tmp_path: visible if it escapes
    name = f"llvm-{H[:8]}-{evil}-1.tar.gz"
    data = make_archive(f"llvm-{H[:8]}-escaped-1")
    tree = g3_tree(tmp_path, data, suffix=evil)
    before = snapshot(tmp_path)
    with Server({name: data, Path(name).name: data}) as srv:
        proc = run_cli("llvm", "fetch", "--source", str(tree), "--llvm-mirror", f"{srv.url}/good", "--cache-dir",
                       str(cache), cwd=tmp_path, env={**ENV, "TRITON_LLVM_SYSTEM_SUFFIX": evil}, check=False)
        hits = sum(srv.hits.values())
    one_paragraph_exit_2(proc, "TRITON_LLVM_SYSTEM_SUFFIX='x/../../../escaped' is not a platform suffix")
    assert hits == 0  # refused before any download
    after = snapshot(tmp_path)
    assert {k for k in after if not k.startswith("a/b/cache")} == set(before)
    assert not [k for k in after if "escaped" in k]
    # a plain name is still accepted (the same fetch with ubuntu-x64 works)
    good = make_archive(TOP)
    tree2 = g3_tree(tmp_path / "ok", good)
    with Server({f"{TOP}.tar.gz": good}) as srv:
        ok = run_cli("llvm", "fetch", "--source", str(tree2), "--llvm-mirror", f"{srv.url}/good", "--cache-dir",
                     str(cache), cwd=tmp_path, env={**ENV, "TRITON_LLVM_SYSTEM_SUFFIX": "ubuntu-x64"})
    assert Path(ok.stdout.strip()) == cache / "llvm" / TOP


def test_the_download_itself_refuses_a_suffix_that_leaves_the_cache(tmp_path: Path) -> None:
    """Defence in depth: a request built around the plan's check still cannot name a path outside the cache."""
    from tests.helpers import PlainReporter
    from tritonbuild.errors import UserError
    from tritonbuild.llvm import download
    from tritonbuild.resolve.llvm_requirement import LLVMRequest

    data = make_archive(TOP)
    with Server({f"llvm-{H[:8]}-x/../../../escaped-1.tar.gz": data}) as srv:
        req = LLVMRequest(llvm_hash=H, build_number=1, sha256={}, suffix="x/../../../escaped", targets=("X86",),
                          cache_root=tmp_path / "a" / "b" / "cache", mirror=f"{srv.url}/good", allow_unpinned=True)
        with pytest.raises(UserError, match="not a platform suffix"):
            download.provide(req, PlainReporter(io.StringIO()))
        assert sum(srv.hits.values()) == 0
    assert not [p for p in tmp_path.rglob("*") if "escaped" in p.name]


# --- 2. archives ----------------------------------------------------------------------------------------------

def _tar(entries: list[tarfile.TarInfo]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, (data, mode) in prefix_files().items():
            info = tarfile.TarInfo(f"{TOP}/{rel}")
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        for info in entries:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isreg() else None)
    return buf.getvalue()


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def _file(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = 1
    return info


HOSTILE_TARS = {
    # a link that stays inside, then a second link through it that climbs out
    "link-chain": [_link(f"{TOP}/lib/up", ".."), _link(f"{TOP}/lib/out", "up/../../../outside")],
    "absolute-symlink": [_link(f"{TOP}/lib/passwd", "/etc/passwd")],
    "hardlink-absolute": [_link(f"{TOP}/lib/hard", "/etc/passwd", tarfile.LNKTYPE)],
    "fifo": [tarfile.TarInfo(f"{TOP}/bin/fifo")],
    "dotdot-file": [_file(f"{TOP}/bin/../../../../escaped.txt")],
}
HOSTILE_TARS["fifo"][0].type = tarfile.FIFOTYPE


@pytest.mark.parametrize("kind", [*HOSTILE_TARS, "corrupt"])
def test_a_hostile_or_corrupt_llvm_archive_leaves_the_cache_as_it_was(tmp_path: Path, kind: str) -> None:
    data = b"\x1f\x8b not a gzip stream at all" * 50 if kind == "corrupt" else _tar(HOSTILE_TARS[kind])
    tree = g3_tree(tmp_path, data)
    cache = tmp_path / "deep" / "cache"
    (cache / "llvm" / "other-entry").mkdir(parents=True)
    (cache / "llvm" / "other-entry" / "keep.txt").write_text("kept\n")
    before = snapshot(cache)
    with Server({f"{TOP}.tar.gz": data}) as srv:
        proc = run_cli("llvm", "fetch", "--source", str(tree), "--llvm-mirror", f"{srv.url}/good", "--cache-dir",
                       str(cache), cwd=tmp_path, env={**ENV, "TRITON_LLVM_SYSTEM_SUFFIX": "ubuntu-x64"}, check=False)
    err = one_paragraph_exit_2(proc, "nothing was installed")
    assert ("corrupt" in err) if kind == "corrupt" else ("Refusing to extract" in err)
    after = snapshot(cache)
    # the entry was never published: in the LLVM cache only locks and the empty downloads dir may have appeared
    assert {k: v for k, v in after.items() if k in before} == before
    new = [k for k in after if k not in before and k.startswith("llvm/")]
    assert not [k for k in new if ".lock" not in k and not k.endswith(".downloads")], new
    assert not [p for p in tmp_path.rglob("*") if p.name in ("escaped.txt", "outside")]


def _nvidia_index(root: Path, members: dict[str, tuple[bytes, int]]) -> str:
    """A PEP 503 index with one nvidia-cuda-runtime wheel holding ``members`` (name -> (data, unix mode))."""
    import platform

    arch = platform.machine()
    name = f"nvidia_cuda_runtime-13.1.80-py3-none-manylinux2014_{arch}.whl"
    wheel = root / "files" / name
    wheel.parent.mkdir(parents=True)
    with zipfile.ZipFile(wheel, "w") as zf:
        for member, (data, mode) in members.items():
            info = zipfile.ZipInfo(member)
            info.external_attr = mode << 16
            zf.writestr(info, data)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    page = root / "simple" / "nvidia-cuda-runtime" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<a href="../../files/{name}#sha256={digest}">{name}</a>\n')
    return arch


HOSTILE_ZIPS = {
    "dotdot": {"nvidia/../../../escaped.txt": (b"x", 0o100644)},
    "absolute": {"/tmp/tritonbuild-zip-escape.txt": (b"x", 0o100644)},
    "symlink": {"nvidia/cu13/include/passwd": (b"/etc/passwd", 0o120777)},
    "device": {"nvidia/cu13/include/null": (b"", 0o020666)},
}


@pytest.mark.parametrize("kind", HOSTILE_ZIPS)
def test_a_hostile_nvidia_wheel_is_refused_whole(tmp_path: Path, kind: str) -> None:
    from tests.helpers import serve
    from tritonbuild.errors import UserError
    from tritonbuild.nvidia import pypi
    from tritonbuild.resolve.nvidia_parts import pypi_wheel

    # a wheel true to its name (its METADATA), so what refuses it is the hostile member, not the name check
    metadata = b"Metadata-Version: 2.1\nName: nvidia-cuda-runtime\nVersion: 13.1.80\n"
    members = {"nvidia/cu13/include/cuda.h": (b"#pragma once\n", 0o100644),
               "nvidia_cuda_runtime-13.1.80.dist-info/METADATA": (metadata, 0o100644), **HOSTILE_ZIPS[kind]}
    arch = _nvidia_index(tmp_path / "index", members)
    ref = pypi_wheel("cudart", "13.1.80")
    assert ref is not None
    cache = tmp_path / "deep" / "cache"
    with serve(tmp_path / "index") as url, pytest.raises(UserError, match="Refusing to unpack") as err:
        pypi.provide(ref, cache, index=url, machine=arch, offline=False, log=lambda m: None)
    assert list(members)[-1] in str(err.value) and "\n\n" not in str(err.value)
    assert not (cache / "nvidia" / "nvidia-cuda-runtime-13.1.80").exists()
    assert [p.name for p in (cache / "nvidia").iterdir() if not p.name.endswith(".lock")] == [".downloads"]
    assert not any((cache / "nvidia" / ".downloads").iterdir())
    assert not [p for p in tmp_path.rglob("*") if p.name in ("escaped.txt", "passwd", "null")]
    assert not Path("/tmp/tritonbuild-zip-escape.txt").exists()


def test_a_tree_pinning_an_nvidia_version_with_a_path_cannot_leave_the_cache(tmp_path: Path) -> None:
    from tritonbuild.errors import UserError
    from tritonbuild.nvidia import pypi
    from tritonbuild.resolve.nvidia_parts import WheelRef

    ref = WheelRef("nvidia-cuda-runtime", "1/../../../../escaped", "cu13")
    with pytest.raises(UserError, match="would lead outside"):
        pypi.provide(ref, tmp_path / "deep" / "cache", index="http://127.0.0.1:9/simple", machine="x86_64",
                     offline=False, log=lambda m: None)
    assert not [p for p in tmp_path.rglob("*") if "escaped" in p.name]


# --- 3. symlinks out of plugins and the source ----------------------------------------------------------------

@pytest.fixture
def work(tmp_path: Path) -> dict[str, Path]:
    tree = example.write_tree(tmp_path / "triton")
    plug = example.write_plugin(tmp_path / "triton-shared", "triton_shared")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside content\n")
    return {"tree": tree, "plugin": plug, "outside": outside, "tmp": tmp_path}


def plan(work: dict[str, Path], *extra: str, plugin: bool = True) -> subprocess.CompletedProcess[str]:
    args = ["plan", "--source", str(work["tree"]), "--llvm", str(LLVM), "--offline", "--cache-dir",
            str(work["tmp"] / "cache")]
    return run_cli(*args, *(["--plugin-dir", str(work["plugin"])] if plugin else []), *extra, cwd=work["tmp"],
                   check=False)


@pytest.mark.parametrize("where", ["backend/leak.txt", "backend/sub/leak.py", "language/triton_shared/leak.py"])
def test_a_plugin_symlink_leaving_the_plugin_is_refused_at_plan_time(work: dict[str, Path], where: str) -> None:
    link = work["plugin"] / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(work["outside"] / "secret.txt")
    one_paragraph_exit_2(plan(work), str(link), "points outside", "replace it with a copy")


def test_plugin_links_that_dangle_loop_are_absolute_or_leave_backend_are_refused(work: dict[str, Path]) -> None:
    backend = work["plugin"] / "backend"
    (backend / "sub").mkdir()
    (backend / "alias.py").symlink_to("compiler.py")  # relative and inside backend/: fine
    (backend / "sub" / "up.py").symlink_to("../driver.py")
    (backend / "more").symlink_to("sub")
    proc = plan(work)
    assert proc.returncode == 0, proc.stderr
    (backend / "lib").symlink_to("../lib")  # inside the plugin, but the wheel's copy of backend/ would lose it
    one_paragraph_exit_2(plan(work), f"points outside {backend}, to {work['plugin'] / 'lib'}")
    (backend / "lib").unlink()
    (backend / "abs.py").symlink_to(backend / "compiler.py")  # the wheel's copy would point into this checkout
    one_paragraph_exit_2(plan(work), "abs.py is an absolute link")
    (backend / "abs.py").unlink()
    (backend / "gone.py").symlink_to(work["outside"] / "gone.py")
    one_paragraph_exit_2(plan(work), "gone.py dangles")
    (backend / "gone.py").unlink()
    (backend / "a").symlink_to("b")
    (backend / "b").symlink_to("a")
    one_paragraph_exit_2(plan(work), "is a symlink loop")


@pytest.mark.parametrize("where", ["third_party/nvidia/backend/leak.txt", "third_party/amd/language/hip/leak.py",
                                   "python/triton/leak.py", "python/triton/runtime/leak.txt"])
def test_a_source_symlink_leaving_the_tree_in_what_is_packaged_is_refused(work: dict[str, Path], where: str) -> None:
    link = work["tree"] / where
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(work["outside"] / "secret.txt")
    one_paragraph_exit_2(plan(work, plugin=False), str(link), "points outside", "replace it with a copy")


def test_links_develop_and_setup_py_place_in_the_package_are_not_refused(work: dict[str, Path]) -> None:
    """python/triton/_C/*.so, backends/<name> and a language extra are links setup.py and `tritonbuild develop`
    make (to the build dir, to a plugin); the injected CMake leaves them out of the wheel."""
    py = work["tree"] / "python" / "triton"
    (py / "_C").mkdir(exist_ok=True)
    (py / "_C" / "libtriton.so").symlink_to(work["outside"] / "secret.txt")
    (py / "_C" / "libsleef.so.3").symlink_to(work["outside"] / "secret.txt")  # develop links versioned ones too
    (py / "backends").mkdir(exist_ok=True)
    (py / "backends" / "triton_shared").symlink_to(work["plugin"] / "backend")
    proc = plan(work)
    assert proc.returncode == 0, proc.stderr


def test_the_wheel_writer_refuses_a_file_reached_through_an_outside_link(tmp_path: Path) -> None:
    """A real scikit-build-core build run by tritonbuild's runner: CMake installs a symlink to a file outside the
    staged tree (what a plugin's backend/leak.txt becomes): exit 2, the link named, no wheel written."""
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (tmp_path / "secret.txt").write_text("outside content\n")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(leaky LANGUAGES NONE)\n"
        'install(DIRECTORY "${CMAKE_SOURCE_DIR}/pkg/" DESTINATION pkg)\n')
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["scikit-build-core"]\nbuild-backend = "scikit_build_core.build"\n'
        '[project]\nname = "leaky"\nversion = "1.0"\n[tool.scikit-build]\nwheel.packages = []\n'
        'build-dir = "build"\n')
    out = tmp_path / "wheels"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    proc = subprocess.run([sys.executable, "-c", writer.SKBUILD_RUNNER, str(out), "1"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "refusing to write the wheel" in proc.stderr and "pkg/leak.txt" in proc.stderr, proc.stderr
    assert not list(out.glob("*.whl"))  # not even the half-written one
    # the same project with a copy instead of the link builds, and the wheel holds the copy
    (project / "pkg" / "leak.txt").unlink()
    (project / "pkg" / "leak.txt").write_text("a copy\n")
    proc = subprocess.run([sys.executable, "-c", writer.SKBUILD_RUNNER, str(out), "1"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        assert zf.read("pkg/leak.txt") == b"a copy\n"


# --- 4. the plugin's own shape and name.conf ------------------------------------------------------------------

@pytest.mark.parametrize("content,needle", [
    (b"\xff\xfeshared\n", "is not UTF-8 text"),
    (b"a" * 5000 + b"\n", "larger than 1024 bytes"),
    (b"b" * 100 + b"\n", "100 characters long"),
    (b"one\ntwo\n", "holds 2 lines"),
    (b"sha\x00red\n", "NUL bytes"),
])
def test_a_bad_name_conf_is_one_paragraph(work: dict[str, Path], content: bytes, needle: str) -> None:
    (work["plugin"] / "backend" / "name.conf").write_bytes(content)
    one_paragraph_exit_2(plan(work), "name.conf", needle)


def test_bad_plugin_dir_shapes_are_one_paragraph(work: dict[str, Path]) -> None:
    tmp, plug = work["tmp"], work["plugin"]
    loop = tmp / "loop"
    loop.symlink_to(tmp / "loop2")
    (tmp / "loop2").symlink_to(loop)
    a_file = tmp / "a-file"
    a_file.write_text("not a dir\n")
    for path, needle in ((loop, "is a symlink loop"), (a_file, "is a file, not a directory")):
        proc = run_cli("plan", "--source", str(work["tree"]), "--llvm", str(LLVM), "--offline", "--cache-dir",
                       str(tmp / "cache"), "--plugin-dir", str(path), cwd=tmp, check=False)
        one_paragraph_exit_2(proc, needle)
    backend = plug / "backend"
    backend.rename(tmp / "moved-backend")
    backend.write_text("a file\n")
    one_paragraph_exit_2(plan(work), "has a backend that is a file, not a directory")
    backend.unlink()
    backend.symlink_to(tmp / "nowhere")
    one_paragraph_exit_2(plan(work), "dangling symlink or a symlink loop")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any directory: no permission error to report")
def test_an_unreadable_plugin_dir_is_one_paragraph(work: dict[str, Path]) -> None:
    work["plugin"].chmod(0)
    try:
        one_paragraph_exit_2(plan(work), "cannot be read")
    finally:
        work["plugin"].chmod(0o755)


def test_a_plugin_llvm_target_that_is_a_path_is_refused(work: dict[str, Path]) -> None:
    (work["plugin"] / "backend" / "llvm-targets.txt").write_text("NVPTX\n../../../escaped\n")
    one_paragraph_exit_2(plan(work), "'../../../escaped', which is not an LLVM target name")


# --- 5. source files the plan parses --------------------------------------------------------------------------

@pytest.mark.parametrize("rel,make,needle", [
    ("setup.py", lambda p, o: p.write_bytes(b"# \xff\xfe\n"), "is not UTF-8 text"),
    ("CMakeLists.txt", lambda p, o: p.write_bytes(p.read_bytes() + b"#" * (9 << 20)), "is larger than"),
    ("cmake/llvm-hash.txt", lambda p, o: (p.unlink(), p.mkdir()), "is not a regular file but a directory"),
    ("python/src/main.cc", lambda p, o: (p.unlink(), p.symlink_to(o / "secret.txt")), "outside"),
    ("cmake/llvm-hash.txt", lambda p, o: (p.unlink(), p.symlink_to(p)), "is a symlink loop"),
    ("pyproject.toml", lambda p, o: p.write_bytes(b"[build-system]\nrequires = ['\xc3']\n"), "is not UTF-8 text"),
])
def test_bad_source_files_are_one_paragraph(work: dict[str, Path], rel: str, make, needle: str) -> None:
    path = work["tree"] / rel
    make(path, work["outside"])
    one_paragraph_exit_2(plan(work, plugin=False), rel.split("/")[-1], needle)


def test_build_with_a_leaking_plugin_stops_before_any_build_work(work: dict[str, Path]) -> None:
    (work["plugin"] / "backend" / "leak.txt").symlink_to(work["outside"] / "secret.txt")
    dist, cache = work["tmp"] / "dist", work["tmp"] / "cache"
    proc = run_cli("build", "--source", str(work["tree"]), "--plugin-dir", str(work["plugin"]), "--llvm", str(LLVM),
                   "--offline", "--cache-dir", str(cache), "--out", str(dist), cwd=work["tmp"], check=False)
    one_paragraph_exit_2(proc, "leak.txt points outside")
    assert not dist.exists() or not any(dist.iterdir())
    assert not list(cache.rglob("CMakeCache.txt")) and not list(cache.rglob("build.ninja"))


# --- 6. what the wheel cannot carry: fifos, odd names, links back into their dir (#35 findings 1, 2, 7, 9, 10) --

ODD = os.fsdecode(b"\xff.py")  # a name that is not UTF-8


@pytest.mark.parametrize("where", ["plugin:backend/pipe", "tree:python/triton/pipe",
                                   "tree:third_party/nvidia/backend/pipe", "plugin:language/triton_shared/sub/pipe"])
def test_a_fifo_in_what_is_packaged_is_refused_at_plan_time(work: dict[str, Path], where: str) -> None:
    """A fifo would block CMake's install forever: plan refuses it (exit 2, quickly), naming it."""
    base, rel = where.split(":")
    fifo = work[base] / rel
    fifo.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(fifo)
    start = time.monotonic()
    proc = plan(work, plugin=base == "plugin")
    one_paragraph_exit_2(proc, f"{fifo} is a fifo, not a regular file", "block")
    assert time.monotonic() - start < 60


@pytest.mark.parametrize("where", ["plugin:backend", "tree:python/triton", "tree:third_party/nvidia/backend",
                                   "tree:python/triton/runtime"])
@pytest.mark.parametrize("name,needle", [(ODD, "has a name that is not UTF-8"),
                                         ("a\nb.py", "has a name with a control character")])
def test_a_packaged_name_that_is_not_utf8_or_holds_a_newline_is_refused(work: dict[str, Path], where: str,
                                                                        name: str, needle: str) -> None:
    base, rel = where.split(":")
    (work[base] / rel / name).write_text("x = 1\n")
    shown = repr(os.fsencode(work[base] / rel / name).decode("utf-8", "backslashreplace"))
    err = one_paragraph_exit_2(plan(work, plugin=base == "plugin"), needle)
    assert shown in err or shown.replace("\\\\", "\\") in err, err  # the name escaped, on one line


def test_backends_check_refuses_an_odd_name_and_survives_one_outside_the_package(work: dict[str, Path]) -> None:
    tree, tmp = work["tree"], work["tmp"]
    (tree / "python" / "src" / os.fsdecode(b"\xfe.cc")).write_text("// not packaged: read, never refused\n")
    (work["plugin"] / "backend" / ODD).write_text("x = 1\n")
    check = ["backends", "--source", str(tree), "--check", "--cache-dir", str(tmp / "cache")]
    one_paragraph_exit_2(run_cli(*check, "--plugin-dir", str(work["plugin"]), cwd=tmp, check=False),
                         "has a name that is not UTF-8")
    for _ in range(2):  # the second run reads the check's cache, whose key holds the odd name
        proc = run_cli(*check, cwd=tmp, check=False)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        proc = plan(work, plugin=False)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("rel,target", [("language/triton_shared/loop", "."), ("backend/sub/up", ".."),
                                        ("backend/sub/deeper/top", "../..")])
def test_a_link_back_into_a_dir_it_lies_in_is_a_loop(work: dict[str, Path], rel: str, target: str) -> None:
    link = work["plugin"] / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    (link.parent / "keep.py").write_text("x = 1\n")
    assert plan(work).returncode == 0
    link.symlink_to(target)
    one_paragraph_exit_2(plan(work), f"{link} is a symlink loop (-> {target}")
