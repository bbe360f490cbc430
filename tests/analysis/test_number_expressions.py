"""`tensors.is_number_expression`: arithmetic that is certainly a Python number, so a name bound to
it holds no device to align with where it is read (DF004)."""

from __future__ import annotations

import libcst as cst
import pytest

from devfix.analysis.tensors import is_number_expression


def qualified(node: cst.CSTNode) -> set[str]:
    """A stand-in for qualified names: `math.x` and the builtins by their plain names."""
    code = cst.Module([]).code_for_node(node)
    return {code} if code.startswith("math.") else ({f"builtins.{code}"} if code in ("len", "int", "float", "abs") else set())


def number(source: str, tensors: frozenset[str] = frozenset({"t"})) -> bool:
    return is_number_expression(cst.parse_expression(source), set(tensors), qualified)


@pytest.mark.parametrize("source", [
    "math.log(10000) / (half_dim - 1)",
    "-math.log(10000.0) / self.dim",
    "2 * len(xs)",
    "float(n) ** 0.5",
])
def test_arithmetic_of_numbers(source):
    assert number(source)


@pytest.mark.parametrize("source", [
    "math.log(10000) / t",  # a known tensor among the leaves
    "half_dim - 1",  # no call that gives a number: `half_dim` may be a tensor
    "1.0",  # a literal is no arithmetic (a name bound to one is no tensor anyway)
    "abs(x) * 2",  # `abs` of a tensor is a tensor
    "torch.exp(x) * 2",
    "xs[0] + 1",
    "a @ b",
])
def test_anything_that_may_be_a_tensor(source):
    assert not number(source)
