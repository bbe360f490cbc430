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
