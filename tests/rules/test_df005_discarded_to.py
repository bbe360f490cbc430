"""DF005's refusal that a clean fixture cannot show (the rule still reports the thrown-away copy)."""

from __future__ import annotations

import pytest

from devfix.codemods import DiscardedTo
from tests.conftest import run_devfix

UNIT_TEST = '''import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, conv_dim):
        super().__init__()
        self.fc = nn.Linear(12, conv_dim)

    def forward(self, x):
        return self.fc(x)


def check_discriminator(Discriminator):
    D = Discriminator(10){placed}
    x = torch.rand(5, 12)
    if torch.cuda.is_available():
        x.cuda()
    return D(x).shape
'''


def test_a_copy_thrown_away_before_a_model_nothing_moves_is_reported_not_assigned():
    """Udacity's face-generation unit test: assigning `x = x.cuda()` would feed a GPU tensor to the
    CPU discriminator; the thrown-away copy is what keeps the test running on a GPU."""
    source = UNIT_TEST.format(placed="")
    result = run_devfix(source, rules=[DiscardedTo])
    assert result.fixed.decode() == source
    assert [finding.fixable for finding in result.findings] == [False]
    assert "`D`, which nothing moves" in result.findings[0].message


@pytest.mark.parametrize("placed", [".cuda()", "\n    D.cuda()", ".to(torch.device('cuda'))"])
def test_a_copy_thrown_away_before_a_moved_model_is_assigned(placed):
    result = run_devfix(UNIT_TEST.format(placed=placed), rules=[DiscardedTo])
    assert "        x = x.cuda()\n" in result.fixed.decode()
