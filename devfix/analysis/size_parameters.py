"""Which parameters a function hands a torch factory or a shape method as one of several sizes:
Python integers.

SSIM's `create_window(window_size, channel)` builds `torch.ones(channel, 1, window_size,
window_size) / window_size ** 2`: `window_size` is a number, so the quotient is made on the host
like the factory. A lone size (`torch.zeros(shape)`) may be a tuple or a `torch.Size`, so only a
size among others (`torch.ones(n, n)`, `torch.zeros((b, n))`, `w.expand(c, 1, k, k)`) or a `range()`
bound counts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from devfix.analysis.ast_nodes import scope_bindings
from devfix.analysis.imports import ImportTable

SIZED_FACTORIES = frozenset(f"torch.{name}" for name in ("zeros", "ones", "empty", "rand", "randn", "eye"))
SIZED_METHODS = frozenset({"expand", "view", "reshape", "repeat", "new_zeros", "new_ones", "new_empty"})  # `w.expand(c, 1, k, k)`


def size_parameters(nodes: Iterable[ast.AST], imports: ImportTable, parameters: Iterable[str]) -> frozenset[str]:
    """Of `parameters`, those the scope's `nodes` give a sized torch factory or a shape method as one
    size among others, or `range()` as a bound, and never rebind (the size read may be another value)."""
    nodes = list(nodes)
    names = set(parameters) - scope_bindings(nodes).keys()
    found: set[str] = set()
    for node in nodes:
        if not isinstance(node, ast.Call) or any(isinstance(argument, ast.Starred) for argument in node.args):
            continue
        if isinstance(node.func, ast.Name) and node.func.id == "range":
            found.update(name for name in _names(node.args) if name in names)
        elif (imports.qualify(node.func) or "") in SIZED_FACTORIES or (
                isinstance(node.func, ast.Attribute) and node.func.attr in SIZED_METHODS and not node.keywords
                and not _of_an_imported_name(node.func, imports)):
            sizes = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List)) else node.args
            if len(sizes) > 1:
                found.update(name for name in _names(sizes) if name in names)
    return frozenset(found)


def _of_an_imported_name(function: ast.Attribute, imports: ImportTable) -> bool:
    """`torch.reshape(x, (b * f, d, c))`: a function of a module, whose first argument is the tensor,
    not a method of a value (`w.expand(c, 1, k, k)`) whose arguments are all sizes."""
    head = function.value
    while isinstance(head, ast.Attribute):
        head = head.value
    return isinstance(head, ast.Name) and head.id in imports.names


def _names(arguments: list[ast.expr]) -> list[str]:
    return [argument.id for argument in arguments if isinstance(argument, ast.Name)]
