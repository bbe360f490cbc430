"""A JSON list of findings for tools, ruff's shape; positions are 1-based, as in the text format.
A file that could not be processed is a record with `"code": null` and the error as its message."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from devfix.output.text import is_applicable

if TYPE_CHECKING:
    from devfix.output import Report


def render(report: Report) -> str:
    records = [
        {
            "filename": result.path,
            "code": finding.code,
            "message": finding.message,
            "location": {"row": finding.start.line, "column": finding.start.column},
            "end_location": {"row": finding.end.line, "column": finding.end.column},
            "cell": finding.cell,
            "fix": None
            if finding.fix_safety is None
            else {
                "applicability": finding.fix_safety.value,
                "message": finding.fix_title,
                "available": is_applicable(finding, report.unsafe_fixes),
            },
        }
        for result, finding in report.findings()
    ]
    records += [
        {
            "filename": error.path,
            "code": None,
            "message": error.message,
            "location": None if error.line is None else {"row": error.line, "column": error.column},
            "end_location": None,
            "fix": None,
        }
        for error in report.errors()
    ]
    return json.dumps(records, indent=2) + "\n"
