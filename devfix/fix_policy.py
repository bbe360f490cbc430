"""Which fixes a run applies: a value the CLI, the language server and the engine share without
importing the rules (or libcst)."""

from __future__ import annotations

from dataclasses import dataclass

from devfix.findings import Position


@dataclass(frozen=True)
class FixPolicy:
    """Which fixes a pass applies. `only` limits it to the finding that starts at that position."""

    apply: bool = False
    unsafe: bool = False
    only: tuple[str, Position] | None = None
