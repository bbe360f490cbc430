"""The code examples of the four source articles (copied into tests/seeds/): devfix fixes the buggy
ones and leaves the correct ones byte-identical."""

from __future__ import annotations

import pytest

from tests.conftest import REPO, run_devfix

SEEDS = REPO / "tests" / "seeds"
BUGGY = {
    "seed000_example1.py": {"DF001"},  # model.to('cuda') / input.to('cuda'): fails without a GPU
    "seed000_example2.py": {"DF001"},  # .to('cuda') in the loop, same
    "seed003_example1.py": {"DF019"},  # the Parameter ignores the layer's device argument
}
CORRECT = sorted(path.name for path in SEEDS.glob("*.py") if path.name not in BUGGY)


def test_all_twelve_examples_are_covered():
    assert len(CORRECT) + len(BUGGY) == 12


@pytest.mark.parametrize("name", CORRECT)
def test_correct_examples_stay_byte_identical(name):
    result = run_devfix((SEEDS / name).read_bytes(), name)
    assert result.fixed == result.source
    assert not [finding for finding in result.findings if finding.fixable]


@pytest.mark.parametrize("name", sorted(BUGGY))
def test_buggy_examples_are_fixed_by_the_expected_rules(name):
    result = run_devfix((SEEDS / name).read_bytes(), name)
    assert result.changed
    assert {finding.code for finding in result.applied} == BUGGY[name]
