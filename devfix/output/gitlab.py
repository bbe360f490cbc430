"""GitLab Code Quality report: a JSON list of issues, shown on merge requests.

Each issue has a fingerprint that stays the same when lines above it move (code, file, the
finding's source line and its rank among identical ones), so GitLab can tell new findings from old.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from devfix.output import Report


def render(report: Report) -> str:
    issues, seen = [], Counter()
    for result, finding in report.findings():
        lines = result.source.decode("utf-8", "replace").splitlines()
        text = lines[finding.start.line - 1].strip() if finding.cell is None and 0 < finding.start.line <= len(lines) else finding.place
        key = (result.path, finding.code, text)
        seen[key] += 1
        in_cell = "" if finding.cell is None else f"{finding.place}: "  # a notebook's lines are not the file's
        positions = {"begin": {"line": finding.start.line, "column": finding.start.column}, "end": {"line": finding.end.line, "column": finding.end.column}}
        issues.append({
            "description": f"{in_cell}{finding.code} {finding.message}",
            "check_name": finding.code,
            "fingerprint": _fingerprint(*key, seen[key]),
            "severity": "major",
            "location": {"path": result.path, "positions": positions} if finding.cell is None else {"path": result.path, "lines": {"begin": 1}},
        })
    for error in report.errors():
        issues.append({
            "description": error.message,
            "check_name": "devfix-error",
            "fingerprint": _fingerprint(error.path or "", "error", error.message, 1),
            "severity": "blocker",
            "location": {"path": error.path or ".", "lines": {"begin": error.line or 1}},
        })
    return json.dumps(issues, indent=2) + "\n"


def _fingerprint(path: str, code: str, text: str, rank: int) -> str:
    return hashlib.md5(f"{path}\0{code}\0{text}\0{rank}".encode(), usedforsecurity=False).hexdigest()
