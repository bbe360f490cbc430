from __future__ import annotations

from devfix.codemods import RuntimePlacement
from tests.conftest import run_devfix


def findings(source: str):
    result = run_devfix(source, rules=[RuntimePlacement])
    assert result.fixed == result.source  # report only, never rewritten
    return result.findings


def test_jit_trace_is_reported():
    (finding,) = findings("import torch\ntraced = torch.jit.trace(model, example)\n")
    assert "records the device" in finding.message and not finding.fixable


def test_moving_a_dispatched_model_is_reported():
    source = (
        "import torch\nfrom transformers import AutoModel\n"
        "model = AutoModel.from_pretrained('m', device_map='auto')\nmodel.to('cuda')\n"
    )
    (finding,) = findings(source)
    assert "device_map" in finding.message


def test_dispatched_model_left_alone_is_fine():
    assert not findings("from transformers import AutoModel\nmodel = AutoModel.from_pretrained('m', device_map='auto')\n")


def test_optimizer_loaded_before_the_model_moves():
    source = (
        "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\n"
        "optimizer = torch.optim.Adagrad(model.parameters())\noptimizer.load_state_dict(state)\nmodel.to('cuda')\n"
    )
    assert any("optimizer state was loaded before" in finding.message for finding in findings(source))


def test_standard_order_is_not_reported():
    source = (
        "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2)\nmodel.to('cuda')\n"
        "optimizer = torch.optim.Adam(model.parameters())\noptimizer.load_state_dict(state)\n"
    )
    assert not findings(source)
