"""A JSON list of findings for tools; positions are 1-based, as in the text format."""

from __future__ import annotations

import json
from collections.abc import Sequence

from devfix.findings import FileResult


def render(results: Sequence[FileResult], unsafe_fixes: bool) -> str:
    records = [
        {
            "filename": result.path,
            "code": finding.code,
            "message": finding.message,
            "location": {"row": finding.start.line, "column": finding.start.column},
            "end_location": {"row": finding.end.line, "column": finding.end.column},
            "fix": None
            if finding.fix_safety is None
            else {"applicability": finding.fix_safety.value, "message": finding.fix_title},
        }
        for result in results
        for finding in result.findings
    ]
    return json.dumps(records, indent=2) + "\n"
