"""Correct programs in several styles: `devfix fix --unsafe-fixes` leaves them byte-identical, and
they run on a CUDA machine and on a CPU-only one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from devfix.execution import run_programs
from tests.conftest import REPO, run_devfix

os.environ.setdefault("OMP_NUM_THREADS", "1")
PROGRAMS = sorted((REPO / "tests" / "clean_programs").glob("*.py"))


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda path: path.name)
def test_correct_program_is_left_alone(program):
    result = run_devfix(program.read_bytes(), program.name)
    assert result.fixed == result.source
    assert not [finding for finding in result.findings if finding.fixable]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda path: path.name)
def test_correct_program_runs_everywhere(program, tmp_path):
    """Each machine runs its own copy: the runs overlap, and a program may write files beside it."""
    copies = []
    for machine in ("sim", "cpu"):
        (tmp_path / machine).mkdir()
        copies.append((Path(shutil.copy(program, tmp_path / machine / program.name)), machine))
    for outcome in run_programs(copies, jobs=2):
        assert outcome.ok, outcome.describe()
