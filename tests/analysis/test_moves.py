"""Moves and casts, read with `ast` (`analysis.moves`) and with libcst (`analysis.placement`):
`.to(dtype)` is a cast, and a move stays a move through methods that keep the placement."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import is_cast, is_move
from devfix.analysis.placement import as_move

HEADER = "import torch\n"


def _ast_call(source: str, expression: str) -> tuple[ast.Call, ImportTable]:
    tree = ast.parse(HEADER + source + f"\nresult = {expression}\n")
    return tree.body[-1].value, ImportTable.of(tree)


@pytest.mark.parametrize("source, expression, move, cast", [
    ("", "x.to(device)", True, False),
    ("", "x.to(torch.float16)", False, True),
    ("", "x.to(dtype=torch.float16)", False, True),
    ("dtype = torch.float64", "x.to(dtype)", False, True),
    ("dtype = torch.float16 if half else torch.float32", "x.to(dtype)", False, True),
    ("dtype = torch.float64\ndtype = 'cuda'", "x.to(dtype)", True, False),  # rebound to something else
    ("def f(dtype):\n    pass\ndtype = torch.float64", "x.to(dtype)", True, False),  # also a parameter
    ("", "Net().to(device).eval()", True, False),
    ("", "y.to(device).long()", True, False),
    ("", "x.to(device).to(torch.float16)", True, True),
    ("", "x.cpu().float()", False, False),
    ("", "x.to(device).cpu()", False, False),
])
def test_moves_and_casts_with_ast(source, expression, move, cast):
    call, imports = _ast_call(source, expression)
    assert is_move(call, imports) is move
    assert is_cast(call, imports) is cast


@pytest.mark.parametrize("expression, receiver", [
    ("Net().to(device).eval()", "Net()"),
    ("y.to(device).long()", "y"),
    ("x.cuda().half()", "x"),
])
def test_a_move_followed_by_placement_keeping_methods_is_the_move(expression, receiver):
    call = cst.parse_expression(expression)
    move = as_move(call, lambda node: set())
    assert move is not None and cst.Module([]).code_for_node(move.receiver) == receiver


def test_a_cast_is_no_move_with_libcst():
    qualified = lambda node: {"torch.float16"} if isinstance(node, cst.Attribute) and node.attr.value == "float16" else set()
    assert as_move(cst.parse_expression("x.to(torch.float16)"), qualified) is None
