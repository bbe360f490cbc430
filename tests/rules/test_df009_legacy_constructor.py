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


LOOP = (
    "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "model = nn.Linear(4, 3).to(device)\ncriterion = nn.CrossEntropyLoss()\n"
    "for x, y in [(torch.randn(2, 4), torch.tensor([0, 2]))]:\n    x, y = x.to(device), y.to(device)\n"
    "    outputs = model(x)\n    y = y.type(torch.LongTensor)\n{use}"
)


def test_a_cast_that_meets_a_model_output_bound_to_a_name_keeps_the_device():
    fixed = run_devfix(LOOP.format(use="    loss = criterion(outputs, y)\n"), rules=[LegacyConstructor]).fixed.decode()
    assert "    y = y.type(torch.int64)\n" in fixed


@pytest.mark.parametrize("use", [
    "    print(outputs.argmax(1).cpu() == y)\n",  # the host copy is compared on the host
    "    outputs = torch.zeros(2, 3)\n    loss = criterion(outputs, y)\n",  # the name no longer holds the output
])
def test_a_cast_that_never_meets_the_output_is_left_alone(use):
    source = LOOP.format(use=use)
    assert run_devfix(source, rules=[LegacyConstructor]).fixed.decode() == source


@pytest.mark.parametrize(("alias", "reported"), [
    ("Tensor = torch.cuda.FloatTensor", True),
    ("Tensor = torch.cuda.FloatTensor if use_gpu else torch.cuda.DoubleTensor", True),
    # the other branch is the CPU fallback: nothing to report
    ("Tensor = torch.cuda.FloatTensor if use_gpu else torch.FloatTensor", False),
])
def test_an_alias_of_a_cuda_tensor_type_is_reported_unless_it_falls_back_to_the_cpu(alias, reported):
    result = run_devfix(f"import torch\n\nuse_gpu = torch.cuda.is_available()\n{alias}\n", rules=[LegacyConstructor])
    assert bool([finding for finding in result.findings if finding.code == "DF009"]) is reported
