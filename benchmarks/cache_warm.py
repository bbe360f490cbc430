"""A second `devfix check` of an unchanged tree against the time to read that tree.

For each pinned project (the wheels `check_vs_parse.py` downloads), in fresh processes:
  - the floor: a process that reads every `.py` file of the tree and hashes it (sha256);
  - `devfix check` with an empty cache (cold), then again (warm), with its default workers.
Prints warm / floor (target: at most 3x) and cold / warm. The cache lives in a temporary folder
(the run's working directory), so nothing is left in the tree.

    python benchmarks/cache_warm.py [--cache DIR] [NAME==VERSION ...]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_vs_parse import PROJECTS, sources  # noqa: E402 - the same pinned trees

READ_TREE = (
    "import hashlib, pathlib, sys\n"
    "for path in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')): hashlib.sha256(path.read_bytes()).hexdigest()\n"
)


def seconds(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def measure(spec: str, cache: Path) -> None:
    tree = sources(spec, cache)
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        floor = min(seconds([sys.executable, "-c", READ_TREE, str(tree)], workdir) for _ in range(3))
        check = [sys.executable, "-m", "devfix", "check", "--isolated", str(tree)]
        cold = seconds(check, workdir)
        warm = min(seconds(check, workdir) for _ in range(3))
        shutil.rmtree(workdir / ".devfix_cache", ignore_errors=True)
    print(f"{spec:22} read+hash {floor:6.2f} s   check cold {cold:6.2f} s   warm {warm:5.2f} s   warm/read {warm / floor:4.1f}x   cold/warm {cold / warm:5.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "devfix-bench")
    parser.add_argument("projects", nargs="*", default=list(PROJECTS))
    arguments = parser.parse_args()
    for spec in arguments.projects:
        measure(spec, arguments.cache)


if __name__ == "__main__":
    main()
