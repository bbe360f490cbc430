"""DF027's refusals and reports that a fixture cannot show (a report-only finding fails on a GPU
before and after; a refusal leaves correct code as it is)."""

from __future__ import annotations

import pytest

from devfix.codemods import DistributionAttribute
from tests.conftest import run_devfix

SOURCE = """import torch
import torch.nn as nn
from torch.distributions import Independent, Normal


class Model(nn.Module):
    def __init__(self, z_dim=2, sigma=1.0):
        super().__init__()
        self.fc = nn.Linear(z_dim, z_dim)
        self.prior = {value}

    def forward(self, z):
        return self.prior.log_prob(self.fc(z)).sum()
"""


def check(value: str, after: str = ""):
    source = SOURCE.format(value=value) + after
    return source, run_devfix(source, rules=[DistributionAttribute])


def test_tensor_arguments_become_buffers_and_the_attribute_a_property():
    _, result = check("Normal(torch.zeros(z_dim), scale=torch.ones(z_dim) * sigma)")
    fixed = result.fixed.decode()
    assert 'self.register_buffer("prior_loc", torch.zeros(z_dim), persistent=False)\n' in fixed
    assert 'self.register_buffer("prior_scale", torch.ones(z_dim) * sigma, persistent=False)\n' in fixed
    assert "    @property\n    def prior(self):\n        return Normal(self.prior_loc, scale=self.prior_scale)\n" in fixed


@pytest.mark.parametrize("value, after", [
    ("Normal(torch.zeros(z_dim, device='cuda'), torch.ones(z_dim, device='cuda'))", ""),  # placed on purpose
    ("Normal(torch.zeros(z_dim).to(self.fc.weight.device), torch.ones(z_dim))", ""),  # moved
    ("Normal(0.0, sigma)", ""),  # no tensor
    ("Normal(torch.zeros(z_dim), torch.ones(z_dim))", "\nmodel = Model()\nmodel.prior = None\n"),  # assigned again
    ("Normal(torch.zeros(z_dim), torch.ones(z_dim))", "\nprior_loc = 3\n"),  # the buffer's name is taken
    ("Independent(Normal(torch.zeros(z_dim), torch.ones(z_dim)), 1)", ""),  # around another: not followed
])
def test_distributions_devfix_must_not_rebuild_are_left_alone(value, after):
    source, result = check(value, after)
    assert result.fixed.decode() == source
    assert all(finding.fix_safety is None for finding in result.findings)


def test_a_cpu_tensor_beside_an_argument_devfix_cannot_keep_is_reported_without_a_fix():
    """`sigma` may be anything: the property could not rebuild it."""
    source, result = check("Normal(torch.zeros(z_dim), sigma)")
    assert result.fixed.decode() == source
    assert [finding.code for finding in result.findings] == ["DF027"]
    assert result.findings[0].fix_safety is None


CHOOSER = """import torch
from torch import nn
from torch.distributions import Categorical


class Chooser(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(3, 2)
        self.selector = Categorical(torch.ones(3) / 3)

    def pick(self, indices):
        return [int(i) for i in indices]

    def forward(self, x):
        idx = self.selector.sample((4,))
        return {use}
"""


@pytest.mark.parametrize("use, fixed", [
    ("self.pick(idx)", False),  # a host choice: the CPU generator's draws stay
    ("self.embed(idx) + x", True),  # handed to a layer: it meets the module's device
    ("x + idx", True),
])
def test_draws_that_only_choose_on_the_host_keep_their_distribution(use, fixed):
    source = CHOOSER.format(use=use)
    result = run_devfix(source, rules=[DistributionAttribute])
    assert (result.fixed.decode() != source) is fixed
