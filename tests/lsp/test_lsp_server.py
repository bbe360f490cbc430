"""`devfix lsp` as a real subprocess, driven like VS Code (UTF-16, push), Neovim (UTF-8, pull),
Emacs 29's eglot (UTF-32, push), Emacs 28's eglot 1.9 (UTF-16, push, no resolve) and Helix."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Union

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.codemods.base import FixPolicy
from devfix.engine import process

# the real client capabilities pytest-lsp ships, one per editor set-up in the README (Neovim 0.8 to
# 0.10 has a set-up of its own), and those of clients pytest-lsp does not ship, transcribed from
# their source (client_capabilities/: Helix, and eglot 1.9 as Emacs 28 installs it), with the
# position encoding each one negotiates
PROFILES = {
    "visual-studio-code@v1.65.2": "utf-16", "neovim@v0.11.0": "utf-8", "neovim@v0.10.0": "utf-16",
    "neovim@v0.8.0": "utf-16", "emacs@v29.1": "utf-32", "eglot-1.9": "utf-16", "helix": "utf-8",
}
pytestmark = pytest.mark.asyncio(loop_scope="module")  # the loop of the module's shared servers
OWN_PROFILES = Path(__file__).parent / "client_capabilities"
UNITS = {"utf-16": lambda s: len(s.encode("utf-16-le")) // 2, "utf-8": lambda s: len(s.encode("utf-8")), "utf-32": len}
ONE_FINDING = 'import torch\nnom = "héllo wörld 😋"; x = torch.zeros(3).cuda()\nprint(nom, x)\n'
SEVERAL = (
    "import torch\nfrom torch.utils.data import DataLoader\n\n"
    "model = torch.nn.Linear(2, 2).cuda()  # café\n"
    "loader = DataLoader([torch.ones(2)])\n"
    "for x in loader:\n    y = model(x)\n"
)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "devfix", "lsp"]),
    params=list(PROFILES), scope="module",
)
async def server(lsp_client: LanguageClient, request):
    """One server per editor profile for the module, as an editor keeps one for a session:
    starting and stopping it cost about 3 s, which the nine tests pay once instead of nine times."""
    lsp_client.profile = request.param
    lsp_client.encoding = PROFILES[request.param]
    lsp_client.applied_edits = []

    @lsp_client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: lsp.ApplyWorkspaceEditParams):
        lsp_client.applied_edits.append(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    tell_commands_from_code_actions(lsp_client)
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities_of(request.param)))
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def client(server: LanguageClient, request):
    """The shared server with a document of the test's own, closed after it, so that no test sees
    another's document, diagnostics or applied edits."""
    server.uri = f"file:///tmp/devfix-lsp-tests/{request.node.originalname.removeprefix('test_')}/train.py"
    server.opened = set()
    server.applied_edits.clear()
    yield server
    for uri in server.opened:
        server.text_document_did_close(lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri)))


def tell_commands_from_code_actions(client: LanguageClient) -> None:
    """Read a code action that carries a command as editors do: a Command's `command` is a string,
    a CodeAction's an object (lsprotocol's own converter coerces the object into a string and
    answers a Command)."""

    def structure(value: dict, _type) -> lsp.Command | lsp.CodeAction:
        kind = lsp.Command if isinstance(value.get("command"), str) else lsp.CodeAction
        return client.protocol._converter.structure(value, kind)

    client.protocol._converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], structure)  # noqa: UP007 - the type lsprotocol names


def capabilities_of(profile: str) -> lsp.ClientCapabilities:
    """pytest-lsp's recorded capabilities of `profile`, or ours for a client it has none of."""
    own = OWN_PROFILES / f"{profile}.json"
    if not own.exists():
        return client_capabilities(profile)
    data = json.loads(own.read_text(encoding="utf-8"))
    data.pop("_source")
    return get_converter().structure(data, lsp.ClientCapabilities)


def fix_with_engine(text: str) -> str:
    """What `devfix fix` writes for this text."""
    return process(text.encode(), "train.py", ALL_RULES, ProjectIndex(), FixPolicy(apply=True)).fixed.decode()


def open_document(client: LanguageClient, text: str, version: int = 1, language_id: str = "python", uri: str | None = None) -> None:
    uri = uri or client.uri
    client.opened.add(uri)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id=language_id, version=version, text=text)))


async def diagnostics(client: LanguageClient) -> list[lsp.Diagnostic]:
    if capabilities_of(client.profile).text_document.diagnostic is not None:  # Neovim 0.10+ pulls
        report = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=client.uri)))
        return list(report.items)
    # the next push for this test's document: another document's may come first, and ours may be
    # read in the same batch, before a new wait is registered
    shown = client.diagnostics.get(client.uri)
    while client.diagnostics.get(client.uri) is shown:
        await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[client.uri])


async def code_actions(client, diagnostic_range: lsp.Range, only=None) -> list[lsp.CodeAction]:
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=client.uri), range=diagnostic_range,
        context=lsp.CodeActionContext(diagnostics=[], only=only)))
    return list(actions or [])


def apply(text: str, edits: list[lsp.TextEdit], encoding: str) -> str:
    """Apply LSP edits the way an editor does, converting client units back to characters."""
    lines = text.splitlines(keepends=True)

    def offset(position: lsp.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line, units, index = lines[position.line], 0, 0
        while index < len(line) and units < position.character:
            units += UNITS[encoding](line[index])
            index += 1
        return sum(len(l) for l in lines[: position.line]) + index

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def edits_of(client: LanguageClient, edit: lsp.WorkspaceEdit) -> list[lsp.TextEdit]:
    return list(edit.changes[client.uri])


async def resolved(client: LanguageClient, action: lsp.CodeAction) -> lsp.CodeAction:
    """The action with its edit, fetched with codeAction/resolve as editors that support it do."""
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    return action


async def test_diagnostic_range_and_metadata_in_the_negotiated_encoding(client):
    open_document(client, ONE_FINDING)
    (diagnostic,) = await diagnostics(client)
    line = ONE_FINDING.splitlines()[1]
    start = line.index("torch.zeros")
    end = line.index(".cuda()") + len(".cuda()")
    units = UNITS[client.encoding]
    assert diagnostic.range == lsp.Range(lsp.Position(1, units(line[:start])), lsp.Position(1, units(line[:end])))
    assert diagnostic.code == "DF001" and diagnostic.source == "devfix"
    assert diagnostic.code_description.href.endswith("df001_hardcoded_cuda.py")
    assert "hard-codes the GPU" in diagnostic.message


async def test_quick_fix_equals_devfix_fix_for_that_finding(client):
    open_document(client, ONE_FINDING)
    (diagnostic,) = await diagnostics(client)
    actions = await code_actions(client, diagnostic.range)
    fix = next(action for action in actions if action.title.startswith("devfix (DF001)") and "disable" not in action.title)
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
    resolves = capabilities_of(client.profile).text_document.code_action.resolve_support is not None
    assert (fix.edit is None) == resolves  # computed on resolve where the editor supports it (not Emacs)
    fix = await resolved(client, fix)
    fixed = apply(ONE_FINDING, edits_of(client, fix.edit), client.encoding)
    assert fixed == fix_with_engine(ONE_FINDING)
    assert all(edit.new_text != fixed for edit in edits_of(client, fix.edit))  # minimal edits, not a replacement


async def test_fix_all_equals_devfix_fix(client):
    open_document(client, SEVERAL)
    found = await diagnostics(client)
    assert {d.code for d in found} >= {"DF001", "DF002"}
    actions = await code_actions(client, lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)), only=[lsp.CodeActionKind.SourceFixAll])
    (fix_all,) = actions
    assert fix_all.kind == "source.fixAll.devfix"
    if capabilities_of(client.profile).text_document.code_action.resolve_support is None:
        # an editor that cannot resolve runs fix-all as a command: listing the actions stays quick
        assert fix_all.edit is None and fix_all.command.command == "devfix.applyAutofix"
        await client.workspace_execute_command_async(lsp.ExecuteCommandParams(fix_all.command.command, fix_all.command.arguments))
        (edit,) = client.applied_edits
    else:
        edit = (await resolved(client, fix_all)).edit
    assert apply(SEVERAL, edits_of(client, edit), client.encoding) == fix_with_engine(SEVERAL)


async def test_disable_for_this_line_suppresses_on_the_next_analysis(client):
    open_document(client, ONE_FINDING)
    (diagnostic,) = await diagnostics(client)
    actions = await code_actions(client, diagnostic.range)
    disable = next(action for action in actions if action.title == "devfix (DF001): disable for this line")
    text = apply(ONE_FINDING, edits_of(client, disable.edit), client.encoding)
    assert text.splitlines()[1].endswith("  # devfix: ignore[DF001]")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=client.uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))
    assert await diagnostics(client) == []


async def test_incremental_edits_syntax_error_then_fix(client):
    open_document(client, ONE_FINDING)
    await diagnostics(client)
    line = ONE_FINDING.splitlines()[2]
    units = UNITS[client.encoding]
    broken = lsp.TextDocumentContentChangePartial(
        range=lsp.Range(lsp.Position(2, units(line)), lsp.Position(2, units(line))), text=" +")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=client.uri, version=2), content_changes=[broken]))
    assert await diagnostics(client) == []  # no stale findings while the document does not parse
    assert await code_actions(client, lsp.Range(lsp.Position(1, 0), lsp.Position(1, 5))) == []
    repaired = lsp.TextDocumentContentChangePartial(
        range=lsp.Range(lsp.Position(2, units(line)), lsp.Position(2, units(line) + 2)), text="")
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=client.uri, version=3), content_changes=[repaired]))
    (diagnostic,) = await diagnostics(client)
    actions = await code_actions(client, diagnostic.range)
    fix = await resolved(client, next(action for action in actions if action.is_preferred))
    assert apply(ONE_FINDING, edits_of(client, fix.edit), client.encoding) == fix_with_engine(ONE_FINDING)


async def test_an_action_offered_before_a_change_resolves_to_no_edit(client):
    open_document(client, ONE_FINDING)
    (diagnostic,) = await diagnostics(client)
    fix = next(action for action in await code_actions(client, diagnostic.range) if action.is_preferred)
    if fix.edit is not None:  # Emacs: no resolve, so the edit came with the action, for version 1
        assert apply(ONE_FINDING, edits_of(client, fix.edit), client.encoding) == fix_with_engine(ONE_FINDING)
        return
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=client.uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="import torch\n" + ONE_FINDING)]))
    stale = await client.code_action_resolve_async(fix)
    assert stale.edit is not None and list(stale.edit.changes[client.uri]) == []


async def test_apply_autofix_command_sends_the_fix_all_edit(client):
    open_document(client, SEVERAL)
    await diagnostics(client)
    await client.workspace_execute_command_async(lsp.ExecuteCommandParams(command="devfix.applyAutofix", arguments=[client.uri]))
    (edit,) = client.applied_edits
    assert apply(SEVERAL, edits_of(client, edit), client.encoding) == fix_with_engine(SEVERAL)


async def test_non_python_documents_are_ignored(client):
    open_document(client, "x.cuda()\n", language_id="markdown", uri="file:///tmp/devfix-lsp-tests/notes.md")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri="file:///tmp/devfix-lsp-tests/notes.md"),
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 1)), context=lsp.CodeActionContext(diagnostics=[])))
    assert not actions


async def test_a_py_file_opened_with_an_empty_language_id_is_python(client):
    """Some clients send `languageId: ""`: the URI's extension decides then."""
    open_document(client, ONE_FINDING, language_id="")
    (diagnostic,) = await asyncio.wait_for(diagnostics(client), timeout=30)
    assert diagnostic.code == "DF001"
