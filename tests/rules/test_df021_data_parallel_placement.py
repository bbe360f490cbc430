from __future__ import annotations

from devfix.codemods import DataParallelPlacement
from tests.conftest import run_devfix

MODULE = (
    "import torch\nfrom torch import nn\n\n\n"
    "class Net(nn.Module):\n"
    "    def __init__(self, device):\n        super().__init__()\n        self.fc = nn.Linear(4, 2)\n        self.device = device\n\n"
    "    def forward(self, x):\n        mask = torch.ones(x.size(0), 1, device={device})\n        return self.fc(x) * mask\n\n\n"
)


def findings(source: str):
    result = run_devfix(source, rules=[DataParallelPlacement])
    assert result.fixed == result.source  # report only, never rewritten
    return result.findings


def test_a_module_off_the_first_device_id_is_reported():
    source = "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).to('cuda:0')\nmodel = nn.DataParallel(model, device_ids=[1, 2])\n"
    (finding,) = findings(source)
    assert "cuda:1" in finding.message and "cuda:0" in finding.message and not finding.fixable


def test_a_module_on_the_first_device_id_is_fine():
    assert not findings("import torch\nfrom torch import nn\nmodel = nn.DataParallel(nn.Linear(4, 2).cuda(1), device_ids=[1, 2])\n")
    assert not findings("import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nmodel = nn.DataParallel(model)\n")


def test_a_device_fixed_at_construction_is_reported_in_a_wrapped_module():
    source = MODULE.format(device="self.device") + "model = nn.DataParallel(Net(torch.device('cuda')))\n"
    (finding,) = findings(source)
    assert "self.device" in finding.message and "DataParallel" in finding.message


def test_the_input_device_and_unwrapped_modules_are_fine():
    assert not findings(MODULE.format(device="x.device") + "model = nn.DataParallel(Net(torch.device('cuda')))\n")
    assert not findings(MODULE.format(device="self.device") + "model = Net(torch.device('cuda'))\n")


def test_the_articles_data_parallel_examples_are_fine():
    source = (
        "import torch\nimport torch.nn as nn\n\n\nclass MyModel(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.linear = nn.Linear(10, 1)\n\n"
        "    def forward(self, x):\n        return self.linear(x)\n\n\n"
        "model = MyModel()\nif torch.cuda.device_count() > 1:\n    model = torch.nn.DataParallel(model)\nmodel.to(device)\n"
    )
    assert not findings(source)
