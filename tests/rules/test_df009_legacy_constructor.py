"""DF009: `nn.Parameter(t).cuda()` moves the data inside, unless the class stores the attribute again."""

from __future__ import annotations

import pytest

from devfix.codemods import LegacyConstructor
from tests.conftest import run_devfix

HEAD = "import torch\nfrom torch import nn\n\n\nclass Ranker(nn.Module):\n    def __init__(self, n, device):\n        super().__init__()\n"
STORE = "        self.embed = nn.Parameter(torch.randn(n, 4)).to(device)\n"


def run(body: str):
    return run_devfix(HEAD + STORE + body, rules=[LegacyConstructor])


def test_a_parameter_stored_once_gets_the_move_inside():
    result = run("\n    def forward(self, x):\n        return x @ self.embed.T\n")
    assert "self.embed = nn.Parameter(torch.randn(n, 4).to(device))\n" in result.fixed.decode()


@pytest.mark.parametrize("store", [
    "self.embed = torch.cat((x, x), dim=0)",  # MMRec's DualGNN: the forward pass overwrites it
    "self.embed, self.other = x, x",
    "self.embed += x",
    'setattr(self, "embed", x)',
])
def test_an_attribute_the_class_stores_again_is_reported_without_a_fix(store):
    result = run(f"\n    def forward(self, x):\n        {store}\n        return self.embed\n")
    assert result.fixed == result.source
    [finding] = result.findings
    assert not finding.fixable and "`self.embed` is also assigned elsewhere" in finding.message


def test_a_store_of_another_class_does_not_count():
    other = "\n\nclass Other(nn.Module):\n    def forward(self, x):\n        self.embed = x\n        return x\n"
    result = run("\n    def forward(self, x):\n        return x @ self.embed.T\n" + other)
    assert "nn.Parameter(torch.randn(n, 4).to(device))" in result.fixed.decode()
