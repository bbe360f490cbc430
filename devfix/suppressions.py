"""`# devfix: ignore` and `# devfix: ignore[DF001, DF002]` comments, found with the tokenizer."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

SUPPRESSION = re.compile(r"#\s*devfix:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s]*)\])?", re.IGNORECASE)

ALL_CODES: frozenset[str] = frozenset({"*"})


@dataclass(frozen=True)
class Suppressions:
    """Line number → suppressed codes (`ALL_CODES` for a bare `# devfix: ignore`)."""

    by_line: dict[int, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def from_source(cls, text: str) -> Suppressions:
        by_line: dict[int, frozenset[str]] = {}
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.COMMENT:
                    match = SUPPRESSION.search(token.string)
                    if match:
                        by_line[token.start[0]] = _codes(match.group("codes"))
        except (tokenize.TokenError, SyntaxError):
            pass
        return cls(by_line)

    def suppresses(self, code: str, lines: tuple[int, ...]) -> bool:
        for line in lines:
            codes = self.by_line.get(line)
            if codes is not None and (codes is ALL_CODES or code in codes):
                return True
        return False


def _codes(text: str | None) -> frozenset[str]:
    if text is None:
        return ALL_CODES
    codes = frozenset(part.strip().upper() for part in text.split(",") if part.strip())
    return codes or ALL_CODES
