"""`devfix check --add-ignore`: a `# devfix: ignore[CODE]` comment at the end of each finding's line,
so devfix can be adopted on a codebase with findings and then hold the line on new code.

A comment is merged into an existing `# devfix: ignore[...]` of that line. A line that ends inside
a string or with a backslash continuation cannot take a comment: it is left alone and reported.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from devfix.findings import Finding
from devfix.suppressions import SUPPRESSION

LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


@dataclass(frozen=True)
class Added:
    text: str
    comments: int  # lines that got (or extended) a comment
    skipped: tuple[int, ...]  # lines that could not take one


def add_ignores(text: str, findings: Iterable[Finding]) -> Added:
    codes_by_line: dict[int, set[str]] = defaultdict(set)
    for finding in findings:
        codes_by_line[finding.start.line].add(finding.code)
    lines = LINE.findall(text)
    blocked = _lines_that_cannot_end_in_a_comment(text)
    skipped, comments = [], 0
    for number, codes in sorted(codes_by_line.items()):
        if number in blocked or not 0 < number <= len(lines):
            skipped.append(number)
            continue
        lines[number - 1] = _with_comment(lines[number - 1], codes)
        comments += 1
    new_text = "".join(lines)
    ast.parse(new_text)  # a comment can never break a line it was allowed on; prove it anyway
    return Added(new_text, comments, tuple(skipped))


def _with_comment(line: str, codes: set[str]) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    match = SUPPRESSION.search(body)
    if match and match.group("codes") is not None:
        merged = sorted({code.strip().upper() for code in match.group("codes").split(",") if code.strip()} | codes)
        return body[: match.start()] + f"# devfix: ignore[{', '.join(merged)}]" + body[match.end():] + ending
    return body + f"  # devfix: ignore[{', '.join(sorted(codes))}]" + ending


def _lines_that_cannot_end_in_a_comment(text: str) -> set[int]:
    """Lines whose end lies inside a string token, or that continue with a backslash."""
    blocked = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.start[0] < token.end[0] and token.type not in (tokenize.NEWLINE, tokenize.NL):
            blocked.update(range(token.start[0], token.end[0]))
    for number, line in enumerate(LINE.findall(text), start=1):
        if line.rstrip("\r\n").endswith("\\"):
            blocked.add(number)
    return blocked
