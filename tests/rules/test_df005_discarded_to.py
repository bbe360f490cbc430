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


LESSON = '''import torch

tensor = torch.zeros(3, 4)
# `.cuda()` returns a new tensor on the GPU; the original stays where it was
tensor.cuda(0)
{after}
'''


@pytest.mark.parametrize(("after", "fixed"), [
    ("print(tensor.is_cuda)  # False", False),  # pytorch-book's lesson on what `.cuda()` returns: only where it is is read
    ("print(tensor.device)\ntensor = tensor.cuda()\nprint(tensor.sum())", False),  # bound again before it is computed with
    ("print(tensor.sum())", True),  # computed with: the copy was meant to be used
])
def test_a_copy_thrown_away_before_the_tensor_is_only_inspected_is_left_alone(after, fixed):
    result = run_devfix(LESSON.format(after=after), rules=[DiscardedTo])
    assert ("tensor = tensor.cuda(0)\n" in result.fixed.decode()) is fixed
    assert bool(result.applied) is fixed and not result.findings


@pytest.mark.parametrize(("container", "item", "fixed"), [
    ("{'x': torch.randn(2, 3), 'y': torch.randn(2)}", "batch[key]", True),
    ("[torch.randn(2, 3), torch.randn(2)]", "batch[0]", True),
    ("(torch.randn(2, 3), torch.randn(2))", "batch[0]", False),  # a tuple takes no item assignment
    ("make_batch()", "batch[key]", False),  # what the container is is unknown
    ("[torch.randn(2, 3), torch.randn(2)]", "batch[0:1]", False),  # a slice is a new list
])
def test_an_item_of_a_dict_or_list_moved_and_thrown_away_is_assigned_back(container, item, fixed):
    source = (
        f"import torch\n\ndevice = torch.device('cuda')\nbatch = {container}\nkey = 'x'\n{item}.to(device)\nprint(batch)\n"
    )
    result = run_devfix(source, rules=[DiscardedTo]).fixed.decode()
    assert result == (source.replace(f"\n{item}.to(device)\n", f"\n{item} = {item}.to(device)\n") if fixed else source)


@pytest.mark.parametrize("wrapped", ["Variable(torch.from_numpy(grid) == 0)", "Variable(torch.ones(3), requires_grad=True)"])
def test_a_legacy_variable_of_a_tensor_is_a_tensor(wrapped):
    source = (
        "import numpy as np\nimport torch\nfrom torch.autograd import Variable\n\n\ndef mask(size, trg):\n"
        f"    grid = np.ones((size, size))\n    m = {wrapped}\n    if trg.is_cuda:\n        m.cuda()\n    return trg & m\n"
    )
    assert "        m = m.cuda()\n" in run_devfix(source, rules=[DiscardedTo]).fixed.decode()


def test_a_binding_in_the_else_branch_does_not_end_the_value_the_if_branch_throws_away():
    # DecisionTransformerInterpretability's `return_tensors`: tensors moved into copies, arrays converted
    source = (
        "import torch\n\n\ndef as_tensor(s, device):\n    if isinstance(s, torch.Tensor):\n        s.to(device)\n"
        "    else:\n        s = torch.from_numpy(s).to(device)\n    return s\n"
    )
    assert "        s = s.to(device)\n" in run_devfix(source, rules=[DiscardedTo]).fixed.decode()
