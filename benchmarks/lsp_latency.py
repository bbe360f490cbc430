"""Time from a change to diagnostics for a 1,000-line file, end to end: `devfix lsp` runs as a
subprocess and pygls's client drives it like VS Code does (push diagnostics, incremental edits).

Each edit changes one line inside a function or a method, as typing does. Two rhythms:
  pauses  an edit, then a wait until the full analysis has settled (isolated edits);
  typing  an edit every 0.6 s, so the full analysis of the previous edit is still running.
For every edit it reports the time to the first diagnostics of that version (target: 100 ms) and
whether the full analysis later corrected them.

Then quick fixes: once the diagnostics of the opened file are in, for findings spread over the
file, the time to answer `textDocument/codeAction` at the finding and to resolve its quick fix
into an edit, as VS Code and Neovim 0.11 ask for them (target: 150 ms); and the same without
codeAction/resolve (eglot 1.9: every edit, fix-all included, is computed before the actions are
answered). The same for timm's `hiera.py` (the file issue 10 names, from the wheel
`check_vs_parse.py` downloads) with a 4-line function holding a `.cuda()` and a `.numpy()` appended.

Run: python benchmarks/lsp_latency.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

URI = "file:///tmp/devfix-benchmark/train.py"
BLOCK = '''

def step_{index}(model, batch, device):
    inputs, labels = batch
    inputs, labels = inputs.to(device), labels.to(device)
    logits = model(inputs)
    loss = nn.functional.cross_entropy(logits, labels)
    return loss, logits.argmax(1).numpy()


class Scale{index}(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.linear = nn.Linear(size, size)
        self.scale = torch.ones(size)

    def forward(self, x):
        return self.linear(x) * self.scale
'''
EDITED_LINES = ("    loss = nn.functional.cross_entropy(logits, labels)", "        return self.linear(x) * self.scale")


def source(lines: int = 1000) -> str:
    text = "import torch\nfrom torch import nn\n"
    index = 0
    while text.count("\n") < lines:
        text += BLOCK.format(index=index)
        index += 1
    return text


class Session:
    """The server, the text the client holds, and every diagnostics notification with its time."""

    def __init__(self, text: str, capabilities: lsp.ClientCapabilities | None = None) -> None:
        self.client = LanguageClient("devfix-benchmark", "1")
        self.text = text
        self.version = 1
        self.received: list[tuple[float, int | None, int]] = []  # (time, version, diagnostics)
        self.arrived = asyncio.Event()
        self.latest: list[lsp.Diagnostic] = []
        self.capabilities = capabilities or lsp.ClientCapabilities()

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            self.received.append((time.perf_counter(), params.version, len(params.diagnostics)))
            self.latest = list(params.diagnostics)
            self.arrived.set()

    async def start(self) -> float:
        await self.client.start_io(sys.executable, "-m", "devfix", "lsp")
        await self.client.initialize_async(lsp.InitializeParams(capabilities=self.capabilities))
        self.client.initialized(lsp.InitializedParams())
        started = time.perf_counter()
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=URI, language_id="python", version=1, text=self.text)))
        return await self.first_diagnostics(1) - started

    async def edit(self, line: int, new_line: str) -> float:
        """Replace one line (an incremental change) and return the time to its diagnostics."""
        lines = self.text.split("\n")
        old = lines[line]
        lines[line] = new_line
        self.text = "\n".join(lines)
        self.version += 1
        started = time.perf_counter()
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=URI, version=self.version),
            content_changes=[lsp.TextDocumentContentChangePartial(
                range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, len(old))), text=new_line)]))
        return await self.first_diagnostics(self.version) - started

    async def first_diagnostics(self, version: int) -> float:
        while True:
            for received, received_version, _ in self.received:
                if received_version == version:
                    return received
            self.arrived.clear()
            await self.arrived.wait()

    def corrected(self, version: int) -> bool:
        return len([entry for entry in self.received if entry[1] == version]) > 1

    async def quick_fix(self, diagnostic: lsp.Diagnostic) -> float:
        """Ask for the actions at `diagnostic` and resolve its quick fix; the seconds it took."""
        started = time.perf_counter()
        actions = await self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=URI), range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic])))
        fix = next(action for action in actions or [] if action.kind == lsp.CodeActionKind.QuickFix and "disable" not in action.title)
        resolved = await self.client.code_action_resolve_async(fix)
        assert resolved.edit is not None and resolved.edit.changes
        return time.perf_counter() - started

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


async def run(rhythm: str, edits: int) -> None:
    session = Session(source())
    opened = await session.start()
    lines = session.text.split("\n")
    targets = [index for index, line in enumerate(lines) if line in EDITED_LINES]
    await asyncio.sleep(0.5)
    latencies, corrected = [], 0
    for number in range(edits):
        line = targets[(number * 7) % len(targets)]
        latencies.append(await session.edit(line, lines[line] + f"  # edit {number}"))
        await asyncio.sleep(3.0 if rhythm == "pauses" else 0.6)
        corrected += session.corrected(session.version)
    await asyncio.sleep(3.0)
    await session.stop()
    print(f"{rhythm:>6}: {len(lines)} lines; open (full analysis) {opened * 1000:.0f} ms; "
          f"after an edit: median {statistics.median(latencies) * 1000:.0f} ms, "
          f"max {max(latencies) * 1000:.0f} ms over {edits} edits (target 100 ms); "
          f"{corrected} corrected by the full analysis")


def eglot_1_9() -> lsp.ClientCapabilities:
    """What eglot 1.9 (Emacs 28) sends: UTF-16, no code-action resolve (as the server tests use it)."""
    import json

    from lsprotocol.converters import get_converter

    data = json.loads((Path(__file__).resolve().parents[1] / "tests" / "lsp" / "client_capabilities" / "eglot-1.9.json").read_text())
    data.pop("_source")
    return get_converter().structure(data, lsp.ClientCapabilities)


RESOLVES_EDITS = lsp.ClientCapabilities(text_document=lsp.TextDocumentClientCapabilities(
    code_action=lsp.CodeActionClientCapabilities(resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]))))


HIERA_BUG = "\n\ndef to_numpy_on_gpu(x):\n    y = x.cuda()\n    return y.numpy()\n"


def hiera_with_a_bug() -> str:
    from check_vs_parse import ONE_FILE, sources  # the pinned timm wheel, downloaded once

    cache = Path.home() / ".cache" / "devfix-bench"
    return (sources("timm==1.0.15", cache) / ONE_FILE).read_text(encoding="utf-8") + HIERA_BUG


async def quick_fixes(count: int, capabilities: lsp.ClientCapabilities, editors: str, text: str | None = None) -> None:
    session = Session(text or source(), capabilities)
    opened = await session.start()
    await asyncio.sleep(3.0)  # the full analysis has replaced any provisional diagnostics
    diagnostics = session.latest
    fixable = [diagnostic for diagnostic in diagnostics if diagnostic.code in ("DF008", "DF014", "DF016")]
    fixable = [fixable[index % len(fixable)] for index in range(max(count, len(fixable)))]  # one finding: asked again
    chosen = fixable[:: max(1, len(fixable) // count)][:count]
    latencies = [await session.quick_fix(diagnostic) for diagnostic in chosen]
    await session.stop()
    print(f"{editors}: open (full analysis) {opened * 1000:.0f} ms, {len(diagnostics)} findings; code action + resolve "
          f"(target 150 ms): {' '.join(f'{latency * 1000:.0f}' for latency in latencies)} ms "
          f"(median {statistics.median(latencies) * 1000:.0f}, max {max(latencies) * 1000:.0f}); "
          "a finding asked for again is answered from the fixes of that version")


def main() -> None:
    asyncio.run(run("pauses", 8))
    asyncio.run(run("typing", 20))
    asyncio.run(quick_fixes(8, RESOLVES_EDITS, "fixes resolved on demand (VS Code, Neovim 0.11)"))
    asyncio.run(quick_fixes(8, eglot_1_9(), "every edit sent with the actions (eglot 1.9)"))
    asyncio.run(quick_fixes(8, RESOLVES_EDITS, "hiera.py with a bug, fixes resolved on demand", hiera_with_a_bug()))
    asyncio.run(quick_fixes(8, eglot_1_9(), "hiera.py with a bug, eglot 1.9", hiera_with_a_bug()))


if __name__ == "__main__":
    main()
