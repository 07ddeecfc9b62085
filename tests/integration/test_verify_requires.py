"""verify's import test and a wheel with Requires-Dist (#47: Intel's XPU wheel needs pyelftools): the wheel is
installed alone unless ``--wheelhouse DIR`` gives the wheels of what it requires (no index, wheels only); an import
that fails for want of them says which and how to give them."""

from __future__ import annotations

import http.server
import threading
import zipfile
from pathlib import Path

from tests.helpers import PACKAGE, digest, make_wheel
from tests.integration.conftest import flat, subdir, verify

NAME = "triton-3.6.0-py3-none-any.whl"


def _dep_wheel(house: Path) -> Path:
    """tbdep 1.0, a pure wheel with one module."""
    dist = "tbdep-1.0.dist-info"
    members = {"tbdep/__init__.py": b"VALUE = 7\n",
               f"{dist}/METADATA": b"Metadata-Version: 2.1\nName: tbdep\nVersion: 1.0\n",
               f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{n},{digest(d)},{len(d)}\n" for n, d in members.items()) + f"{dist}/RECORD,,\n"
    house.mkdir(exist_ok=True)
    path = house / "tbdep-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.writestr(f"{dist}/RECORD", record)
    return path


def test_requires_dist_comes_from_the_wheelhouse_or_the_failure_says_how(tmp_path: Path) -> None:
    files = {**PACKAGE, "triton/__init__.py": b"import tbdep\n"}
    wheel = make_wheel(tmp_path / NAME, files, requires=("tbdep>=1", "tbwin; sys_platform == 'win32'",
                                                         "tbextra; extra == 'tests'"))
    alone = flat(verify(str(wheel), cwd=tmp_path).stdout)
    assert "FAIL import: fresh venv: ModuleNotFoundError: No module named 'tbdep'" in alone, alone
    assert "(the wheel requires tbdep (Requires-Dist), which the venv installs only with --wheelhouse DIR, a dir " \
           "of their wheels: pip download -d DIR tbdep)" in alone, alone  # not the Windows one, not the extra
    house = tmp_path / "house"
    _dep_wheel(house)
    given = verify("--wheelhouse", str(house), str(wheel), cwd=tmp_path)
    assert "ok import: fresh venv discovers nvidia" in flat(given.stdout), given.stdout
    empty = subdir(tmp_path, "empty")
    missing = flat(verify("--wheelhouse", str(empty), str(wheel), cwd=tmp_path).stdout)
    assert "FAIL import:" in missing and "tbdep" in missing, missing  # pip's own words: not in the wheelhouse
    nowhere = verify("--wheelhouse", str(tmp_path / "nope"), str(wheel), cwd=tmp_path)
    assert nowhere.returncode == 2 and "does not exist" in nowhere.stderr


BACKEND = """import pathlib
pathlib.Path({mark!r}).write_text("the build backend ran")
def get_requires_for_build_wheel(config_settings=None):
    return []
def prepare_metadata_for_build_wheel(directory, config_settings=None):
    raise RuntimeError("the build backend ran")
build_wheel = prepare_metadata_for_build_wheel
"""


def test_a_requires_dist_with_a_url_is_neither_fetched_nor_built(tmp_path: Path) -> None:
    """``name @ URL`` in a hostile wheel's METADATA: pip fetches a URL and builds a source tree whatever
    --no-index and --only-binary say, so verify never gives pip such a requirement (found in review 50)."""
    tree = subdir(tmp_path, "evilsrc")
    (tree / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\n'
                                         'backend-path = ["."]\n')
    (tree / "backend.py").write_text(BACKEND.format(mark=str(tmp_path / "ran")))
    asked: list[str] = []

    class Told(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Told)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/evilnet-1.0-py3-none-any.whl"
        wheel = make_wheel(tmp_path / NAME, {**PACKAGE, "triton/__init__.py": b"import tbdep\n"},
                           requires=(f"evilsrc @ {tree.as_uri()}", f"evilnet @ {url}", "tbdep>=1"))
        _dep_wheel(tmp_path / "house")
        got = flat(verify("--wheelhouse", str(tmp_path / "house"), str(wheel), cwd=tmp_path).stdout)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert not (tmp_path / "ran").exists(), "a source tree named by the wheel was built"
    assert asked == [], "a URL named by the wheel was fetched"
    assert "ok import: fresh venv discovers nvidia" in got, got  # tbdep still comes from the wheelhouse
