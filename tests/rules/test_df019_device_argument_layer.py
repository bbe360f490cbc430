"""DF019: a layer's method given a device puts all the state it stores there."""

from __future__ import annotations

from devfix.codemods import DeviceArgumentLayer
from tests.conftest import run_devfix

HEAD = "import torch\nfrom torch import nn\n\n\nclass Head(nn.Module):\n"


def run(body: str):
    return run_devfix(HEAD + body, rules=[DeviceArgumentLayer])


def test_a_method_that_makes_tensors_on_its_device_stores_the_others_there_too():
    result = run(
        "    def create_grids(self, ng, device='cpu'):\n"
        "        self.ng = torch.tensor(ng, dtype=torch.float)\n"
        "        self.grid = torch.arange(ng[0], device=device)\n"
    )
    assert "self.ng = torch.tensor(ng, dtype=torch.float, device=device)\n" in result.fixed.decode()


def test_a_method_that_never_uses_its_device_for_a_tensor_is_left_alone():
    result = run(
        "    def create_grids(self, ng, device='cpu'):\n"
        "        self.ng = torch.tensor(ng, dtype=torch.float)\n"
        "        self.grid = torch.arange(ng[0]).to(device)\n"
        "        self.device = device\n"
    )
    assert result.fixed == result.source and not result.findings


def test_a_local_tensor_of_such_a_method_is_no_state():
    result = run(
        "    def create_grids(self, ng, device='cpu'):\n"
        "        order = torch.arange(ng[0]).tolist()\n"
        "        self.grid = torch.arange(ng[0], device=device)[order]\n"
    )
    assert result.fixed == result.source and not result.findings
