"""`--statistics`: how many findings each rule has, instead of each finding (ruff's table)."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from devfix.output.text import is_applicable

if TYPE_CHECKING:
    from devfix.output import Report

FORMATS = ("text", "json")


def render(report: Report, output_format: str) -> str:
    counts = Counter(finding.code for _, finding in report.findings())
    fixable = Counter(finding.code for _, finding in report.findings() if is_applicable(finding, report.unsafe_fixes))
    rows = [
        {"code": code, "name": _name(code), "count": count, "fixable": fixable[code]}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if output_format == "json":
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    return "".join(
        f"{row['count']:>{width}}\t{row['code']}\t{'[*]' if row['fixable'] == row['count'] else '[-]' if row['fixable'] else '   '} {row['name']}\n"
        for row in rows
    )


def _name(code: str) -> str:
    from devfix.rule_registry import spec_by_code

    return spec_by_code(code).load().NAME
