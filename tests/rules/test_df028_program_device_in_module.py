"""DF028's refusals: every instance of the class must be proven on the CPU, the device must be the
program's own, and a module with nothing to follow is reported without a fix."""

from __future__ import annotations

import pytest

from devfix.codemods import ProgramDeviceInModule
from tests.conftest import run_devfix

HEAD = "import torch\nfrom torch import nn\n\nDEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
CELL = (
    "class Cell(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(4, 4)\n\n"
    "    def forward(self, x):\n        h = torch.zeros(x.size(0), 4).to(DEVICE)\n        return self.lin(x) + h\n\n\n"
)
MOVED_LINE = "        h = torch.zeros(x.size(0), 4).to(x.device)\n"


def fixed(source: str) -> str:
    return run_devfix(source, rules=[ProgramDeviceInModule]).fixed.decode()


def test_an_unmoved_model_follows_its_input():
    assert MOVED_LINE in fixed(HEAD + CELL + "model = Cell()\nprint(model(torch.ones(2, 4)))\n")


@pytest.mark.parametrize("program", [
    "model = Cell().to(DEVICE)\nprint(model(torch.ones(2, 4).to(DEVICE)))\n",  # built moved
    "model = Cell()\nif torch.cuda.is_available():\n    model.cuda()\nprint(model(torch.ones(2, 4).to(DEVICE)))\n",  # moved later
    "model = nn.DataParallel(Cell())\nprint(model(torch.ones(2, 4)))\n",  # handed to other code
    "model = Cell()\nrun(model)\n",  # handed to a function, which may move it
    "def build():\n    return Cell()\n\n\nmodel = build().to(DEVICE)\n",  # built where nothing holds it
    "model = Cell()\n",  # never run
])
def test_instances_that_may_be_on_the_device_leave_the_class_alone(program):
    source = HEAD + CELL + program
    assert fixed(source) == source


def test_a_layer_follows_its_holder():
    holder = (
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.cell = Cell()\n\n"
        "    def forward(self, x):\n        return self.cell(x)\n\n\n"
    )
    assert MOVED_LINE in fixed(HEAD + CELL + holder + "net = Net()\nprint(net(torch.ones(2, 4)))\n")
    moved = HEAD + CELL + holder + "net = Net().to(DEVICE)\nprint(net(torch.ones(2, 4).to(DEVICE)))\n"
    assert fixed(moved) == moved


@pytest.mark.parametrize("device", [
    "DEVICE = 'cpu'\n",  # no CUDA named
    "DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nDEVICE = torch.device('cpu')\n",  # bound twice
])
def test_only_a_program_device_bound_once_to_cuda_counts(device):
    source = "import torch\nfrom torch import nn\n\n" + device + "\n\n" + CELL + "model = Cell()\nprint(model(torch.ones(2, 4)))\n"
    assert fixed(source) == source


def test_a_device_the_method_is_given_or_binds_is_its_own():
    source = HEAD + (
        "class Cell(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(4, 4)\n\n"
        "    def forward(self, x, DEVICE):\n        return self.lin(x) + torch.zeros(2, 4).to(DEVICE)\n\n\n"
    ) + "model = Cell()\nprint(model(torch.ones(2, 4), 'cpu'))\n"
    assert fixed(source) == source


def test_a_module_with_nothing_to_follow_is_reported_without_a_fix():
    source = HEAD + (
        "class Noise(nn.Module):\n    def forward(self, n):\n        return torch.randn(n).to(DEVICE)\n\n\n"
    ) + "noise = Noise()\nprint(noise(3).sum())\n"
    result = run_devfix(source, rules=[ProgramDeviceInModule])
    assert result.fixed.decode() == source
    assert [finding.code for finding in result.findings] == ["DF028"] and not result.findings[0].fixable


def test_a_class_another_file_builds_is_left_alone(tmp_path):
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    source = HEAD + CELL + "if __name__ == '__main__':\n    model = Cell()\n    print(model(torch.ones(2, 4)))\n"
    (tmp_path / "models.py").write_text(source)
    (tmp_path / "train.py").write_text("import torch\nfrom models import Cell, DEVICE\n\nmodel = Cell().to(DEVICE)\n")
    result = process(source.encode(), str(tmp_path / "models.py"), [ProgramDeviceInModule], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
    assert result.fixed.decode() == source
    (tmp_path / "train.py").unlink()
    result = process(source.encode(), str(tmp_path / "models.py"), [ProgramDeviceInModule], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
    assert MOVED_LINE in result.fixed.decode()


@pytest.mark.parametrize("placement", [
    "        self.to(DEVICE)\n",  # the module moves itself
    "        self.lin = nn.Linear(4, 4).to(DEVICE)\n",  # its layer is built moved
    "        self.register_buffer('scale', torch.ones(4, device=DEVICE))\n",  # its state is made on the device
])
def test_a_class_that_places_its_own_state_is_left_alone(placement):
    source = HEAD + CELL.replace("        self.lin = nn.Linear(4, 4)\n", "        self.lin = nn.Linear(4, 4)\n" + placement) + (
        "model = Cell()\nprint(model(torch.ones(2, 4).to(DEVICE)))\n")
    assert fixed(source) == source
