"""GitHub Actions workflow commands, so findings show up as annotations on pull requests."""

from __future__ import annotations

from collections.abc import Sequence

from devfix.findings import FileResult


def render(results: Sequence[FileResult], unsafe_fixes: bool) -> str:
    return "".join(
        f"::error title=devfix ({finding.code}),file={result.path},line={finding.start.line},"
        f"col={finding.start.column},endLine={finding.end.line},endColumn={finding.end.column}::"
        f"{finding.code} {_escape(finding.message)}\n"
        for result in results
        for finding in result.findings
    )


def _escape(message: str) -> str:
    return message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
