"""Safe fixes never change a model's state_dict keys: old checkpoints keep loading."""

from __future__ import annotations

import os

import pytest

from devfix.codemods import rule_by_code
from devfix.execution import run_program
from devfix.findings import Safety
from devfix.fixture_cases import discover_cases
from tests.conftest import REPO

os.environ.setdefault("OMP_NUM_THREADS", "1")
CASES = [
    case
    for case in discover_cases(REPO / "fixtures")
    if not case.is_clean and rule_by_code(case.rule_code).SAFETY is Safety.SAFE
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_safe_fix_keeps_state_dict_keys(case):
    before = run_program(case.before, "collapsed")
    after = run_program(case.after, "collapsed")
    assert before.ok and after.ok, (before.describe(), after.describe())
    shared = set(before.state_dict_keys) & set(after.state_dict_keys)
    for name in shared:
        assert before.state_dict_keys[name] == after.state_dict_keys[name], name


def test_unsafe_container_fix_says_it_adds_keys():
    case = next(c for c in discover_cases(REPO / "fixtures") if c.name == "DF015-module-container/list-comprehension-heads")
    before = run_program(case.before, "collapsed").state_dict_keys["model"]
    after = run_program(case.after, "collapsed").state_dict_keys["model"]
    assert before == [] and after == ["heads.0.bias", "heads.0.weight", "heads.1.bias", "heads.1.weight"]
    assert rule_by_code("DF015").SAFETY is Safety.UNSAFE
