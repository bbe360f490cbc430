"""Results that every front end (CLI, LSP, Fixit adapter) renders: computed once, in the rules."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Safety(enum.Enum):
    """How much a fix may change behaviour; `fix` applies unsafe fixes only when asked."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Position:
    """1-based line, 1-based column (in characters of the decoded line)."""

    line: int
    column: int


@dataclass(frozen=True)
class Finding:
    """One device-placement problem at one place; `fix_safety` is None when devfix has no fix."""

    code: str
    message: str
    start: Position
    end: Position
    fix_safety: Safety | None = None
    fix_title: str = ""
    applied: bool = False
    cell: int | None = None  # in a notebook: the cell, and `start`/`end` are within it

    @property
    def fixable(self) -> bool:
        return self.fix_safety is not None

    def sort_key(self) -> tuple[int, int, int, str]:
        return (self.cell or 0, self.start.line, self.start.column, self.code)

    @property
    def place(self) -> str:
        """`line:column`, or `cell N:line:column` in a notebook (as ruff writes it)."""
        where = f"{self.start.line}:{self.start.column}"
        return where if self.cell is None else f"cell {self.cell}:{where}"


@dataclass(frozen=True)
class FileResult:
    """What the engine made of one file: findings on the original text and the fixed bytes."""

    path: str
    source: bytes
    fixed: bytes
    findings: tuple[Finding, ...] = ()
    applied: tuple[Finding, ...] = ()
    error: str | None = None
    rule_crashes: tuple[str, ...] = ()  # devfix bugs: a rule that raised was skipped for this file

    @property
    def changed(self) -> bool:
        return self.error is None and self.fixed != self.source
