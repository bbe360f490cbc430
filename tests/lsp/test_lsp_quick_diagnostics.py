"""After a change the server sends quick diagnostics from the edited statements, then the full
analysis where it differs (push), or asks a pulling client to pull again (refresh)."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.codemods.base import FixPolicy
from devfix.engine import process

URI = "file:///tmp/devfix-lsp-tests/long_train.py"
PADDING = "".join(f"\n\ndef unrelated_{index}(values):\n    return [value + {index} for value in values]\n" for index in range(40))
FUNCTIONS = (
    "import torch\nfrom torch import nn\n\n\n"
    "def step(model, batch, device):\n"
    "    inputs, labels = batch\n"
    "    inputs, labels = inputs.to(device), labels.to(device)\n"
    "    logits = model(inputs)\n"
    "    return nn.functional.cross_entropy(logits, labels), logits.argmax(1)\n" + PADDING
)
# Removing `.cuda()` from `model = ...` also clears the finding on `criterion`, a statement that
# neither reads `model` nor is read by it: the quick answer keeps it, the full analysis drops it.
SCRIPT = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
    "data = TensorDataset(torch.randn(40, 8), torch.randint(0, 3, (40,)))\n"
    "loader = DataLoader(data, batch_size=10)\n"
    "model = nn.Linear(8, 3).cuda()\n"
    "criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))\n"
    "for features, labels in loader:\n"
    "    loss = criterion(model(features), labels)\n" + PADDING
)


def engine_findings(text: str) -> list[tuple[str, int, str]]:
    result = process(text.encode(), "long_train.py", ALL_RULES, ProjectIndex(), FixPolicy())
    return sorted((finding.code, finding.start.line - 1, finding.message) for finding in result.findings)


def shown(diagnostics) -> list[tuple[str, int, str]]:
    return sorted((diagnostic.code, diagnostic.range.start.line, diagnostic.message) for diagnostic in diagnostics)


def change(client: LanguageClient, version: int, line: int, old: str, new: str) -> None:
    """An incremental edit replacing `old` (which starts line `line`) by `new` (ASCII text)."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=URI, version=version),
        content_changes=[lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, len(old))), text=new)]))


def line_of(text: str, needle: str) -> int:
    return next(index for index, line in enumerate(text.splitlines()) if needle in line)


def edited(text: str, old: str, new: str) -> tuple[str, int]:
    return text.replace(old, new, 1), line_of(text, old.rstrip("\n"))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "devfix", "lsp"]))
async def push_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=client_capabilities("visual-studio-code@v1.65.2")))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "devfix", "lsp"]))
async def refreshing_pull_client(lsp_client: LanguageClient):
    capabilities = client_capabilities("neovim@v0.11.0")
    capabilities.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "devfix", "lsp"]))
async def pull_client(lsp_client: LanguageClient):
    """Neovim 0.11: pulls diagnostics, does not accept workspace/diagnostic/refresh."""
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=client_capabilities("neovim@v0.11.0")))
    yield
    await lsp_client.shutdown_session()


async def publish_of(client: LanguageClient, version: int) -> lsp.PublishDiagnosticsParams:
    """The next diagnostics published for `version` (within 30 s)."""
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 30)
        if params.version == version:
            return params


def open_document(client: LanguageClient, text: str) -> None:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=URI, language_id="python", version=1, text=text)))


async def pull(client: LanguageClient) -> list[lsp.Diagnostic]:
    report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=URI)))
    return list(report.items)


@pytest.mark.asyncio
async def test_the_first_diagnostics_after_an_edit_in_a_function_are_right(push_client):
    open_document(push_client, FUNCTIONS)
    assert shown((await publish_of(push_client, 1)).diagnostics) == engine_findings(FUNCTIONS) == []
    text, line = edited(FUNCTIONS, "logits.argmax(1)\n", "logits.argmax(1).numpy()\n")
    change(push_client, 2, line, FUNCTIONS.splitlines()[line], text.splitlines()[line])
    first = await publish_of(push_client, 2)
    assert [diagnostic.code for diagnostic in first.diagnostics] == ["DF008"]
    assert shown(first.diagnostics) == engine_findings(text)


@pytest.mark.asyncio
async def test_the_full_analysis_corrects_a_quick_answer(push_client):
    open_document(push_client, SCRIPT)
    assert shown((await publish_of(push_client, 1)).diagnostics) == engine_findings(SCRIPT)
    text, line = edited(SCRIPT, "nn.Linear(8, 3).cuda()", "nn.Linear(8, 3)")
    change(push_client, 2, line, SCRIPT.splitlines()[line], text.splitlines()[line])
    quick = await publish_of(push_client, 2)
    corrected = await publish_of(push_client, 2)
    assert shown(corrected.diagnostics) == engine_findings(text)
    assert shown(quick.diagnostics) != shown(corrected.diagnostics)
    assert "`criterion` is called with tensors on a device" in " ".join(d.message for d in quick.diagnostics)


@pytest.mark.asyncio
async def test_a_pulling_client_gets_the_quick_answer_then_a_refresh(refreshing_pull_client):
    client = refreshing_pull_client
    open_document(client, SCRIPT)
    assert shown(await pull(client)) == engine_findings(SCRIPT)
    text, line = edited(SCRIPT, "nn.Linear(8, 3).cuda()", "nn.Linear(8, 3)")
    change(client, 2, line, SCRIPT.splitlines()[line], text.splitlines()[line])
    quick = await pull(client)
    assert shown(quick) != engine_findings(text)
    for _ in range(400):  # the full analysis runs after a pause: wait up to 20 s for its refresh
        if client.diagnostic_refresh_count:
            break
        await asyncio.sleep(0.05)
    assert client.diagnostic_refresh_count == 1  # counted by pytest-lsp's client
    assert shown(await pull(client)) == engine_findings(text)


@pytest.mark.asyncio
async def test_a_client_without_refresh_gets_the_full_analysis_at_once(pull_client):
    """Neovim 0.11 pulls again neither on save nor on entering the buffer: a provisional answer
    would stay on screen, so the first pull after a change is answered from the full analysis."""
    open_document(pull_client, SCRIPT)
    assert shown(await pull(pull_client)) == engine_findings(SCRIPT)
    text, line = edited(SCRIPT, "nn.Linear(8, 3).cuda()", "nn.Linear(8, 3)")
    change(pull_client, 2, line, SCRIPT.splitlines()[line], text.splitlines()[line])
    assert shown(await pull(pull_client)) == engine_findings(text)
    assert pull_client.diagnostic_refresh_count == 0
