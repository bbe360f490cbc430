"""Multi-pattern programs: `devfix fix --unsafe-fixes` turns each into one the verifier accepts."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from devfix.fixture_cases import FixtureCase
from devfix.verify import verify_pair
from tests.cli_runner import invoke_devfix
from tests.conftest import REPO

os.environ.setdefault("OMP_NUM_THREADS", "1")
PROGRAMS = sorted(path for path in (REPO / "tests" / "programs").iterdir() if path.is_dir())


def test_at_least_ten_programs_need_several_rules_some_across_files():
    from tests.conftest import run_devfix

    def codes(program):
        return {
            finding.code
            for path in program.rglob("*.py")
            for finding in run_devfix(path.read_bytes(), str(path)).applied
        }

    assert sum(len(codes(program)) >= 2 for program in PROGRAMS) >= 10
    assert sum(len(list(program.rglob("*.py"))) > 1 for program in PROGRAMS) >= 2


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda path: path.name)
def test_fix_makes_the_program_pass_the_verifier(program, tmp_path, monkeypatch):
    before, after = tmp_path / "before", tmp_path / "after"
    shutil.copytree(program, before)
    shutil.copytree(program, after)
    monkeypatch.chdir(tmp_path)
    result = invoke_devfix(["fix", "--unsafe-fixes", "after"])
    assert result.exit_code in (0, 1), result.stderr
    fixed_codes = set(re.findall(r"DF\d{3}", "".join(line for line in result.stdout.splitlines() if line.startswith("fixed "))))
    assert fixed_codes, result.stdout
    report = verify_pair(FixtureCase(after), before / "main.py", after / "main.py")
    assert report.ok, "\n".join(report.failures) + "\n" + result.stdout
