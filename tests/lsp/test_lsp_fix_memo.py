"""An editor without codeAction/resolve gets every edit with each list of actions, fix-all
included; the server computes each fixed text once per version of the document, and never answers
from a version that is gone."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pygls.workspace import Workspace

from devfix.findings import Position
from devfix.fix_policy import FixPolicy
from devfix.lsp import DevfixLanguageServer

URI = "file:///tmp/devfix-lsp-tests/memo.py"
TEXT = "import torch\nx = torch.ones(2).cuda()\n"


class CountingWorker:
    """Stands in for the worker process: the fixed text is the text plus a mark, and each call is counted."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, FixPolicy]] = []

    async def fix(self, request, policy: FixPolicy) -> str:
        self.calls.append((request.text, policy))
        return request.text + f"# fixed {len(self.calls)}\n"


@pytest.fixture
def server() -> DevfixLanguageServer:
    ls = DevfixLanguageServer()
    ls.protocol._workspace = Workspace(None)
    ls.workspace.put_text_document(lsp.TextDocumentItem(uri=URI, language_id="python", version=1, text=TEXT))
    ls.background = CountingWorker()
    return ls


def change(ls: DevfixLanguageServer, version: int, text: str) -> None:
    ls.workspace.update_text_document(
        lsp.VersionedTextDocumentIdentifier(uri=URI, version=version), lsp.TextDocumentContentChangeWholeDocument(text=text))


@pytest.mark.asyncio
async def test_each_fix_is_computed_once_per_version(server):
    one = FixPolicy(apply=True, unsafe=True, only=("DF001", Position(2, 5)))
    everything = FixPolicy(apply=True)
    first = [await server.fixed_text(URI, 1, policy) for policy in (one, everything, one, everything)]
    assert first[0] == first[2] and first[1] == first[3] and first[0] != first[1]
    assert len(server.background.calls) == 2


@pytest.mark.asyncio
async def test_a_new_version_is_fixed_anew(server):
    policy = FixPolicy(apply=True)
    before = await server.fixed_text(URI, 1, policy)
    change(server, 2, TEXT + "y = 1\n")
    assert await server.fixed_text(URI, 1, policy) is None  # the version the action was offered for is gone
    after = await server.fixed_text(URI, 2, policy)
    assert after.startswith(TEXT + "y = 1\n") and after != before
    assert [text for text, _ in server.background.calls] == [TEXT, TEXT + "y = 1\n"]


@pytest.mark.asyncio
async def test_new_settings_forget_the_fixes(server):
    policy = FixPolicy(apply=True)
    await server.fixed_text(URI, 1, policy)
    server.forget()
    await server.fixed_text(URI, 1, policy)
    assert len(server.background.calls) == 2
