"""Notebooks in `devfix lsp` (notebookDocument sync, LSP 3.17): the code cells are one program,
findings are shown on their cells exactly as `devfix check nb.ipynb` places them, and fixes edit
the cells as `devfix fix nb.ipynb` does. VS Code's capabilities, with notebook sync (1.74+)."""

from __future__ import annotations

import asyncio
import json
import sys

import attrs
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.findings import Position
from devfix.fix_policy import FixPolicy
from devfix.notebook_engine import process_notebook
from devfix.notebooks import CellPosition, Notebook

CELLS = (  # (kind, text); the markdown cell keeps the numbers as the user counts them
    (lsp.NotebookCellKind.Code, "import torch\nmodel = torch.nn.Linear(2, 2).cuda()"),
    (lsp.NotebookCellKind.Markup, "# Training\nrun `.cuda()` here"),
    (lsp.NotebookCellKind.Code, "%matplotlib inline\nx = torch.ones(2).cuda()\nprint(model(x))"),
)
pytestmark = pytest.mark.asyncio(loop_scope="module")  # the loop of the module's shared servers


def capabilities(pull: bool) -> lsp.ClientCapabilities:
    base = client_capabilities("visual-studio-code@v1.65.2")
    text_document = attrs.evolve(base.text_document, diagnostic=lsp.DiagnosticClientCapabilities() if pull else None)
    notebooks = lsp.NotebookDocumentClientCapabilities(synchronization=lsp.NotebookDocumentSyncClientCapabilities())
    return attrs.evolve(base, text_document=text_document, notebook_document=notebooks)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "devfix", "lsp"]), params=["push", "pull"], scope="module")
async def server(lsp_client: LanguageClient, request):
    """One server per client kind for the module (a start and stop cost about 3 s)."""
    lsp_client.pull = request.param == "pull"
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities(lsp_client.pull)))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def client(server: LanguageClient, request):
    """The shared server with a notebook of the test's own, closed after it if the test left it open."""
    folder = f"/tmp/devfix-lsp-tests/{request.node.originalname.removeprefix('test_')}/{request.node.callspec.id}"
    server.notebook_uri = f"file://{folder}/train.ipynb"
    server.cell_uris = [f"vscode-notebook-cell:{folder}/train.ipynb#cell{index}" for index in range(len(CELLS))]
    server.notebook_open = False
    yield server
    if server.notebook_open:
        close_notebook(server)


def ipynb(cells=CELLS) -> str:
    """The same notebook as a file, for the command line's engine."""
    kinds = {lsp.NotebookCellKind.Code: "code", lsp.NotebookCellKind.Markup: "markdown"}
    return json.dumps({"cells": [{"cell_type": kinds[kind], "source": text, "metadata": {}} for kind, text in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def cli(policy: FixPolicy, cells=CELLS):
    return process_notebook(ipynb(cells).encode(), "train.ipynb", ALL_RULES, ProjectIndex(), policy)


def open_notebook(client: LanguageClient, cells=CELLS, markdown_synced: bool = True) -> None:
    """Open the notebook; a client filtering cells by the server's selector (Python cells) does
    not send the markdown cell's text (`markdown_synced=False`)."""
    client.notebook_open = True
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
        notebook_document=lsp.NotebookDocument(
            uri=client.notebook_uri, notebook_type="jupyter-notebook", version=1,
            cells=[lsp.NotebookCell(kind=kind, document=uri) for (kind, _), uri in zip(cells, client.cell_uris)]),
        cell_text_documents=[
            lsp.TextDocumentItem(uri=uri, language_id="python" if kind == lsp.NotebookCellKind.Code else "markdown", version=1, text=text)
            for (kind, text), uri in zip(cells, client.cell_uris) if markdown_synced or kind == lsp.NotebookCellKind.Code
        ],
    ))


def close_notebook(client: LanguageClient) -> None:
    client.notebook_open = False
    client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
        notebook_document=lsp.NotebookDocumentIdentifier(uri=client.notebook_uri),
        cell_text_documents=[lsp.TextDocumentIdentifier(uri=uri) for uri in client.cell_uris]))


async def diagnostics_by_cell(client: LanguageClient, version: int = 1) -> dict[int, list[tuple[str, int, int]]]:
    """(code, line, character) of each cell's diagnostics, as the client shows them."""
    shown = {}
    for index, uri in enumerate(client.cell_uris):
        if client.pull:
            report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))
            items = report.items
        else:
            items = client.diagnostics.get(uri, [])
        shown[index + 1] = sorted((item.code, item.range.start.line, item.range.start.character) for item in items)
    return shown


async def settled(client: LanguageClient, cells=CELLS) -> None:
    """Push: the notebook's diagnostics have arrived (one notification per cell), within 20 s.
    What arrived is compared with the command line's by the tests themselves."""
    if client.pull:
        return
    expected = {client.cell_uris[number - 1] for number, found in expected_by_cell(cells).items() if found}

    async def notified() -> None:
        while {uri for uri in client.cell_uris if client.diagnostics.get(uri)} != expected:
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    await asyncio.wait_for(notified(), 20)


def expected_by_cell(cells=CELLS) -> dict[int, list[tuple[str, int, int]]]:
    expected = {number: [] for number in range(1, len(cells) + 1)}
    for finding in cli(FixPolicy(), cells).findings:
        expected[finding.cell].append((finding.code, finding.start.line - 1, finding.start.column - 1))
    return {number: sorted(found) for number, found in expected.items()}


async def actions_at(client: LanguageClient, cell_uri: str, at: lsp.Range, only=None) -> list[lsp.CodeAction]:
    return list(await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=cell_uri), range=at, context=lsp.CodeActionContext(diagnostics=[], only=only))) or [])


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)

    def offset(position: lsp.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        return sum(len(line) for line in lines[: position.line]) + position.character  # ASCII cells

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def cells_after(client: LanguageClient, edit: lsp.WorkspaceEdit) -> dict[int, str]:
    return {index + 1: apply(text, list(edit.changes.get(uri, []))) for index, ((kind, text), uri) in enumerate(zip(CELLS, client.cell_uris))
            if kind == lsp.NotebookCellKind.Code}


@pytest.mark.parametrize("markdown_synced", [True, False], ids=["every-cell-synced", "python-cells-only"])
async def test_findings_are_shown_on_their_cells_as_the_command_line_places_them(client, markdown_synced):
    open_notebook(client, markdown_synced=markdown_synced)
    await settled(client)
    shown = await diagnostics_by_cell(client)
    assert shown == expected_by_cell()
    assert shown[1] and shown[3] and not shown[2]  # `.cuda()` in the markdown cell is text


async def test_a_quick_fix_edits_the_cells_as_devfix_fix_does(client):
    open_notebook(client)
    await settled(client)
    actions = await actions_at(client, client.cell_uris[2], lsp.Range(lsp.Position(1, 0), lsp.Position(1, 30)))
    fix = next(action for action in actions if action.kind == lsp.CodeActionKind.QuickFix and "disable" not in action.title)
    fix = await client.code_action_resolve_async(fix)
    (finding,) = [found for found in cli(FixPolicy()).findings if found.cell == 3]
    line = Notebook(ipynb()).program_line(CellPosition(3, finding.start.line))
    expected = cli(FixPolicy(apply=True, unsafe=True, only=(finding.code, Position(line, finding.start.column))))
    assert cells_after(client, fix.edit) == Notebook(expected.fixed.decode()).cell_sources()
    assert client.cell_uris[1] not in fix.edit.changes


async def test_fix_all_equals_devfix_fix_of_the_notebook(client):
    open_notebook(client)
    await settled(client)
    (fix_all,) = await actions_at(client, client.cell_uris[0], lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)), only=["source.fixAll"])
    fix_all = await client.code_action_resolve_async(fix_all)
    assert cells_after(client, fix_all.edit) == Notebook(cli(FixPolicy(apply=True)).fixed.decode()).cell_sources()


async def test_a_cell_fixed_by_hand_loses_its_diagnostics(client):
    open_notebook(client)
    await settled(client)
    fixed_line = "x = torch.ones(2, device=next(model.parameters()).device)"
    client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
        notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=client.notebook_uri, version=2),
        change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[
            lsp.NotebookDocumentCellContentChanges(
                document=lsp.VersionedTextDocumentIdentifier(uri=client.cell_uris[2], version=2),
                changes=[lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(1, 0), lsp.Position(1, 24)), text=fixed_line)]),
        ]))))
    cells = (CELLS[0], CELLS[1], (CELLS[2][0], CELLS[2][1].replace("x = torch.ones(2).cuda()", fixed_line)))
    await settled(client, cells)
    shown = await diagnostics_by_cell(client)
    assert shown == expected_by_cell(cells)
    assert shown[1] and not shown[3]


async def test_closing_the_notebook_clears_its_cells(client):
    open_notebook(client)
    await settled(client)
    assert any((await diagnostics_by_cell(client)).values())
    close_notebook(client)
    if client.pull:  # the client drops a closed document's diagnostics; a late pull gets none
        assert not any((await diagnostics_by_cell(client)).values())
        return

    async def cleared() -> None:  # other tests' documents may be published meanwhile
        while any(client.diagnostics.get(uri) for uri in client.cell_uris):
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    await asyncio.wait_for(cleared(), 20)  # a server that never clears them fails here
