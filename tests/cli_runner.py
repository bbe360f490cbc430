"""Run the `devfix` command in-process with stdout and stderr kept apart, on click 8.1 and 8.2+."""

from __future__ import annotations

import inspect

from click.testing import CliRunner, Result

from devfix.cli import app

# click 8.1 mixes stderr into stdout unless told not to; click 8.2 always keeps them apart.
_SEPARATE = {"mix_stderr": False} if "mix_stderr" in inspect.signature(CliRunner).parameters else {}


def invoke_devfix(args: list[str], *, catch_exceptions: bool = False, input: bytes | str | None = None) -> Result:
    return CliRunner(**_SEPARATE).invoke(app, args, catch_exceptions=catch_exceptions, input=input)
