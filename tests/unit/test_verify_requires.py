"""The Requires-Dist of a wheel given to verify are hostile text (#47): whatever METADATA holds, reading them never
raises and gives at most 20 printable names, each a requirement's name that applies here."""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import make_wheel
from tritonbuild.wheel.checks import registry
from tritonbuild.wheel.checks.importing import requirements

LINE = (st.text(max_size=40)
        | st.sampled_from(["numpy", "pyelftools>=0.29", "tbextra; extra == 'a'", "tbwin; os_name == 'nt'",
                           "tbold; python_version < '2'", "\x1b[31mred", "a" * 300, "b[c]>=1"]))


@settings(max_examples=150, deadline=None)
@given(st.lists(LINE, max_size=60))
def test_hostile_requires_dist_gives_few_printable_names(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        safe = [ln.replace("\n", " ").replace("\r", " ") for ln in lines]
        try:
            wheel = make_wheel(Path(tmp) / "t.whl", {"triton/__init__.py": b""}, requires=tuple(safe))
        except ValueError:  # text zipfile cannot store (lone surrogates)
            return
        with zipfile.ZipFile(wheel) as zf:
            names = requirements(registry.context(wheel, zf, Path(tmp)))
        assert len(names) <= 20 and len(set(names)) == len(names)
        assert all(n.isprintable() for n in names)
        assert not {"tbextra", "tbwin", "tbold"} & set(names)  # markers that do not hold here, extras
