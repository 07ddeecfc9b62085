from __future__ import annotations

from pathlib import Path

from tritonbuild.settings.docs import settings_table


def test_readme_settings_reference_is_current() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert settings_table() in readme, "README.md drifted: paste the output of `python -m tritonbuild.settings.docs`"
