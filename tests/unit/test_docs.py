from __future__ import annotations

from pathlib import Path

from tritonbuild.settings.docs import settings_table


def test_readme_settings_reference_is_current() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert settings_table() in readme, "README.md drifted: paste the output of `python -m tritonbuild.settings.docs`"


def test_the_tests_docs_architecture_names_exist() -> None:
    """docs/architecture.md says which test fails when a change misses a place: each it names is a real test."""
    import ast
    import re

    root = Path(__file__).resolve().parents[2]
    named = re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", (root / "docs" / "architecture.md").read_text())
    assert len(named) >= 8, named  # the four kinds of change each name theirs
    missing = []
    for file, test in named:
        path = root / file
        tree = ast.parse(path.read_text()) if path.is_file() else None
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)} if tree else set()
        if test not in defined:
            missing.append(f"{file}::{test}")
    assert not missing, f"docs/architecture.md names tests that do not exist: {missing}"
