"""DF015 on heads kept in a dict comprehension: `nn.ModuleDict` takes string keys only, so the
wrap is made only where every key is proven a string; elsewhere the finding is reported unfixed."""

from __future__ import annotations

import pytest

from devfix.codemods import ModuleContainer
from tests.conftest import run_devfix

SOURCE = """import torch.nn as nn


class Heads(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.heads = {comprehension}

    def forward(self, x):
        return {{name: head(x) for name, head in self.heads.items()}}


model = Heads({given})
"""


@pytest.mark.parametrize(
    ("comprehension", "given"),
    [
        ("{name: nn.Linear(4, k) for name, k in tasks.items()}", '{"color": 3, "shape": 5}'),
        ("{name: nn.Linear(4, 2) for name in tasks}", '["color", "shape"]'),
        ("{f'head{k}': nn.Linear(4, k) for k in tasks}", "[2, 3]"),
    ],
)
def test_string_keys_make_a_module_dict(comprehension, given):
    result = run_devfix(SOURCE.format(comprehension=comprehension, given=given), rules=[ModuleContainer])
    assert f"self.heads = nn.ModuleDict({comprehension})" in result.fixed.decode()


@pytest.mark.parametrize(
    ("comprehension", "given"),
    [
        ("{k: nn.Linear(4, k) for k in tasks}", "[2, 3]"),  # int keys: ModuleDict raises
        ("{name: nn.Linear(4, k) for name, k in tasks.items()}", "load_tasks()"),  # keys unknown
        ("{name: nn.Linear(4, 2) for name in tasks.keys()}", '["color"]'),  # a list has no keys()
    ],
)
def test_keys_not_proven_strings_are_reported_unfixed(comprehension, given):
    source = SOURCE.format(comprehension=comprehension, given=given)
    result = run_devfix(source, rules=[ModuleContainer])
    assert result.fixed.decode() == source
    assert [(finding.code, finding.fixable) for finding in result.findings] == [("DF015", False)]


DEMO = """import torch.nn as nn


class ModuleListHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(10, 10)])

    def forward(self, x):
        return self.linears[0](x)


class ListHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.linears = [nn.Linear(10, 10)]
{reads}

print(len(list(ListHeads().parameters())))
"""


@pytest.mark.parametrize(("reads", "fixed"), [
    ("", False),  # d2l's demo: the list is never read, only the parameters it lacks are printed
    ("\n    def forward(self, x):\n        return self.linears[0](x)\n", True),  # read by the class itself
    ("\n\nclass Deeper(ListHeads):\n    def forward(self, x):\n        return self.linears[0](x)\n", True),  # by a subclass
    ("\n\nprint(ListHeads().linears[0])\n", True),  # from an instance
])
def test_a_container_nothing_reads_is_left_alone(reads, fixed):
    source = DEMO.format(reads=reads)
    result = run_devfix(source, rules=[ModuleContainer])
    list_heads = result.fixed.decode().split("class ListHeads")[1]
    assert ("self.linears = nn.ModuleList([nn.Linear(10, 10)])" in list_heads) is fixed


POOLING = """import torch.nn as nn


class PoolingBlock(nn.Module):
    def __init__(self, scale, channels):
        super().__init__()
        self.layers = [nn.AdaptiveAvgPool2d(scale), nn.Conv2d(channels, channels, 1)]
{registration}

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


block = PoolingBlock(2, 4)
"""


def test_a_list_whose_items_the_class_registers_itself_stays_a_list():
    """beit's pyramid pooling block keeps `self.layers` to iterate what `add_module` registered: a
    ModuleList would register each layer twice, under keys pretrained checkpoints lack."""
    for registration in ["        for i, layer in enumerate(self.layers):\n            self.add_module(str(i), layer)",
                         "        for i, layer in enumerate(self.layers):\n            setattr(self, f'layer{i}', layer)"]:
        source = POOLING.format(registration=registration)
        result = run_devfix(source, rules=[ModuleContainer])
        assert result.fixed.decode() == source and not result.findings


def test_a_list_of_unregistered_layers_becomes_a_module_list():
    fixed = run_devfix(POOLING.format(registration=""), rules=[ModuleContainer]).fixed.decode()
    assert "self.layers = nn.ModuleList([nn.AdaptiveAvgPool2d(scale), nn.Conv2d(channels, channels, 1)])" in fixed


PARAMETERS_REGISTERED_ONE_BY_ONE = """import torch
from torch import nn


class GaussianFilter(nn.Module):
    def __init__(self, spatial_dims, sigma):
        super().__init__()
        self.sigma = [nn.Parameter(torch.as_tensor(float(sigma))) for _ in range(spatial_dims)]
{registration}
    def forward(self, x):
        for s in self.sigma:
            x = x * s
        return x
"""


def test_parameters_of_a_list_the_class_registers_one_by_one_stay_in_the_list():
    """monai's `GaussianFilter`: `self.register_parameter(f"kernel_sigma_{idx}", param)` for each
    item of `self.sigma`; a ParameterList would register them again under new state-dict keys."""
    registered = PARAMETERS_REGISTERED_ONE_BY_ONE.format(registration=(
        "        for idx, param in enumerate(self.sigma):\n            self.register_parameter(f'kernel_sigma_{{idx}}', param)\n"))
    result = run_devfix(registered, rules=[ModuleContainer])
    assert result.fixed.decode() == registered and not result.findings
    unrelated = PARAMETERS_REGISTERED_ONE_BY_ONE.format(registration="        self.register_parameter('bias', None)\n")
    assert "self.sigma = nn.ParameterList([" in run_devfix(unrelated, rules=[ModuleContainer]).fixed.decode()


LIST_WRAPPED_BY_THE_CLASS = """import torch
from torch import nn


class NHiTSStack(nn.Module):
    def __init__(self, num_blocks, width):
        super().__init__()
        self.blocks_list = [nn.Linear(width, width) for _ in range(num_blocks)]
{wrap}
    def forward(self, x):
        for block in self.blocks_list:
            x = block(x)
        return x
"""


@pytest.mark.parametrize("wrap, kept", [
    ("        self.blocks = nn.ModuleList(self.blocks_list)\n", True),
    ("        self.blocks = nn.Sequential(*self.blocks_list)\n", True),
    ("", False),
])
def test_a_list_the_class_wraps_in_a_container_stays_a_list(wrap, kept):
    """darts' N-HiTS keeps `self.blocks_list` and registers its blocks through `self.blocks =
    nn.ModuleList(self.blocks_list)`; a second ModuleList would add state-dict keys."""
    source = LIST_WRAPPED_BY_THE_CLASS.format(wrap=wrap)
    fixed = run_devfix(source, rules=[ModuleContainer]).fixed.decode()
    assert (fixed == source) is kept
