"""`analysis.following_returns`: functions whose every return is a tensor computed from some of their
parameters by device-keeping operations; anything that may hand back a number or a host copy is not."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.following_returns import followed_arguments, followed_parameters
from devfix.analysis.imports import ImportTable

HEADER = "import numpy as np\nimport torch\nimport torch.nn.functional as F\n\n\n"


def followed(source: str):
    tree = ast.parse(HEADER + source)
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    return followed_parameters(function, ImportTable.of(tree))


def test_tensor_operations_on_parameters_follow_them():
    assert followed("def accuracy(logits, labels):\n    preds = logits.argmax(1)\n    return (preds == labels).float().mean()\n") \
        == ((1, "labels"), (0, "logits"))
    assert followed("def top(x, k=2):\n    return F.softmax(x * 100, dim=1)[:, 0]\n") == ((0, "x"),)
    assert followed("def rmse(pred, target):\n    return torch.sqrt(((pred - target) ** 2).mean())\n") == ((0, "pred"), (1, "target"))


@pytest.mark.parametrize("body", [
    "    return (x.argmax(1) == y).float().mean().item()\n",  # a Python number
    "    return x.cpu()\n",  # a host copy
    "    return x.size(0)\n",
    "    return len(x)\n",
    "    return model(x)\n",  # a callable's result may be anything
    "    return torch.zeros(3) + x\n",  # a factory's tensor is on the host
    "    return np.mean(x)\n",
    "    y = x.sum()\n    y = y + 1\n    return y\n",  # bound twice: not followed
    "    x = x.float()\n    return x\n",  # a rebound parameter
    "    yield x.sum()\n",
    "    if x is None:\n        return\n    return x.sum()\n",
    "    return x.max(1)\n",  # may be a (values, indices) tuple
])
def test_anything_else_is_not_followed(body):
    assert followed("def f(x, y=None, model=None):\n" + body) == ()


def test_the_arguments_a_call_gives_the_followed_parameters():
    call = ast.parse("accuracy(out, labels=y)").body[0].value
    assert [ast.unparse(value) for value in followed_arguments(call, ((1, "labels"), (0, "logits")))] == ["y", "out"]
    assert followed_arguments(ast.parse("accuracy(*pair)").body[0].value, ((0, "logits"),)) == []
