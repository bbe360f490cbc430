"""A worker that dies on one file (a native crash: libcst's parser segfaults on some inputs)
costs that file one error, never the other files' results or the run (issue 13)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import devfix.runner
from devfix.findings import FileResult
from devfix.fix_policy import FixPolicy
from devfix.runner import Job, run


def crash_on_one_file(job: Job):
    if job.path.endswith("crash.py"):
        os.kill(os.getpid(), signal.SIGKILL)  # what a segfault in native code does to the worker, minus the core dump
    return FileResult(job.path, b"x", b"x"), {}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crashing_worker_costs_only_its_file(monkeypatch, jobs):
    """With `-j1` too: the files are analysed in a worker process, never in devfix's own."""
    monkeypatch.setattr(devfix.runner, "analyse_path", crash_on_one_file)  # inherited by the forked workers
    names = ["a.py", "crash.py", "b.py", "c.py", "d.py"]
    results = run([Job(str(Path(name)), (), FixPolicy(), 1 << 20) for name in names], jobs=jobs)
    assert [result.path for result in results] == names
    assert [result.error is None for result in results] == [True, False, True, True, True]
    assert "worker process died on this file" in results[1].error


def test_a_single_file_is_analysed_in_a_worker_too(monkeypatch):
    monkeypatch.setattr(devfix.runner, "analyse_path", crash_on_one_file)
    [result] = run([Job("crash.py", (), FixPolicy(), 1 << 20)], jobs=1)
    assert "worker process died on this file" in result.error
