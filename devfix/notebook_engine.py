"""A notebook through the engine: its program analysed and fixed like a file, findings placed in
their cells, and the fixed cells written back into the notebook's own text."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

from devfix.analysis.project import ProjectIndex
from devfix.engine import Rule, RuleProducedInvalidCode, process
from devfix.findings import FileResult, Finding, Position
from devfix.fix_policy import FixPolicy
from devfix.notebooks import Notebook, NotebookError

LOCATED = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): ")


def process_notebook(
    source: bytes,
    path: str,
    rules: Sequence[Rule],
    project: ProjectIndex,
    policy: FixPolicy,
    report_unused_ignores: bool = False,
) -> FileResult:
    try:
        notebook = Notebook.from_bytes(source)
    except NotebookError as error:
        return FileResult(path, source, source, error=f"{path}: {error}; file skipped")
    project.read_as(path, notebook.program)  # the notebook's own classes, for the rules that ask the index
    result = process(notebook.program.encode("utf-8"), path, rules, project, policy, report_unused_ignores=report_unused_ignores)
    if result.error is not None:
        return replace(result, source=source, fixed=source, error=_in_cells(result.error, notebook))
    applied = tuple(_placed(finding, notebook) for finding in result.applied)
    if not result.changed:
        return FileResult(path, source, source, tuple(_placed(finding, notebook) for finding in result.findings), applied, rule_crashes=result.rule_crashes)
    if not notebook.keeps_its_cells(result.fixed.decode("utf-8")):
        raise RuleProducedInvalidCode(f"{path}: a fix would move code from one cell into another; file left untouched")
    fixed_text = notebook.with_program(result.fixed.decode("utf-8"))
    _ensure_notebook(fixed_text, path)
    fixed = Notebook(fixed_text)
    remaining = tuple(_placed(finding, fixed) for finding in result.findings)
    return FileResult(path, source, fixed_text.encode("utf-8"), remaining, applied, rule_crashes=result.rule_crashes)


def _placed(finding: Finding, notebook: Notebook) -> Finding:
    start, end = notebook.position(finding.start.line), notebook.position(finding.end.line)
    if start is None:
        return finding
    end_line = end.line if end is not None and end.cell == start.cell else start.line
    return replace(finding, start=Position(start.line, finding.start.column), end=Position(end_line, finding.end.column), cell=start.cell)


def _in_cells(error: str, notebook: Notebook) -> str:
    """`nb.ipynb:12:5: syntax error ...` of the program → `nb.ipynb:cell 3:2:5: ...`."""
    located = LOCATED.match(error)
    position = notebook.position(int(located["line"])) if located else None
    if position is None:
        return error
    return f"{located['path']}:cell {position.cell}:{position.line}:{located['column']}: " + error[located.end():]


def _ensure_notebook(text: str, path: str) -> None:
    try:
        json.loads(text)
    except ValueError as error:
        raise RuleProducedInvalidCode(f"{path}: devfix produced a notebook that is not valid JSON ({error}); file left untouched") from error
