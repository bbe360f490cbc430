"""`devfix run --fix -m pytest ...` and `-m package.module`: the program is a module run as
`python -m` runs it; under pytest a device error is a failing test's, and proof is every test
ending as it did on the CPU before the fix."""

from __future__ import annotations

import os
import shutil

import pytest

from devfix.program import Program
from devfix.run_fix import fix_by_running
from tests.cli_runner import invoke_devfix
from tests.conftest import REPO

os.environ.setdefault("OMP_NUM_THREADS", "1")
PROJECT = REPO / "tests" / "run_fix" / "pytest_project"
FIXED_FACTORY = "    ranks = torch.arange(logits.shape[-1], device=logits.device)\n"
FIXED_BUFFER = '        self.register_buffer("mean", torch.zeros(features), persistent=False)\n'


@pytest.fixture
def project(tmp_path, monkeypatch):
    target = tmp_path / "project"
    shutil.copytree(PROJECT, target)
    monkeypatch.chdir(target)
    return target


def test_the_suite_under_pytest_fixes_the_library_code_its_tests_exercise(project):
    tests_before = (project / "checks" / "check_layers.py").read_text()
    shown = invoke_devfix(["run", "--fix", "--write", "-m", "pytest", "checks/check_layers.py", "-q", "-p", "no:cacheprovider"])
    assert shown.exit_code == 0, shown.stderr
    assert "1 failed, 2 passed" in shown.stdout, shown.stdout  # pytest's own report: the program's output
    assert "round 1: layers.py:14: RuntimeError: Expected all tensors to be on the same device" in shown.stderr
    assert "round 2: layers.py:20: RuntimeError: indices should be either on cpu" in shown.stderr
    assert "its tests end as the original's did" in shown.stderr
    library = (project / "shapes" / "layers.py").read_text()
    assert FIXED_BUFFER in library and FIXED_FACTORY in library
    assert "device = torch.device" not in library  # a library module gets no module-level device
    assert (project / "checks" / "check_layers.py").read_text() == tests_before


def test_each_test_outcome_is_recorded_and_a_known_failure_is_no_device_error(project):
    run = fix_by_running(Program.of_module("pytest"), ["checks/check_layers.py", "-q", "-p", "no:cacheprovider"], timeout=120)
    assert run.proven, run.failures
    outcomes = dict(run.final_cuda.outcomes)
    assert outcomes == {
        "checks/check_layers.py::test_standardize_keeps_shape": "passed",
        "checks/check_layers.py::test_top_scores": "passed",
        "checks/check_layers.py::test_a_known_failure_unrelated_to_devices": "failed",
    }
    assert run.final_cpu.outcomes == run.final_cuda.outcomes == run.original_cpu.outcomes


def test_a_package_module_runs_as_python_dash_m_runs_it(project):
    shown = invoke_devfix(["run", "--fix", "-m", "shapes.demo"])
    assert shown.exit_code == 1, shown.stderr  # proven, not written
    assert shown.stdout == "top [1.0, 0.0]\n"
    assert "+" + FIXED_FACTORY in shown.stderr and "it prints what the original printed" in shown.stderr


def test_module_mode_needs_fix_and_a_script_needs_a_name(project):
    plain = invoke_devfix(["run", "-m", "shapes.demo"])
    assert plain.exit_code == 2 and "-m MODULE runs only with --fix" in plain.stderr
    nothing = invoke_devfix(["run", "--fix"])
    assert nothing.exit_code == 2 and "give the SCRIPT to run" in nothing.stderr
