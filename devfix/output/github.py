"""GitHub Actions workflow commands, so findings show up as annotations on pull requests."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from devfix.output import Report


def render(report: Report) -> str:
    lines = [_annotation(result.path, finding) for result, finding in report.findings()]
    for error in report.errors():
        properties = ["title=devfix (error)"]
        if error.path is not None:
            properties.append(f"file={_property(error.path)}")
            if error.line is not None:
                properties += [f"line={error.line}", f"col={error.column}"]
        lines.append(f"::error {','.join(properties)}::{_escape(error.message)}\n")
    return "".join(lines)


def _annotation(path: str, finding) -> str:
    """A notebook's lines are not the file's lines: there the cell and line go in the message."""
    if finding.cell is not None:
        return f"::error title=devfix ({finding.code}),file={_property(path)}::{finding.place}: {finding.code} {_escape(finding.message)}\n"
    return (
        f"::error title=devfix ({finding.code}),file={_property(path)},line={finding.start.line},"
        f"col={finding.start.column},endLine={finding.end.line},endColumn={finding.end.column}::"
        f"{finding.code} {_escape(finding.message)}\n"
    )


def _escape(message: str) -> str:
    return message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    return _escape(value).replace(":", "%3A").replace(",", "%2C")
