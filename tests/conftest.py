from __future__ import annotations

import os
from pathlib import Path

import pytest

from devfix.analysis.project import ProjectIndex
from devfix.codemods import ALL_RULES
from devfix.codemods.base import FixPolicy
from devfix.engine import process
from devfix.findings import FileResult

REPO = Path(__file__).resolve().parent.parent
# one thread per process: the suite runs on two workers (pyproject's `-n 2`) whose program runs fork
# children of their own; torch reads this when it is first imported, which a test module may do
os.environ.setdefault("OMP_NUM_THREADS", "1")


def run_devfix(source: str | bytes, path: str = "snippet.py", *, fix: bool = True, unsafe: bool = True, rules=ALL_RULES) -> FileResult:
    """The engine on an in-memory file, the way `devfix fix --unsafe-fixes` runs it. A rule that
    raises fails the test (the engine would skip it and leave the code as it was)."""
    data = source.encode() if isinstance(source, str) else source
    index = ProjectIndex({str(Path(path).resolve()): data.decode("utf-8", "replace")})
    if path.endswith(".ipynb"):
        from devfix.notebook_engine import process_notebook

        result = process_notebook(data, path, rules, index, FixPolicy(apply=fix, unsafe=unsafe))
    else:
        result = process(data, path, rules, index, FixPolicy(apply=fix, unsafe=unsafe))
    assert not getattr(result, "rule_crashes", ()), result.rule_crashes
    return result


@pytest.fixture
def repo() -> Path:
    return REPO
