"""What a parent that forks a child per program run imports first, so that each child inherits it
instead of importing it again: torch; the part of torch a training program loads with its first
optimizer (`torch._dynamo`, about 2 s); and the host libraries the program imports (scikit-learn,
SciPy, matplotlib, seaborn: up to 2.5 s each). Run after run, those imports were most of what a
small program's run cost.

Only what neither asks for the device at import time nor starts a thread: a child sets its machine
up (simulated CUDA, the CPU) after the fork, and threads do not survive one. On a CUDA build torch's
compiler stack is left to the child (CUDA does not survive fork either: see `execution._cuda_build`).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable
from pathlib import Path

HOST_LIBRARIES = frozenset({"numpy", "scipy", "pandas", "sklearn", "matplotlib", "seaborn"})
MAX_SCANNED_BYTES = 1_000_000  # a program's own file past this is not read for its imports


def preload_for(folder: Path) -> None:
    """Import, in this process, what the program whose files lie in `folder` would import."""
    try:
        import torch
    except ImportError:  # the program meets it where it imports torch, and reports it
        return
    if torch.version.cuda is None:
        import torch._dynamo  # noqa: F401
    for name in sorted(host_libraries_imported(folder.glob("*.py"))):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - not a module (a name it defines), or the child meets the error itself
            pass


def host_libraries_imported(paths: Iterable[Path]) -> set[str]:
    """The modules of `HOST_LIBRARIES` (`sklearn.metrics`, `matplotlib.pyplot`) that these files
    import anywhere in their code."""
    found: set[str] = set()
    for path in paths:
        try:
            if path.stat().st_size > MAX_SCANNED_BYTES:
                continue
            tree = ast.parse(path.read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)  # and what it names, which may be a module (`from sklearn import metrics`)
                found.update(f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")
    return {name for name in found if name.split(".")[0] in HOST_LIBRARIES}
