"""`path:line:col: DF001 message [*]`, one finding a line, as ruff and flake8 print them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from devfix.findings import Finding, Safety

if TYPE_CHECKING:
    from devfix.output import Report


def render(report: Report) -> str:
    """Findings only: errors go to stderr as `error:` lines, as they always did in text."""
    return "".join(format_finding(result.path, finding, report.unsafe_fixes) + "\n" for result, finding in report.findings())


def format_finding(path: str, finding: Finding, unsafe_fixes: bool) -> str:
    marker = " [*]" if is_applicable(finding, unsafe_fixes) else ""
    return f"{path}:{finding.place}: {finding.code} {finding.message}{marker}"


def is_applicable(finding: Finding, unsafe_fixes: bool) -> bool:
    return finding.fix_safety is Safety.SAFE or (finding.fix_safety is Safety.UNSAFE and unsafe_fixes)
