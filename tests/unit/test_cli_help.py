"""``--help`` of the commands that take the plan options shows them by section, the common ones first: every
setting with a flag is in exactly one section, so a new setting without one fails here."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import click
from click.testing import CliRunner

from tritonbuild.cli.main import cli
from tritonbuild.cli.options import SECTIONS
from tritonbuild.settings.model import SPECS

# options written by the commands themselves
COMMAND_OWN = {"recipe", "python", "out", "as_json", "no_smoke_test", "verbose", "quiet"}
README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_setting_with_a_flag_is_in_exactly_one_section() -> None:
    placed = [name for _, names in SECTIONS for name in names]
    assert len(placed) == len(set(placed))
    flagged = {s.name for s in SPECS if s.flag}
    assert flagged - set(placed) == set(), "a setting with a flag needs a section in cli/options.SECTIONS"
    assert set(placed) - flagged <= COMMAND_OWN


def test_build_help_shows_the_common_options_first() -> None:
    text = CliRunner().invoke(cli, ["build", "--help"], terminal_width=100).output
    titles = [line for line in text.splitlines() if line.endswith(" options:")]
    assert titles[0] == "Common options:" and "Other options:" in titles and len(titles) == len(SECTIONS) + 1
    common = text.split("Common options:")[1].split("LLVM options:")[0]
    for flag in ("--source", "--backends", "--plugin-dir", "--llvm ", "--recipe", "--python", "--out", "--jobs",
                 "--json"):
        assert flag in common, flag
    assert "--zip-level" not in common and "--zip-level" in text


def test_every_command_is_in_readmes_command_table_and_every_row_is_a_command() -> None:
    # issue 48: leaving a command out of cli/main.py's tuple, or README's table, failed no test
    import re
    from pathlib import Path

    from tritonbuild.cli.main import cli

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = text.split("## Commands", 1)[1].split("\n\n", 2)[1]
    named = set()
    for row in table.splitlines()[2:]:
        first = re.sub(r"\([^)]*\)", "", row.split(" | ", 1)[0])  # "(same flags as `plan`)" names none
        named |= set(re.findall(r"`([a-z][a-z-]*)", first))
    commands = set(cli.commands)
    assert commands <= named, f"commands README's table does not name: {sorted(commands - named)}"
    assert named <= commands, f"README's table names what is no command: {sorted(named - commands)}"


def _reachable(root: click.Command) -> list[click.Command]:
    """``root`` and every command under it, through its groups."""
    out, todo = [], [root]
    while todo:
        command = todo.pop()
        out.append(command)
        if isinstance(command, click.Group):
            todo += command.commands.values()
    return out


def _unregistered(modules: list[ModuleType], root: click.Command) -> list[str]:
    """The commands the ``modules`` define that ``root`` does not reach: left out of cli/main.py's tuple (or of
    their group), they silently do not exist."""
    reached = {id(c) for c in _reachable(root)}
    return sorted(f"{m.__name__}.{name}" for m in modules for name, value in vars(m).items()
                  if isinstance(value, click.Command) and id(value) not in reached)


def _cli_modules() -> list[ModuleType]:
    import importlib
    import pkgutil

    import tritonbuild.cli

    names = [m.name for m in pkgutil.iter_modules(tritonbuild.cli.__path__)]
    return [importlib.import_module(f"tritonbuild.cli.{name}") for name in names]


def test_every_command_defined_in_cli_is_registered() -> None:
    assert _unregistered(_cli_modules(), cli) == [], "add these to cli/main.py's tuple (or their group)"
    made = ModuleType("made")
    made.frob = click.Command("frob")  # type: ignore[attr-defined]
    assert _unregistered([made], cli) == ["made.frob"]


def _readme_subcommands(table: str, group: str) -> set[str]:
    """The subcommands README's command table names for ``group``: ``group a\\|b\\|c`` and ``group d [...]``."""
    named: set[str] = set()
    for row in table.splitlines():
        for cell in re.findall(r"`([^`]*)`", row.split(" | ", 1)[0]):
            if cell.startswith(group + " "):
                named |= set(re.findall(r"^[a-z][a-z-]*(?:\\\|[a-z][a-z-]*)*", cell[len(group) + 1:])[0].split("\\|"))
    return named


def test_every_subcommand_is_in_readmes_command_table_and_every_row_is_one() -> None:
    table = README.read_text().split("## Commands", 1)[1].split("\n\n", 2)[1]
    groups = {name: g for name, g in cli.commands.items() if isinstance(g, click.Group)}
    assert {"llvm", "recipes"} <= set(groups)
    for name, group in groups.items():
        named, real = _readme_subcommands(table, name), set(group.commands)
        assert real <= named, f"README's command table does not name `{name} {'|'.join(sorted(real - named))}`"
        assert named <= real, f"README's command table names `{name} {'|'.join(sorted(named - real))}`: no such command"
    assert _readme_subcommands("| `llvm status\\|gc` | x |\n| `llvm compat [--range A..B]` (`x`) | y |", "llvm") == {
        "status", "gc", "compat"}
