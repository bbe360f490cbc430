"""Which attributes of a file's Module classes `.to()` leaves on the CPU (`analysis.plain_tensor_attributes`)."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.plain_tensor_attributes import plain_tensor_attributes

HEADER = "import torch\nimport torch.nn as nn\nfrom torch.nn import Module\n\n\n"


def attributes(body: str) -> dict[str, frozenset[str]]:
    tree = ast.parse(HEADER + body)
    return plain_tensor_attributes(tree, ImportTable.of(tree))


def test_a_factory_without_a_device_stored_once_is_a_plain_tensor():
    found = attributes(
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.class_weights = torch.tensor([1.0, 2.0])\n        self.scale = 2.0\n        self.fc = nn.Linear(2, 2)\n"
    )
    assert found == {"Net": frozenset({"class_weights"})}


@pytest.mark.parametrize("store", [
    'self.register_buffer("w", torch.ones(2))',  # a buffer: `.to()` moves it
    "self.w = nn.Parameter(torch.ones(2))",  # a parameter
    "self.w = torch.ones(2, device=device)",  # placed where it is made
    "self.w = torch.ones(2)\n        self.w = self.w * 2",  # stored twice
    "self.w = torch.ones(2)\n        self.w += 1",  # changed in place by an augmented store
    'self.w = torch.ones(2)\n        self.register_buffer("w", self.w)',  # registered under that name afterwards
    "self.w = torch.ones(2)\n        setattr(self, name, None)",  # a name computed at run time may be `w`
    "self.w = torch.ones(*sizes)",  # a star: not read
])
def test_anything_else_is_not_known_to_be_left_behind(store):
    found = attributes(f"class Net(nn.Module):\n    def __init__(self, name, sizes, device):\n        super().__init__()\n        {store}\n")
    assert "w" not in found.get("Net", frozenset())


@pytest.mark.parametrize("header", [
    "class Net(Base):",  # a base of the file, or of a library, may register `w` as a buffer
    "class Net(nn.Module, metaclass=Meta):",
])
def test_only_classes_whose_every_base_is_torch_modules_own_class_count(header):
    assert attributes(f"{header}\n    def __init__(self):\n        super().__init__()\n        self.w = torch.ones(2)\n") == {}


def test_a_module_imported_by_name_counts_and_a_class_defined_twice_does_not():
    body = "class Net(Module):\n    def __init__(self):\n        super().__init__()\n        self.w = torch.zeros(3)\n"
    assert attributes(body) == {"Net": frozenset({"w"})}
    assert attributes(body + "\n\n" + body) == {}


@pytest.mark.parametrize("outside", [
    "model.w = model.w.to(device)",
    "model.w.data = model.w.data.cuda()",
    'setattr(model, "w", None)',
])
def test_an_attribute_stored_through_an_instance_may_be_anywhere(outside):
    body = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w = torch.zeros(3)\n\n\n"
    assert attributes(body + "model = Net()\n") == {"Net": frozenset({"w"})}
    assert attributes(body + f"model = Net()\n{outside}\n") == {}
