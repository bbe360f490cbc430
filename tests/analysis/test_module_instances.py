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
    return called_instances(ast.parse(source), {"Net"}).names


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


def test_an_instance_called_where_it_is_built_gives_forward_its_kinds():
    source = NET.replace("        return x\n", "        y = lengths\n        return x\n") + "Net().to('cuda')(torch.ones(2), torch.tensor([2, 1]))\n"
    for given, expected in (("torch.tensor([2, 1])", Kind.TENSOR), ("[2, 1]", Kind.LIST)):
        tree = ast.parse(source.replace("torch.tensor([2, 1])", given))
        facts = analyse_values(tree, ImportTable.of(tree), {"Net": Kind.MODULE}, set())
        read = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "lengths" and isinstance(node.ctx, ast.Load))
        assert facts.reads[(read.lineno, read.col_offset)] is expected
    handed_on = source + "run(Net())\n"  # another instance, built where nothing holds it, may be called with anything
    tree = ast.parse(handed_on)
    facts = analyse_values(tree, ImportTable.of(tree), {"Net": Kind.MODULE}, set())
    read = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "lengths" and isinstance(node.ctx, ast.Load))
    assert facts.reads[(read.lineno, read.col_offset)] is not Kind.TENSOR


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


OUTER = NET + (
    "class Outer(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.mlp = nn.Sequential(Net(), nn.Linear(2, 2))\n\n"
    "    def forward(self, x, lengths):\n"
    "        return self.mlp(x, lengths)\n\n\n"
)


def layers(source: str) -> dict[tuple[str, str], str]:
    tree = ast.parse(source)
    return called_instances(tree, {"Net", "Outer"}, ImportTable.of(tree).qualify).layers


@pytest.mark.parametrize("held", ["nn.Sequential(Net(), nn.Linear(2, 2))", "Net().float()", "Net()"])
def test_a_layer_only_called_by_its_class_holds_an_instance(held):
    assert layers(OUTER.replace("nn.Sequential(Net(), nn.Linear(2, 2))", held)) == {("Outer", "mlp"): "Net"}


@pytest.mark.parametrize("change", [
    ("        return self.mlp(x, lengths)\n", "        return self.mlp[0](x, lengths)\n"),  # indexed: read otherwise
    ("        return self.mlp(x, lengths)\n", "        self.mlp.register_forward_hook(print)\n        return x\n"),
    ("        super().__init__()\n", "        super().__init__()\n        self.mlp = None\n"),  # stored twice
    ("nn.Sequential(Net(), nn.Linear(2, 2))", "nn.Sequential(nn.Linear(2, 2), Net())"),  # not the first module
    ("nn.Sequential(Net(), nn.Linear(2, 2))", "nn.Sequential(*[Net()])"),
    ("class Outer(nn.Module):\n", "probe = Net()\nrun(probe)\n\n\nclass Outer(nn.Module):\n"),  # another instance handed on
    ("class Outer(nn.Module):\n", "run(Net())\n\n\nclass Outer(nn.Module):\n"),  # built where nothing holds it
])
def test_layers_that_other_code_may_call_are_not(change):
    assert layers(OUTER.replace(*change)) == {}


def test_a_subclass_calling_the_inherited_layer_makes_it_no_instance():
    assert layers(OUTER + "class Sub(Outer):\n    def step(self, x):\n        return self.mlp(x, 1)\n") == {}


def test_a_built_instance_handed_on_hides_every_instance_of_the_class():
    assert instances(NET + "model = Net()\nmodel(torch.ones(2), torch.ones(2))\nrun(Net())\n") == {}


def test_forward_of_the_first_module_of_a_sequential_takes_what_the_holder_gives():
    source = OUTER.replace("        return x\n", "        y = lengths\n        return x\n") + (
        "model = Outer().to('cuda')\nmodel(torch.ones(2), torch.tensor([2, 1]))\n"
    )
    for given, expected in (("torch.tensor([2, 1])", Kind.TENSOR), ("[2, 1]", Kind.LIST)):
        tree = ast.parse(source.replace("torch.tensor([2, 1])", given))
        facts = analyse_values(tree, ImportTable.of(tree), {"Net": Kind.MODULE, "Outer": Kind.MODULE}, set())
        read = next(node for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == "lengths" and isinstance(node.ctx, ast.Load))
        assert facts.reads[(read.lineno, read.col_offset)] is expected
