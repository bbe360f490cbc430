"""The analysis commands collect garbage less often (`devfix.gc_settings`); other code keeps
Python's defaults."""

from __future__ import annotations

import gc

import pytest

from devfix import gc_settings
from devfix.workers import start_worker
from tests.cli_runner import invoke_devfix


@pytest.fixture
def default_thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_check_runs_under_the_analysis_thresholds(tmp_path, default_thresholds):
    (tmp_path / "train.py").write_text("import torch\nx = torch.zeros(3)\n")
    result = invoke_devfix(["check", "--no-cache", "-j", "1", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert gc.get_threshold() == gc_settings.ANALYSIS_THRESHOLDS


def test_a_worker_sets_them_itself(monkeypatch, default_thresholds):
    """A spawned worker does not inherit its parent's thresholds."""
    monkeypatch.setattr("devfix.workers.die_with_parent", lambda parent: None)
    monkeypatch.setattr("devfix.workers._in_worker", False)  # restored afterwards: this process is no worker
    start_worker(0)
    assert gc.get_threshold() == gc_settings.ANALYSIS_THRESHOLDS


def test_importing_devfix_changes_nothing(default_thresholds):
    import devfix.api  # noqa: F401 -- a library user's import
    import devfix.engine  # noqa: F401

    assert gc.get_threshold() == (700, 10, 10)
