"""Time from a change to diagnostics for a 1,000-line file, end to end: `devfix lsp` runs as a
subprocess and pygls's client drives it like VS Code does (push diagnostics, incremental edits).

Each edit changes one line inside a function or a method, as typing does. Two rhythms:
  pauses  an edit, then a wait until the full analysis has settled (isolated edits);
  typing  an edit every 0.6 s, so the full analysis of the previous edit is still running.
For every edit it reports the time to the first diagnostics of that version (target: 100 ms) and
whether the full analysis later corrected them.

Run: python benchmarks/lsp_latency.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

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

    def __init__(self, text: str) -> None:
        self.client = LanguageClient("devfix-benchmark", "1")
        self.text = text
        self.version = 1
        self.received: list[tuple[float, int | None, int]] = []  # (time, version, diagnostics)
        self.arrived = asyncio.Event()

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            self.received.append((time.perf_counter(), params.version, len(params.diagnostics)))
            self.arrived.set()

    async def start(self) -> float:
        await self.client.start_io(sys.executable, "-m", "devfix", "lsp")
        await self.client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
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


def main() -> None:
    asyncio.run(run("pauses", 8))
    asyncio.run(run("typing", 20))


if __name__ == "__main__":
    main()
