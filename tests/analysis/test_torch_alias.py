"""`torch_names.torch_alias`: the name the file binds to `torch`, also under a guard, so that a rule
never adds an unconditional `import torch` to a module written to import without torch."""

from __future__ import annotations

import libcst as cst
import pytest

from devfix.analysis.torch_names import torch_alias
from devfix.codemods import CudaOnlyCall
from tests.conftest import run_devfix


@pytest.mark.parametrize(("source", "alias"), [
    ("import torch\n", "torch"),
    ("import torch.nn as nn\nimport torch.utils.data\n", "torch"),
    ("from .utils import is_torch_available\n\nif is_torch_available():\n    import torch\n", "torch"),
    ("try:\n    import torch as T\nexcept ImportError:\n    T = None\n", "T"),
    ("if a:\n    pass\nelif b:\n    import torch\n", "torch"),
    ("try:\n    import numpy\nexcept ImportError:\n    pass\nelse:\n    import torch\n", "torch"),
    ("def load():\n    import torch\n", None),  # a function's own name
    ("from torch import nn\n", None),
])
def test_the_name_bound_to_torch_at_import(source, alias):
    assert torch_alias(cst.parse_module(source)) == alias


GUARDED = """from .utils import is_torch_available

if is_torch_available():
    import torch


def timed(fn, x):
    y = fn(x)
    torch.cuda.synchronize()
    return y
"""


def test_a_fix_in_a_module_that_imports_torch_under_a_guard_adds_no_import():
    """transformers' `integrations/finegrained_fp8.py` imports torch under `if is_torch_available():`;
    an unconditional `import torch` would break importing it without torch."""
    fixed = run_devfix(GUARDED, path="ops.py", rules=[CudaOnlyCall]).fixed.decode()
    assert "    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n" in fixed
    assert fixed.count("import torch") == 1
