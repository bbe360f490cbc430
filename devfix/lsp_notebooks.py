"""Jupyter notebooks in the language server: an open notebook's code cells analysed as one program,
as `devfix check nb.ipynb` does (a `device` defined in cell 2 is in scope in cell 5), findings
shown on their cells, and quick fixes and fix-all sent as edits of the cells they change.

The client syncs notebooks with `notebookDocument/*` (LSP 3.17); pygls keeps each notebook and its
cells' text documents in the workspace. The engine is given a minimal `.ipynb` text made of those
cells (`notebook_text`), so magics, shell lines and cell numbers go through the same code as the
command line's (`devfix.notebooks`, `devfix.notebook_engine`). Notebooks get the full analysis
only, after a pause in typing: they are small next to the files the quick path is for.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls import uris

from devfix.background import Request
from devfix.diffing import minimal_edits
from devfix.findings import Finding
from devfix.lsp_actions import disable_for_line, fix_all, fix_policy, offers_fix, overlaps, quick_fix
from devfix.notebooks import CellPosition, Notebook, NotebookError

if TYPE_CHECKING:
    from devfix.lsp import DevfixLanguageServer

DELAY_SECONDS = 0.4  # the analysis waits for a pause in typing, like a file's full analysis

SYNC_OPTIONS = lsp.NotebookDocumentSyncOptions(
    notebook_selector=[lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage(language="python")], notebook="*")],
)


@dataclass(frozen=True)
class NotebookAnalysis:
    version: int
    text: str  # the `.ipynb` text the engine saw
    findings: tuple[Finding, ...]  # placed in their cells: `finding.cell`, lines counted in the cell
    parses: bool


class NotebookState:
    """Per notebook URI: the analysis of the last version, the one under way, and the cells that
    show diagnostics (to clear them when a cell loses its findings or goes away)."""

    def __init__(self) -> None:
        self.analyses: dict[str, NotebookAnalysis] = {}
        self.running: dict[str, tuple[tuple[int, str], asyncio.Future]] = {}
        self.shown: dict[str, set[str]] = {}
        self.pending: dict[str, asyncio.Task] = {}

    def forget(self, uri: str | None = None) -> None:
        for table in (self.analyses, self.running):
            if uri is None:
                table.clear()
            else:
                table.pop(uri, None)


def notebook_of(ls: DevfixLanguageServer, uri: str) -> lsp.NotebookDocument | None:
    """The open notebook `uri` names, or the one that holds the cell `uri` names."""
    return ls.workspace.get_notebook_document(notebook_uri=uri) or ls.workspace.get_notebook_document(cell_uri=uri)


def notebook_text(ls: DevfixLanguageServer, notebook: lsp.NotebookDocument) -> str:
    """A minimal `.ipynb` of the notebook's cells in order: code cells in Python, the others as
    empty markdown cells (they keep their numbers: findings say `cell 5` as the user counts)."""
    cells = []
    synced = ls.workspace.text_documents
    for cell in notebook.cells:
        document = synced.get(unquote(cell.document))  # a cell outside the sync's selector (markdown, R) is not sent
        code = document is not None and cell.kind == lsp.NotebookCellKind.Code and (document.language_id or "python") == "python"
        cells.append({"cell_type": "code" if code else "markdown", "source": document.source if code else "", "metadata": {}})
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _path(notebook: lsp.NotebookDocument) -> str:
    return uris.to_fs_path(notebook.uri) or "untitled.ipynb"


def request(ls: DevfixLanguageServer, notebook: lsp.NotebookDocument, text: str) -> Request:
    path = _path(notebook)
    settings = ls.settings_for(path)
    return Request(text, path, *settings.selection(Path(path)), None, settings.file_timeout, notebook=True)


async def analyse(ls: DevfixLanguageServer, notebook_uri: str) -> NotebookAnalysis | None:
    """The analysis of the notebook as it is now (in the worker process), computed once per version."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return None
    state, text, generation = ls.notebooks, notebook_text(ls, notebook), ls.generation
    known = state.analyses.get(notebook_uri)
    if known is not None and (known.version, known.text) == (notebook.version, text):
        return known
    running = state.running.get(notebook_uri)
    if running is None or running[0] != (notebook.version, text):
        work = ls.background.analyse(notebook_uri, request(ls, notebook, text))
        running = ((notebook.version, text), asyncio.ensure_future(work))
        state.running[notebook_uri] = running
    outcome = await asyncio.shield(running[1])
    analysis = NotebookAnalysis(notebook.version, text, outcome.findings, outcome.parses)
    if generation == ls.generation:
        state.analyses[notebook_uri] = analysis
    return analysis


def is_current(ls: DevfixLanguageServer, analysis: NotebookAnalysis, notebook_uri: str) -> bool:
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    return notebook is not None and notebook.version == analysis.version and notebook_text(ls, notebook) == analysis.text


def cell_findings(analysis: NotebookAnalysis, notebook: lsp.NotebookDocument, cell_uri: str) -> list[Finding]:
    numbers = [index for index, cell in enumerate(notebook.cells, start=1) if cell.document == cell_uri]
    return [finding for finding in analysis.findings if numbers and finding.cell == numbers[0]]


# -- diagnostics -------------------------------------------------------------------------------------


def schedule_publish(ls: DevfixLanguageServer, notebook_uri: str) -> None:
    """Push the notebook's diagnostics after a pause (for clients without pull); a newer change
    cancels the older computation."""
    if ls.supports_pull():
        return
    previous = ls.notebooks.pending.pop(notebook_uri, None)
    if previous is not None:
        previous.cancel()
    ls.notebooks.pending[notebook_uri] = asyncio.ensure_future(_publish_later(ls, notebook_uri))


async def _publish_later(ls: DevfixLanguageServer, notebook_uri: str) -> None:
    await asyncio.sleep(DELAY_SECONDS)
    analysis = await analyse(ls, notebook_uri)
    if analysis is not None and is_current(ls, analysis, notebook_uri):
        publish(ls, notebook_uri, analysis)


def publish(ls: DevfixLanguageServer, notebook_uri: str, analysis: NotebookAnalysis) -> None:
    """Each cell's diagnostics; a cell that showed some and has none now (or is gone) is cleared."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    shown = ls.notebooks.shown.get(notebook_uri, set())
    now: set[str] = set()
    for cell in notebook.cells:
        findings = cell_findings(analysis, notebook, cell.document)
        if not findings and cell.document not in shown:
            continue
        document = ls.workspace.get_text_document(cell.document)
        diagnostics = ls.diagnostics(document, findings)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell.document, diagnostics=diagnostics, version=document.version))
        if findings:
            now.add(cell.document)
    clear(ls, shown - now - {cell.document for cell in notebook.cells})
    ls.notebooks.shown[notebook_uri] = now


def clear(ls: DevfixLanguageServer, cell_uris: set[str]) -> None:
    for cell_uri in cell_uris:
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))


def close(ls: DevfixLanguageServer, notebook_uri: str, cell_uris: list[str]) -> None:
    """The notebook closed: nothing of it is kept, and (push) its cells' diagnostics are cleared."""
    pending = ls.notebooks.pending.pop(notebook_uri, None)
    if pending is not None:
        pending.cancel()
    ls.notebooks.forget(notebook_uri)
    shown = ls.notebooks.shown.pop(notebook_uri, set())
    if not ls.supports_pull():
        clear(ls, shown | set(cell_uris))


async def cell_diagnostics(ls: DevfixLanguageServer, notebook: lsp.NotebookDocument, cell_uri: str) -> list[lsp.Diagnostic]:
    """A pulling client asks per cell: the notebook's analysis, that cell's part."""
    analysis = await analyse(ls, notebook.uri)
    if analysis is None or not is_current(ls, analysis, notebook.uri):
        return []
    return ls.diagnostics(ls.workspace.get_text_document(cell_uri), cell_findings(analysis, notebook, cell_uri))


# -- code actions -----------------------------------------------------------------------------------


async def code_actions(ls: DevfixLanguageServer, notebook: lsp.NotebookDocument, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """What `lsp.code_action` offers for a file, for the findings of one cell; a fix's data names
    the finding by its line in the notebook's program, as the engine's `FixPolicy.only` needs."""
    cell_uri = params.text_document.uri
    analysis = await analyse(ls, notebook.uri)
    if analysis is None or not analysis.parses or not is_current(ls, analysis, notebook.uri):
        return []
    document = ls.workspace.get_text_document(cell_uri)
    program = Notebook(analysis.text)
    unsafe = ls.settings_for(_path(notebook)).unsafe_fixes
    actions: list[lsp.CodeAction] = []
    lines = document.lines
    for finding in cell_findings(analysis, notebook, cell_uri):
        diagnostic = ls.diagnostic(document, finding, lines)
        if not overlaps(diagnostic.range, params.range):
            continue
        line = program.program_line(CellPosition(finding.cell, finding.start.line))
        if line is not None and offers_fix(finding, unsafe):
            actions.append(quick_fix(finding, diagnostic, {"notebook": notebook.uri, "version": notebook.version}, line))
        actions.append(disable_for_line(ls, cell_uri, document, finding, diagnostic))
    if any(finding.fix_safety is not None for finding in analysis.findings):
        actions.append(fix_all({"notebook": notebook.uri, "version": notebook.version}))
    return actions


async def fix_edit(ls: DevfixLanguageServer, data: dict) -> lsp.WorkspaceEdit:
    """The edits of the cells one fix (or every allowed fix) changes; none when the notebook
    changed since the action was offered."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=data["notebook"])
    if notebook is None or notebook.version != data.get("version"):
        return lsp.WorkspaceEdit(changes={})
    policy = fix_policy(data, ls.settings_for(_path(notebook)))
    text = notebook_text(ls, notebook)
    fixed = await ls.background.fix(request(ls, notebook, text), policy)
    if fixed is None or notebook.version != data.get("version") or notebook_text(ls, notebook) != text:
        return lsp.WorkspaceEdit(changes={})
    try:
        before, after = Notebook(text).cell_sources(), Notebook(fixed).cell_sources()
    except NotebookError:
        return lsp.WorkspaceEdit(changes={})
    changes = {}
    for number, source in after.items():
        if before.get(number) != source:
            cell_uri = notebook.cells[number - 1].document
            changes.update(ls.workspace_edit(cell_uri, minimal_edits(before[number], source)).changes)
    return lsp.WorkspaceEdit(changes=changes)
