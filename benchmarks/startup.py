"""Start-up: `devfix --version` and `devfix check` of one small file with nothing to find, as a
pre-commit hook or an editor starts them (a fresh process each time), best of 7 runs.

Measured as installed: `pip install` compiles every module to bytecode, so the runs here may write
and read `__pycache__` even where the environment sets PYTHONDONTWRITEBYTECODE (the first run
warms it). Without bytecode every start would compile devfix's modules again (about 0.1 s more).

    python benchmarks/startup.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL_FILE = "import torch\nfrom torch import nn\n\nlayer = nn.Linear(4, 2)\nprint(layer(torch.zeros(1, 4)).shape)\n"


def best_of(command: list[str], runs: int = 7) -> float:
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False, env=env)
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
