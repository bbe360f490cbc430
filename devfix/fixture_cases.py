"""The fixture layout: `fixtures/<CODE>-<rule-name>/<case>/before.py` and `after.py` (or
`before.ipynb` and `after.ipynb`: a notebook case, run cell after cell).

A case whose name starts with `clean-` is correct code that every rule must leave byte-identical;
any other case must be changed by its directory's rule. Extra `.py` files in a case directory are
modules the case imports (multi-file cases): library code that every rule must leave byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CLEAN_PREFIX = "clean-"


@dataclass(frozen=True)
class FixtureCase:
    directory: Path

    @property
    def rule_code(self) -> str:
        return self.directory.parent.name.split("-", 1)[0]

    @property
    def name(self) -> str:
        return f"{self.directory.parent.name}/{self.directory.name}"

    @property
    def is_clean(self) -> bool:
        return self.directory.name.startswith(CLEAN_PREFIX)

    @property
    def suffix(self) -> str:
        return ".ipynb" if (self.directory / "before.ipynb").exists() else ".py"

    @property
    def before(self) -> Path:
        return self.directory / f"before{self.suffix}"

    @property
    def after(self) -> Path:
        return self.directory / f"after{self.suffix}"

    @property
    def helpers(self) -> list[Path]:
        """The modules beside before.py that it imports (stand-ins of libraries, library modules of
        the program): devfix must leave each one byte-identical."""
        return sorted(path for path in self.directory.rglob("*.py") if path not in (self.before, self.after))


def discover_cases(root: Path) -> list[FixtureCase]:
    """Every directory under `root` holding a before.py (or before.ipynb), sorted by name."""
    befores = [*root.rglob("before.py"), *root.rglob("before.ipynb")]
    return sorted({FixtureCase(path.parent) for path in befores}, key=lambda case: case.name)
