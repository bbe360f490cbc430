"""`--show-fixes`: each fix by place and title, on stderr after the main output."""

from __future__ import annotations

from collections.abc import Iterable

from devfix.findings import FileResult, Finding


def render(heading: str, fixes: Iterable[tuple[FileResult, Finding]]) -> str:
    lines = [f"{result.path}:{finding.place}: {finding.code} {finding.fix_title or finding.message}" for result, finding in fixes]
    if not lines:
        return ""
    return f"{heading} ({len(lines)}):\n" + "".join(f"  {line}\n" for line in lines)
