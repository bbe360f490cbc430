"""Time from a change to diagnostics for a 1,000-line file, through the server's own analysis path
(the engine on the edited text; JSON-RPC adds well under a millisecond).

Run: python benchmarks/lsp_latency.py      (target: under 100 ms)
"""

from __future__ import annotations

import statistics
import time

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.codemods.base import FixPolicy
from devfix.engine import process

BLOCK = '''

def step_{index}(model, batch, device):
    inputs, labels = batch
    logits = model(inputs.to(device))
    target = torch.arange(logits.size(0))
    loss = torch.nn.functional.cross_entropy(logits, labels.to(device))
    return loss + target.float().mean() * 0.0
'''


def source(lines: int = 1000) -> str:
    text = "import torch\nfrom torch import nn\n"
    index = 0
    while text.count("\n") < lines:
        text += BLOCK.format(index=index)
        index += 1
    return text


def main() -> None:
    text = source()
    data = text.encode()
    timings = []
    for edit in range(7):
        edited = data + f"\n# edit {edit}\n".encode()
        start = time.perf_counter()
        result = process(edited, "bench.py", ALL_RULES, ProjectIndex(), FixPolicy())
        timings.append(time.perf_counter() - start)
    print(f"{text.count(chr(10))} lines, {len(result.findings)} findings, {len(ALL_RULES)} rules")
    print(f"diagnostics after a change: median {statistics.median(timings[1:]) * 1000:.0f} ms, "
          f"best {min(timings) * 1000:.0f} ms (target: 100 ms)")


if __name__ == "__main__":
    main()
