"""Every fixture: devfix turns before.py into after.py byte for byte, and after.py is a fixed point."""

from __future__ import annotations

import pytest

from devfix.fixture_cases import discover_cases
from tests.conftest import REPO, run_devfix

CASES = discover_cases(REPO / "fixtures")


def test_every_rule_has_at_least_four_cases_including_a_clean_one():
    from devfix.codemods import ALL_RULES

    for rule in (rule for rule in ALL_RULES if not rule.REPORT_ONLY):
        cases = [case for case in CASES if case.rule_code == rule.CODE]
        assert len(cases) >= 4, rule.CODE
        assert any(case.is_clean for case in cases), rule.CODE


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_before_becomes_after(case):
    result = run_devfix(case.before.read_bytes(), str(case.before))
    assert result.error is None
    assert result.fixed == case.after.read_bytes()
    if case.is_clean:
        assert result.fixed == result.source
        assert not [finding for finding in result.findings if finding.code == case.rule_code]
    else:
        assert case.rule_code in {finding.code for finding in result.applied}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_after_is_a_fixed_point(case):
    result = run_devfix(case.after.read_bytes(), str(case.after))
    assert result.error is None
    assert result.fixed == result.source
    assert not [finding for finding in result.findings if finding.fixable]


HELPERS = [(case, helper) for case in CASES for helper in case.helpers]


@pytest.mark.parametrize("case, helper", HELPERS, ids=[f"{case.name}/{helper.relative_to(case.directory)}" for case, helper in HELPERS])
def test_modules_beside_a_case_stay_byte_identical(case, helper):
    """Library modules and stand-ins a case imports: no rule may rewrite them (a device preamble in a
    library module, `map_location` on a dataset's `torch.load`, ...); a diagnostic is allowed."""
    result = run_devfix(helper.read_bytes(), str(helper))
    assert result.error is None
    assert result.fixed == result.source
    assert not [finding for finding in result.findings if finding.fixable]
