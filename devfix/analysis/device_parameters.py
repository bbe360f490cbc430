"""Does a function take any device for a parameter, or only some strings? DF001 hands a project
function a `torch.device` in place of `device="cuda"` only where the function uses the parameter
as a device (`x.to(device)`, `torch.zeros(n, device=device)`, another call's argument), never as a
string: FastChat's `load_model(device="cuda")` compares `device == "cuda"`, which a `torch.device`
never equals."""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import parameters

STRING_METHODS = frozenset({"startswith", "endswith", "lower", "upper", "split", "replace", "strip", "format", "join"})


def takes_any_device(function: ast.FunctionDef | ast.AsyncFunctionDef, parameter: str) -> bool:
    """`function` has the parameter, and no read of it is compared, searched with `in`, formatted
    into a string or given a string method."""
    if parameter not in {argument.arg for argument in parameters(function)}:
        return False
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and any(_reads(operand, parameter) for operand in [node.left, *node.comparators]):
            return False
        if isinstance(node, ast.JoinedStr) and any(_reads(value, parameter) for value in node.values):
            return False
        if isinstance(node, ast.Attribute) and node.attr in STRING_METHODS and _reads(node.value, parameter):
            return False
    return True


def _reads(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.FormattedValue):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name
