"""The README's usage block and options table say what `devfix --help` says (issue 12)."""

from __future__ import annotations

import re

import click
import pytest

from devfix.cli import app
from tests.conftest import REPO

README = (REPO / "README.md").read_text()


def _usage_block() -> str:
    return README.split("## Usage", 1)[1].split("```", 2)[1]


def test_the_usage_block_lists_every_command_and_no_other():
    listed = re.findall(r"^devfix (\w+)", _usage_block(), re.MULTILINE)
    assert sorted(listed) == sorted(app.commands)


@pytest.mark.parametrize("command", ["check", "diff", "fix"])
def test_every_option_of_the_file_commands_is_in_the_options_table(command):
    table = README.split("### Options (check, diff, fix)", 1)[1].split("\n### ", 1)[0]
    missing = [
        option
        for parameter in app.commands[command].params
        if isinstance(parameter, click.Option) and parameter.name not in ("help", "color")
        for option in parameter.opts[:1]
        if f"`{option}" not in table and f" {option}`" not in table and f"{option} " not in table
    ]
    assert not missing, f"README options table lacks {missing}"
