"""Which names only hold an instance of a Module class of the file and are only called, and the
kinds their calls give `forward`."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import Kind
from devfix.analysis.module_instances import called_instances
from devfix.analysis.values import analyse_values

NET = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, lengths):\n        return x\n\n\n"


def instances(source: str) -> dict[str, str]:
    return called_instances(ast.parse(source), {"Net": Kind.MODULE})


def test_a_model_built_moved_and_called_is_an_instance():
    assert instances(NET + "model = Net().to('cuda').eval()\nmodel.train()\nmodel(torch.ones(2), torch.ones(2))\n") == {"model": "Net"}


@pytest.mark.parametrize("uses", [
    "run(model)\n",  # handed on: someone else may call it
    "model = other\n",  # bound to something else too
    "def f(model):\n    return model(3, 4)\n",  # a parameter of the same name
    "model.forward(1, 2)\n",  # forward called by name
    "class Big(Net):\n    pass\n",  # the class is subclassed
    "factory = Net\n",  # the class is read as a value
])
def test_instances_that_other_code_may_call_are_not(uses):
    assert instances(NET + "model = Net()\nmodel(torch.ones(2), torch.ones(2))\n" + uses) == {}


def test_forwards_parameters_take_the_kinds_every_call_gives():
    source = NET.replace("        return x\n", "        y = lengths\n        return x\n") + (
        "model = Net().to('cuda')\nmodel(torch.ones(2), torch.tensor([2, 1]))\nmodel(torch.ones(3), torch.tensor([3]))\n"
    )
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {"Net": Kind.MODULE}, set())
    read = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "lengths" and isinstance(node.ctx, ast.Load))
    assert facts.reads[(read.lineno, read.col_offset)] is Kind.TENSOR
    mixed = source.replace("torch.tensor([3])", "[3]")
    tree = ast.parse(mixed)
    facts = analyse_values(tree, ImportTable.of(tree), {"Net": Kind.MODULE}, set())
    read = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "lengths" and isinstance(node.ctx, ast.Load))
    assert facts.reads[(read.lineno, read.col_offset)] is not Kind.TENSOR  # one call gives a list
