"""SARIF 2.1.0, the static-analysis exchange format (GitHub code scanning, Azure DevOps, IDEs).

One run; the rules that found something are described in the tool's driver, each result points
at its rule by index. Files devfix could not process are tool notifications of level error, and
the invocation is then not successful.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from devfix import __version__

if TYPE_CHECKING:
    from devfix.output import Report

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(report: Report) -> str:
    codes = sorted({finding.code for _, finding in report.findings()})
    index = {code: position for position, code in enumerate(codes)}
    results = [
        {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": "error",
            "message": {"text": finding.message if finding.cell is None else f"{finding.place}: {finding.message}"},
            "locations": [{"physicalLocation": _physical_location(result.path, finding)}],
            "properties": {"fix": None if finding.fix_safety is None else finding.fix_safety.value, "cell": finding.cell},
        }
        for result, finding in report.findings()
    ]
    errors = report.errors()
    notifications = [_notification(error) for error in errors]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "devfix",
                "version": __version__,
                "rules": [_rule(code) for code in codes],
            }},
            "invocations": [{"executionSuccessful": not errors, "toolExecutionNotifications": notifications}],
            "results": results,
        }],
    }
    return json.dumps(log, indent=2) + "\n"


def _physical_location(path: str, finding) -> dict:
    """A region in the file; none for a notebook, whose cell lines are not the file's lines."""
    location: dict = {"artifactLocation": {"uri": _uri(path)}}
    if finding.cell is None:
        location["region"] = {
            "startLine": finding.start.line,
            "startColumn": finding.start.column,
            "endLine": finding.end.line,
            "endColumn": finding.end.column,
        }
    return location


def _rule(code: str) -> dict:
    from devfix.rule_registry import spec_by_code

    rule = spec_by_code(code).load()
    return {
        "id": code,
        "name": rule.NAME,
        "shortDescription": {"text": rule.DESCRIPTION},
        "help": {"text": f"devfix explain {code}"},
        "properties": {"fix": "none" if rule.REPORT_ONLY else rule.SAFETY.value},
    }


def _notification(error) -> dict:
    notification: dict = {"level": "error", "message": {"text": error.message}}
    if error.path is not None:
        location: dict = {"artifactLocation": {"uri": _uri(error.path)}}
        if error.line is not None:
            location["region"] = {"startLine": error.line, "startColumn": error.column}
        notification["locations"] = [{"physicalLocation": location}]
    return notification


def _uri(path: str) -> str:
    """Relative paths stay relative (SARIF viewers resolve them against the checkout)."""
    candidate = Path(path)
    return candidate.as_uri() if candidate.is_absolute() else candidate.as_posix()
