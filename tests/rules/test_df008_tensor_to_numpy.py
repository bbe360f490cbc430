"""DF008's refusals that a fixture cannot show (the program would need another array library)."""

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
