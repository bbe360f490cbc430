"""Only tensors count as tensors: regressions found by running devfix over PyTorch's own code."""

from __future__ import annotations

from devfix.codemods import DiscardedTo, TensorAttributeBuffer
from tests.conftest import run_devfix


def test_a_boolean_from_a_private_torch_call_is_not_made_a_buffer():
    source = (
        "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.flag = torch._dynamo.utils.mode() == 'python'\n\n"
        "    def forward(self, x):\n        return x if self.flag else -x\n"
    )
    result = run_devfix(source, rules=[TensorAttributeBuffer])
    assert result.fixed == result.source and not result.findings


def test_a_module_given_to_torch_jit_is_not_a_tensor():
    source = "import torch\n\ndef export(model):\n    scripted = torch.jit.script(model)\n    model.cpu()\n    return scripted\n"
    result = run_devfix(source, rules=[DiscardedTo])
    assert result.fixed == result.source and not result.findings


def test_tensors_given_to_torch_ops_still_count():
    source = "import torch\n\ndef f(a, b):\n    c = torch.cat([a, b])\n    a.to(c.device)\n    return c\n"
    assert "a = a.to(c.device)" in run_devfix(source, rules=[DiscardedTo]).fixed.decode()
