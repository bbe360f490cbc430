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
    source = "import torch\n\ndef f(a, b):\n    c = torch.cat([a, b])\n    a.to(c.device)\n    return c * a.sum()\n"
    assert "a = a.to(c.device)" in run_devfix(source, rules=[DiscardedTo]).fixed.decode()


def test_torch_calls_that_give_tuples_are_not_tensors():
    """`torch.split`, `.sort()`, `.max(dim=1)`, `torch.unique(..., return_counts=True)` and
    `torch.where(mask)` give tuples of tensors: no buffer can hold them (TypeError)."""
    values = [
        "torch.split(torch.arange(4.0), 2)", "torch.arange(4.0).chunk(2)", "torch.arange(4.0).sort()",
        "torch.arange(4.0).reshape(2, 2).max(dim=1)", "torch.max(torch.ones(2, 2), 1)",
        "torch.unique(torch.ones(3), return_counts=True)", "torch.where(torch.ones(3) > 0)", "torch.linalg.qr(torch.eye(2))",
    ]
    for value in values:
        source = (
            "import torch\nfrom torch import nn\n\nclass M(nn.Module):\n    def __init__(self):\n"
            f"        super().__init__()\n        self.fc = nn.Linear(2, 2)\n        self.parts = {value}\n\n"
            "    def forward(self, x):\n        return self.fc(x) + self.parts[0].sum()\n"
        )
        assert not run_devfix(source, fix=False, rules=[TensorAttributeBuffer]).findings, value
    tensor = source.replace("torch.linalg.qr(torch.eye(2))", "torch.arange(4.0).max()")
    assert [finding.code for finding in run_devfix(tensor, fix=False, rules=[TensorAttributeBuffer]).findings] == ["DF014"]
