"""`# devfix: ignore` and `# devfix: ignore[DF001, DF002]` comments, found with the tokenizer.

Each suppression remembers whether it silenced anything, so a check can report the ones that no
longer do (`--report-unused-ignores`)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

SUPPRESSION = re.compile(r"#\s*devfix:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s]*)\])?", re.IGNORECASE)

ALL_CODES: frozenset[str] = frozenset({"*"})


@dataclass(frozen=True)
class Suppressions:
    """Line number → suppressed codes (`ALL_CODES` for a bare `# devfix: ignore`), the comment's
    columns (1-based start, end) on that line, and the (line, code) pairs that silenced a finding."""

    by_line: dict[int, frozenset[str]] = field(default_factory=dict)
    columns: dict[int, tuple[int, int]] = field(default_factory=dict)
    used: set[tuple[int, str]] = field(default_factory=set)

    @classmethod
    def from_source(cls, text: str) -> Suppressions:
        by_line: dict[int, frozenset[str]] = {}
        columns: dict[int, tuple[int, int]] = {}
        if SUPPRESSION.search(text) is None:  # no comment can hold one: tokenizing a long file costs milliseconds
            return cls(by_line, columns)
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.COMMENT:
                    match = SUPPRESSION.search(token.string)
                    if match:
                        by_line[token.start[0]] = _codes(match.group("codes"))
                        columns[token.start[0]] = (token.start[1] + match.start() + 1, token.start[1] + match.end() + 1)
        except (tokenize.TokenError, SyntaxError):
            pass
        return cls(by_line, columns)

    def suppresses(self, code: str, lines: tuple[int, ...]) -> bool:
        for line in lines:
            codes = self.by_line.get(line)
            if codes is not None and (codes is ALL_CODES or code in codes):
                self.used.add((line, "*" if codes is ALL_CODES else code))
                return True
        return False

    def unused(self, checked_codes: frozenset[str]) -> list[tuple[int, str]]:
        """(line, code) of each suppression that silenced nothing; "*" for a bare one. Only codes of
        rules that ran are judged: a suppression for a rule not selected may still be needed."""
        unused = []
        for line, codes in sorted(self.by_line.items()):
            if codes is ALL_CODES:
                if not any(used_line == line for used_line, _ in self.used):
                    unused.append((line, "*"))
                continue
            unused += [(line, code) for code in sorted(codes) if code in checked_codes and (line, code) not in self.used]
        return unused


def _codes(text: str | None) -> frozenset[str]:
    if text is None:
        return ALL_CODES
    codes = frozenset(part.strip().upper() for part in text.split(",") if part.strip())
    return codes or ALL_CODES
