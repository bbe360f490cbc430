"""DF023's refusals: only a device read from the module's own parameters in `__init__`, and only
where a read-only property cannot break an assignment."""

from __future__ import annotations

from devfix.codemods import DeviceCapturedAtInit
from tests.conftest import run_devfix

HEAD = "import torch\nfrom torch import nn\n\n\n"
USE = "    def forward(self, x):\n        return self.fc(x) + torch.ones(2, device=self.device)\n"


def run(source: str):
    return run_devfix(HEAD + source, rules=[DeviceCapturedAtInit])


def test_a_device_given_to_the_constructor_is_kept():
    result = run("class A(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
                 "        self.fc = nn.Linear(2, 2)\n        self.device = device\n\n" + USE)
    assert result.fixed == result.source and not result.findings


def test_a_class_with_a_base_of_its_own_is_left_alone():
    result = run("class Base(nn.Module):\n    pass\n\n\nclass A(Base):\n    def __init__(self):\n        super().__init__()\n"
                 "        self.fc = nn.Linear(2, 2)\n        self.device = next(self.parameters()).device\n\n" + USE)
    assert result.fixed == result.source and not result.findings


def test_another_device_assignment_in_the_file_keeps_the_attribute():
    result = run("class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                 "        self.fc = nn.Linear(2, 2)\n        self.device = next(self.parameters()).device\n\n" + USE
                 + "\n\nmodel = A()\nmodel.device = torch.device('cpu')\n")
    assert result.fixed == result.source and not result.findings


def test_the_stored_device_becomes_a_property():
    result = run("class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                 "        self.fc = nn.Linear(2, 2)\n        self.device = next(self.parameters()).device\n\n" + USE)
    fixed = result.fixed.decode()
    assert "self.device =" not in fixed and "    @property\n    def device(self):\n        return next(self.parameters()).device\n" in fixed
