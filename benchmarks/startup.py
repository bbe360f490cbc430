"""Start-up: `devfix --version` and `devfix check` of one small file with nothing to find, as a
pre-commit hook or an editor starts them (a fresh process each time), best of 7 runs.

    python benchmarks/startup.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL_FILE = "import torch\nfrom torch import nn\n\nlayer = nn.Linear(4, 2)\nprint(layer(torch.zeros(1, 4)).shape)\n"


def best_of(command: list[str], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    devfix = [sys.executable, "-m", "devfix"]
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.py"
        small.write_text(SMALL_FILE)
        bare = best_of([sys.executable, "-c", "pass"])
        version = best_of([*devfix, "--version"])
        check = best_of([*devfix, "check", str(small)])
    print(f"python -c pass {bare * 1000:.0f} ms   devfix --version {version * 1000:.0f} ms   devfix check <small file> {check * 1000:.0f} ms")


if __name__ == "__main__":
    main()
