"""A pytest plugin that `devfix run --fix -m pytest` loads (`-p devfix.pytest_outcomes`): pytest
catches each test's exception, so the round learns of a device error, and of every test's outcome,
from here.
"""

from __future__ import annotations

OUTCOMES: dict[str, str] = {}  # node id -> "passed", "failed" or "skipped" (the worst of its phases)
ERRORS: list[BaseException] = []  # the exceptions of failing tests, in the order they failed
_RANK = {"passed": 0, "skipped": 1, "failed": 2}


def pytest_runtest_logreport(report) -> None:
    earlier = OUTCOMES.get(report.nodeid, "passed")
    OUTCOMES[report.nodeid] = max(earlier, report.outcome, key=_RANK.__getitem__)


def pytest_exception_interact(node, call, report) -> None:
    """Called for a test's real failure (not for a skip or an expected failure)."""
    if call is not None and call.excinfo is not None:
        ERRORS.append(call.excinfo.value)
