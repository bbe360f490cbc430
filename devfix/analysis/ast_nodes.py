"""Small `ast` helpers the screens share: a scope's own nodes, the names a target binds, a method
chain's names, and `self.<attr>`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
NESTED_SCOPES = (*FUNCTIONS, ast.ClassDef, ast.Lambda)  # what `analysis.placement.collect` skips


def scope_nodes(body: list[ast.stmt], nested: tuple[type, ...] = NESTED_SCOPES) -> Iterator[ast.AST]:
    """The nodes of one scope's statements, without those under the `nested` kinds of node."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, nested))


def bound_names(target: ast.expr) -> Iterator[str]:
    """The names an assignment target binds (`a`, `a, (b, *c)`), not those it only reads (`a[i] =`)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from bound_names(element)
    elif isinstance(target, ast.Starred):
        yield from bound_names(target.value)


def method_chain(node: ast.expr) -> set[str]:
    """Method and attribute names along `a.b().c[0].d()`: {"b", "c", "d"} (as DF008 reads them)."""
    names = set()
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return names


def is_self_attribute(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
