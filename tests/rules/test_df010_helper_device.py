"""DF010's choice of the model whose device a helper's batches go to: the one callable given the
batch that no other feeds, never a pick by name."""

from __future__ import annotations

import pytest

from devfix.codemods import HelperDevice
from tests.conftest import REPO, run_devfix

HEAD = (
    "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
    "def run(model, other, loader):\n"
    "    total = 0.0\n"
    "    for x, y in loader:\n"
)
TAIL = (
    "    return total\n\n\n"
    "data = TensorDataset(torch.randn(8, 4), torch.randn(8, 2))\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "print(run(nn.Linear(4, 2).to(device), nn.MSELoss(), DataLoader(data, batch_size=4)))\n"
)


def fixed(body: str) -> str:
    return run_devfix(HEAD + body + TAIL, rules=[HelperDevice]).fixed.decode()


def test_the_callable_fed_the_others_output_is_not_the_model():
    result = fixed("        total += other(model(x), y).item()\n")
    assert "    device = next(model.parameters()).device\n" in result
    assert "        x, y = x.to(device), y.to(device)\n" in result


@pytest.mark.parametrize("body", [
    "        total += (model(x) - other(x)).sum().item()\n",  # two models given the batch: which holds the device?
    "        total += (other(x) - model(x)).sum().item()\n",
])
def test_two_callables_given_the_batch_are_left_alone(body):
    source = HEAD + body + TAIL
    assert run_devfix(source, rules=[HelperDevice]).fixed.decode() == source


def test_a_batch_unpacked_first_in_the_loop_moves_after_the_unpacking_with_what_meets_a_local_criterion():
    source = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, TensorDataset\n\n\n"
        "def train(net, loader):\n"
        "    net.train()\n"
        "    criterion = nn.CrossEntropyLoss()\n"
        "    for i, data in enumerate(loader):\n"
        "        inputs, labels = data\n"
        "        loss = criterion(net(inputs), labels)\n"
        "    return loss\n\n\n"
        "data = TensorDataset(torch.randn(8, 4), torch.randint(0, 2, (8,)))\n"
        "print(train(nn.Linear(4, 2).cuda(), DataLoader(data, batch_size=4)))\n"
    )
    result = run_devfix(source, rules=[HelperDevice]).fixed.decode()
    assert "        inputs, labels = data\n        inputs, labels = inputs.to(device), labels.to(device)\n" in result
    assert "    device = next(net.parameters()).device\n" in result


def test_helpers_of_a_program_that_places_nothing_are_left_alone():
    cpu_tail = TAIL.replace("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n", "").replace(".to(device)", "")
    source = HEAD + "        total += other(model(x), y).item()\n" + cpu_tail
    result = run_devfix(source)  # every rule, screened as `devfix fix` screens them
    assert result.fixed.decode() == source and not result.findings and not result.applied  # its model runs on the CPU
    placed = HEAD + "        total += other(model(x), y).item()\n" + TAIL
    assert [finding.code for finding in run_devfix(placed).applied] == ["DF010"]  # with a placement, DF010 acts


def test_a_model_the_function_rebinds_before_its_loop_is_left_alone():
    """opacus' mixed-precision test: the model is moved by the helper that rebinds it, and the data
    is made on the device; `next(model.parameters())` at the top would read the unmoved model."""
    source = '''import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    def _components(self, model, loader):
        model = model.to(self.device)
        return model, torch.optim.SGD(model.parameters(), lr=0.1), loader

    def train(self, model: nn.Module, loader: DataLoader):
        model, optimizer, loader = self._components(model, loader)
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()


trainer = Trainer()
data = TensorDataset(torch.randn(8, 4).to(trainer.device), torch.randn(8, 2).to(trainer.device))
trainer.train(nn.Linear(4, 2), DataLoader(data, batch_size=4))
'''
    result = run_devfix(source, rules=[HelperDevice])
    assert result.fixed == result.source


BATCH_DICT_REBUILT = (REPO / "fixtures/DF010-helper-device/batch-dict-rebuilt-from-its-own-items/before.py").read_text()


@pytest.mark.parametrize("rebuilt", ["{k: v for k, v in batch.items()}", "{k: v for k, v in batch.items() if k != 'idx'}"])
def test_a_batch_dict_rebuilt_from_its_own_items_is_moved_after_it(rebuilt):
    """`batch = {k: v for k, v in batch.items()}` at the top of the loop (a filter too) holds the
    same CPU tensors: the move goes right after it."""
    source = BATCH_DICT_REBUILT.replace("{k: v for k, v in batch.items()}", rebuilt)
    fixed = run_devfix(source, rules=[HelperDevice]).fixed.decode()
    assert f"        batch = {rebuilt}\n        batch = {{key: value.to(device)" in fixed
