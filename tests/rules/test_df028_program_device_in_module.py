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


TRAINER = (
    "class Trainer:\n    def __init__(self, model, steps):\n        self.model = model\n        self.steps = steps\n\n"
    "    def run(self, x):\n        self.model.eval()\n        return [self.model(x) for _ in range(self.steps)]\n\n\n"
)


@pytest.mark.parametrize("program", [
    TRAINER + "def main():\n    model = Cell()\n    trainer = Trainer(model, 2)\n    print(trainer.run(torch.ones(2, 4)))\n",
    TRAINER + "def main():\n    model = Cell()\n    print(Trainer(model=model, steps=2).run(torch.ones(2, 4)))\n",
    "def train(model, x):\n    model.train()\n    return step(model, x)\n\n\ndef step(net, x):\n    return net(x)\n\n\n"
    "def main():\n    model = Cell()\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    print(train(model, torch.ones(2, 4)), opt)\n",
])
def test_a_model_handed_to_code_of_the_file_that_never_moves_it_follows_its_input(program):
    assert MOVED_LINE in fixed(HEAD + CELL + program)


@pytest.mark.parametrize("program", [
    TRAINER.replace("self.model.eval()", "self.model.to(DEVICE)"),  # the trainer moves it
    TRAINER + "class Fast(Trainer):\n    pass\n\n\n",  # a subclass may move it
    TRAINER.replace("class Trainer:", "class Trainer(Base):"),  # so may an inherited method
    TRAINER.replace("self.model.eval()", "for m in self.model.modules():\n            m.cuda()"),  # its layers moved
    TRAINER.replace("self.model.eval()", "self.model.cell.cuda()"),
    TRAINER.replace("self.model.eval()", "keep(self.model)"),  # handed to code not seen
    TRAINER.replace("        self.model = model\n", "        self.model = model\n        self.model = Cell().to(DEVICE)\n"),
    TRAINER + "def late(trainer):\n    trainer.model.cuda()\n\n\n",  # moved from outside
])
def test_a_model_handed_to_code_that_may_move_it_leaves_the_class_alone(program):
    source = HEAD + CELL + program + "def main():\n    model = Cell()\n    trainer = Trainer(model, 2)\n    print(trainer.run(torch.ones(2, 4)))\n"
    assert fixed(source) == source


@pytest.mark.parametrize("program", [
    "def train(model, x):\n    model = model.to(DEVICE)\n    return model(x.to(DEVICE))\n\n\n",  # rebound moved
    "def train(model, x):\n    nets = [model]\n    return nets[0](x)\n\n\n",  # kept in a container
    "def train(x, *models):\n    return models[0](x)\n\n\n",  # a `*args` parameter
    "def train(model, x):\n    return model(x)\n\n\ndef train(model, x):\n    return model.cuda()(x.cuda())\n\n\n",  # defined twice
])
def test_a_function_that_may_move_the_model_leaves_the_class_alone(program):
    for call in ("train(model, torch.ones(2, 4))", "train(torch.ones(2, 4), model)"):
        source = HEAD + CELL + program + f"def main():\n    model = Cell()\n    print({call})\n"
        assert fixed(source) == source


MODEL_FILE = (
    "import torch\nfrom torch import nn\n\nfrom constants import DEVICE\n\n\n"
    + CELL
)


@pytest.mark.parametrize("program, fixed_here", [
    ("from model import Cell\n\n\ndef main():\n    model = Cell()\n    print(model(torch.ones(2, 4)))\n", True),
    ("from model import Cell\nfrom trainer import Trainer\n\n\ndef main():\n    model = Cell()\n    print(Trainer(model, 2).run(torch.ones(2, 4)))\n", True),
    ("from model import Cell\n\n\ndef main():\n    model = Cell().to(DEVICE)\n    print(model(torch.ones(2, 4).to(DEVICE)))\n", False),
    ("import model as models\n\n\ndef main():\n    net = models.Cell()\n    print(net(torch.ones(2, 4)))\n", False),  # built otherwise than by its name
    ("from model import Cell\nfrom trainer import Trainer\n\n\ndef main():\n    model = Cell()\n    print(Trainer(model, 2).run(torch.ones(2, 4)))\n"
     "    Trainer(model, 1).model.cuda()\n", False),  # moved through the trainer
])
def test_a_device_and_instances_of_other_files(tmp_path, program, fixed_here):
    from devfix.analysis.project import ProjectIndex
    from devfix.engine import process
    from devfix.fix_policy import FixPolicy

    (tmp_path / "constants.py").write_text("import torch\n\nDEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n")
    (tmp_path / "model.py").write_text(MODEL_FILE)
    (tmp_path / "trainer.py").write_text(TRAINER)
    (tmp_path / "main.py").write_text("import torch\n\nfrom constants import DEVICE\n" + program)
    result = process(MODEL_FILE.encode(), str(tmp_path / "model.py"), [ProgramDeviceInModule], ProjectIndex(), FixPolicy(apply=True, unsafe=True))
    assert (MOVED_LINE in result.fixed.decode()) is fixed_here


@pytest.mark.parametrize("program", [
    "model = Cell()\nmodel.eval().cuda()\nprint(model(torch.ones(2, 4).to(DEVICE)))\n",  # moved through what eval() gives back
    "def main():\n    model = Cell()\n    net = model.eval()\n    net.to(DEVICE)\n    print(model(torch.ones(2, 4).to(DEVICE)))\n",
    TRAINER.replace("self.model.eval()", "self.model.eval().to(DEVICE)")
    + "def main():\n    model = Cell()\n    print(Trainer(model, 2).run(torch.ones(2, 4).to(DEVICE)))\n",
])
def test_a_model_moved_through_what_its_methods_give_back_leaves_the_class_alone(program):
    source = HEAD + CELL + program
    assert fixed(source) == source


def test_a_static_method_has_no_self_to_take_the_device_from():
    cell = CELL.replace(
        "        return self.lin(x) + h\n",
        "        return self.lin(x) + h + self.noise(x.size(0))\n\n    @staticmethod\n    def noise(n):\n"
        "        return torch.zeros(n, 4).to(DEVICE)\n",
    )
    result = run_devfix(HEAD + cell + "model = Cell()\nprint(model(torch.ones(2, 4)))\n", rules=[ProgramDeviceInModule])
    assert "next(self.parameters())" not in result.fixed.decode()
    assert MOVED_LINE in result.fixed.decode()
