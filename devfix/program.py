"""What `devfix run --fix` executes, the way Python would: a script (`python train.py ARGS`) or a
module (`python -m pytest tests/`, `python -m package.train`), as `__main__`, from its edited text
when devfix has edited it in memory.
"""

from __future__ import annotations

import builtins
import runpy
import sys
import types
from dataclasses import dataclass
from pathlib import Path

PYTEST_PLUGIN = "devfix.pytest_outcomes"


@dataclass(frozen=True)
class Program:
    script: Path | None = None  # resolved
    module: str | None = None

    @classmethod
    def of_script(cls, script: Path) -> Program:
        return cls(script=script.resolve())

    @classmethod
    def of_module(cls, module: str) -> Program:
        return cls(module=module)

    @property
    def is_pytest(self) -> bool:
        return self.module == "pytest"

    def display(self) -> str:
        return f"-m {self.module}" if self.module is not None else str(self.script)

    def start(self, argv: list[str]) -> None:
        """sys.argv and sys.path as Python sets them: the script's folder first, or for `-m` the
        current folder. Under pytest, devfix's plugin records each test's outcome and error."""
        if self.module is None:
            sys.argv = [str(self.script), *argv]
            sys.path.insert(0, str(self.script.parent))
            return
        extra = ["-p", PYTEST_PLUGIN] if self.is_pytest else []
        sys.argv = [self.module, *extra, *argv]
        sys.path.insert(0, str(Path.cwd()))

    def run_as_main(self, texts: dict[Path, str]) -> None:
        """Run as `__main__`; a module's edited text is served by the import system (the caller's
        finder), a script's is compiled here under its own file name."""
        if self.module is not None:
            runpy.run_module(self.module, run_name="__main__", alter_sys=True)
            return
        text = texts.get(self.script)
        if text is None:
            runpy.run_path(str(self.script), run_name="__main__")
            return
        main = types.ModuleType("__main__")
        main.__file__ = str(self.script)
        main.__builtins__ = builtins
        sys.modules["__main__"] = main
        exec(compile(text, str(self.script), "exec", dont_inherit=True), main.__dict__)  # noqa: S102 - the user's own program
