"""DF018: a layer built in a method; a lazy one, built on the first call, goes where its input is."""

from __future__ import annotations

import pytest

from devfix.codemods import ModuleInForward
from tests.conftest import run_devfix

HEAD = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body = nn.Linear(4, 4)\n        self.head = None\n\n"


def run(forward: str):
    return run_devfix(HEAD + forward, rules=[ModuleInForward])


@pytest.mark.parametrize("given", ["h", "x"])
def test_a_lazy_layer_goes_where_the_tensor_it_is_given_is(given):
    forward = (
        "    def forward(self, x):\n"
        "        h = self.body(x)\n"
        "        if self.head is None:\n"
        "            self.head = nn.Linear(h.size(1), 2)\n"
        f"        return self.head({given})\n"
    )
    result = run(forward)
    assert f"self.head = nn.Linear(h.size(1), 2).to({given}.device)\n" in result.fixed.decode()
    assert [finding.code for finding in result.applied] == ["DF018"]


@pytest.mark.parametrize("forward", [
    # the tensor it is given is bound after the layer is built
    "    def forward(self, x):\n        if self.head is None:\n            self.head = nn.Linear(4, 2)\n        h = self.body(x)\n        return self.head(h)\n",
    # placed where it is built
    "    def forward(self, x):\n        if self.head is None:\n            self.head = nn.Linear(4, 2).to(x.device)\n        return self.head(x)\n",
    "    def forward(self, x):\n        if self.head is None:\n            self.head = nn.Linear(4, 2, device=x.device)\n        return self.head(x)\n",
    # no parameters
    "    def forward(self, x):\n        if self.head is None:\n            self.head = nn.ReLU()\n        return self.head(x)\n",
    # called twice in the method: which input leads is not one fact
    "    def forward(self, x, y):\n        if self.head is None:\n            self.head = nn.Linear(4, 2)\n        return self.head(x) + self.head(y)\n",
])
def test_lazy_layers_placed_or_without_one_input_are_left_alone(forward):
    result = run(forward)
    assert result.fixed == result.source and not result.findings


def test_a_layer_built_once_a_call_moves_to_init():
    result = run("    def forward(self, x):\n        return nn.BatchNorm1d(4)(self.body(x))\n")
    assert "        self.batch_norm1d = nn.BatchNorm1d(4)\n" in result.fixed.decode()
    assert "        return self.batch_norm1d(self.body(x))\n" in result.fixed.decode()


@pytest.mark.parametrize("forward", [
    # two layers a call: one attribute would make the two outputs one
    "    def forward(self, x):\n        return [nn.Linear(4, 4)(x) for _ in range(2)]\n",
    "    def forward(self, x):\n        for _ in range(3):\n            x = nn.Linear(4, 4)(x)\n        return x\n",
])
def test_layers_built_in_a_loop_or_a_comprehension_are_reported_without_a_fix(forward):
    result = run(forward)
    assert result.fixed == result.source
    assert [(finding.code, finding.fixable) for finding in result.findings] == [("DF018", False)]


@pytest.mark.parametrize("forward", [
    # PyPOTS' PatchTST head: `y_range` defaults to None, so `SigmoidRange(*None)` in __init__ would raise
    "    def forward(self, x):\n        if self.scale:\n            x = nn.BatchNorm1d(4)(x)\n        return x\n",
    "    def forward(self, x):\n        return nn.BatchNorm1d(4)(x) if self.scale else x\n",
    "    def forward(self, x):\n        try:\n            return nn.BatchNorm1d(4)(x)\n        except RuntimeError:\n            return x\n",
])
def test_layers_built_only_under_a_condition_are_reported_without_a_fix(forward):
    result = run(forward)
    assert result.fixed == result.source
    assert [(finding.code, finding.fixable) for finding in result.findings] == [("DF018", False)]
