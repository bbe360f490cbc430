"""`analysis.values`: what a Module keeps from its constructor's arguments."""

from __future__ import annotations

import ast

import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.kinds import Kind
from devfix.analysis.values import analyse_values

MIXTURE = '''import torch
import torch.nn as nn


class Mixture(nn.Module):
    def __init__(self, dim, num_components{annotation}):
        super().__init__()
        self.num_components = num_components

    def log_weight(self, scores):
        return scores - torch.log(torch.tensor(self.num_components).float())

{construction}
'''


def _scalar_tensor_made(source: str) -> bool:
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {"Mixture": Kind.MODULE}, set())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call) and ast.unparse(node.func) == "torch.tensor")
    return (call.lineno, call.col_offset) in facts.scalar_tensors


@pytest.mark.parametrize(("annotation", "construction", "scalar"), [
    (": int = 50", "prior = Mixture(**config)", True),  # the annotation says a number, no call says otherwise
    (": float", "prior = Mixture(4, 5.0)", True),
    ("", "prior = Mixture(**config)", False),  # nothing says what it is
    (": int", "prior = Mixture(4, torch.ones(3))", False),  # a call gives a tensor: the calls win
    (": 'int'", "prior = Mixture(**config)", False),  # a string annotation is not read
])
def test_a_count_kept_from_an_argument_annotated_as_a_number_makes_a_zero_dim_tensor(annotation, construction, scalar):
    assert _scalar_tensor_made(MIXTURE.format(annotation=annotation, construction=construction)) is scalar


@pytest.mark.parametrize(("comprehension", "kind"), [
    ("[helper(w) for w in W]", Kind.TENSOR),  # an item of a tensor is a tensor
    ("[helper(w) for w in W for w in range(2)]", Kind.UNKNOWN),  # bound again by a later `for`
    ("[(lambda w: helper(w))(1) for w in W]", Kind.UNKNOWN),  # the lambda's own `w`
    ("[(lambda *w: helper(w))(1) for w in W]", Kind.UNKNOWN),
    ("[[helper(w) for w in row] for w in W]", Kind.UNKNOWN),  # a nested comprehension's own `w` (items of an unknown `row`)
    ("[helper(w) for w in names]", Kind.UNKNOWN),  # items of something not proven tensors
])
def test_a_comprehension_variable_over_a_tensor_is_a_tensor_where_the_comprehension_reads_it(comprehension, kind):
    source = f"import torch\n\n\ndef helper(w):\n    return w\n\n\nW = torch.randn(3, 2, 2)\nout = {comprehension}\n"
    tree = ast.parse(source)
    facts = analyse_values(tree, ImportTable.of(tree), {}, set())
    assert [kinds[0] for kinds in facts.call_sites["helper"]] == [kind]
