"""DF008's refusals that a fixture cannot show (the program would need another array library, or
fails on a GPU before and after)."""

from __future__ import annotations

from devfix.codemods import TensorToNumpy
from tests.conftest import run_devfix

HELPER = "def to_array(weights):\n    return weights.numpy()\n\n\nmodel = torch.nn.Linear(2, 2).to(torch.device('cuda'))\n"


def test_a_parameters_numpy_in_a_torch_file_gets_host_methods():
    result = run_devfix("import torch\n\n\n" + HELPER, rules=[TensorToNumpy])
    assert "weights.detach().cpu().numpy()" in result.fixed.decode()


def test_a_parameters_numpy_is_left_alone_where_tensorflow_arrays_may_be_meant():
    source = "import tensorflow as tf\nimport torch\n\n\n" + HELPER
    result = run_devfix(source, rules=[TensorToNumpy])
    assert result.fixed.decode() == source and not result.findings


COLLECTED = """import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def summary(values):
    return float(np.asarray(values).mean())


model = nn.Linear(3, 2).to(device)
preds = []
for _ in range(3):
    preds.append(model(torch.randn(4, 3).to(device)).argmax(1))
print(len(preds))
{use}
"""


def collected(use: str) -> str:
    return run_devfix(COLLECTED.format(use=use), rules=[TensorToNumpy]).fixed.decode()


def test_a_list_only_handed_to_numpy_collects_host_copies():
    assert "preds.append(model(torch.randn(4, 3).to(device)).argmax(1).detach().cpu())" in collected("print(summary(preds))")


def test_a_list_the_scope_also_reads_on_the_device_keeps_its_tensors():
    """`torch.cat(preds) == labels` needs them where they are: bringing them over as they are
    collected would only move the crash there."""
    use = "labels = torch.zeros(12, dtype=torch.long).to(device)\nprint((torch.cat(preds) == labels).sum(), summary(preds))"
    assert collected(use) == COLLECTED.format(use=use)
