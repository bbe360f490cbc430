"""`path:line:col: DF001 message [*]`, one finding a line, as ruff and flake8 print them."""

from __future__ import annotations

from collections.abc import Sequence

from devfix.findings import FileResult, Finding, Safety


def render(results: Sequence[FileResult], unsafe_fixes: bool) -> str:
    lines = [format_finding(result.path, finding, unsafe_fixes) for result in results for finding in result.findings]
    return "".join(line + "\n" for line in lines)


def format_finding(path: str, finding: Finding, unsafe_fixes: bool) -> str:
    marker = " [*]" if is_applicable(finding, unsafe_fixes) else ""
    return f"{path}:{finding.start.line}:{finding.start.column}: {finding.code} {finding.message}{marker}"


def is_applicable(finding: Finding, unsafe_fixes: bool) -> bool:
    return finding.fix_safety is Safety.SAFE or (finding.fix_safety is Safety.UNSAFE and unsafe_fixes)
