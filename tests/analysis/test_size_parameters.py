"""Which parameters a function gives a sized factory or a shape method as one size among others."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.size_parameters import size_parameters


def sizes_of(source: str) -> frozenset[str]:
    tree = ast.parse(source)
    function = tree.body[-1]
    parameters = [argument.arg for argument in function.args.args]
    return size_parameters(ast.walk(function), ImportTable.of(tree), parameters)


@pytest.mark.parametrize("body, expected", [
    ("return torch.ones(c, 1, k, k) / k ** 2", {"c", "k"}),  # SSIM's window: sizes among others
    ("return w.expand(c, 1, k, k)", {"c", "k"}),  # a shape method of a value
    ("return torch.zeros(k)", set()),  # a lone size may be a tuple or a torch.Size
    ("return [t for _ in range(k)]", {"k"}),  # a range bound
    # a function of torch (however imported) takes the tensor first: `t` is no size
    ("b, f, d = t.size()\n    return torch.reshape(t, (b * f, d))", set()),
    ("return th.reshape(t, (k, k))", set()),  # `(k, k)` is one argument of a function, not the sizes of a method
    ("k = 3\n    return w.view(c, k)", {"c"}),  # rebound: the size read is another value
])
def test_size_parameters(body, expected):
    source = f"import torch\nimport torch as th\n\n\ndef make(t, w, c, k):\n    {body}\n"
    assert sizes_of(source) == expected
