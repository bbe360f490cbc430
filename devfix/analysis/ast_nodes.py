"""Small `ast` helpers the screens share: a fast walk, a scope's own nodes, the names a target
binds, a method chain's names, `self.<attr>`, and the names a torch op is given whole."""

from __future__ import annotations

import ast
from collections.abc import Iterator

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
NESTED_SCOPES = (*FUNCTIONS, ast.ClassDef, ast.Lambda)  # what `analysis.placement.collect` skips
LEAF_FIELDS = frozenset({"ctx", "op", "ops"})  # `Load()`, `Add()`, ...: nothing is ever looked for in them
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` without the context and operator leaves, computed once per node and
    kept on it (the analyses walk each file several times: walking was most of their cost)."""
    found = getattr(node, "_devfix_children", None)
    if found is not None:
        return found
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = _CHILD_FIELDS[type(node)] = tuple(name for name in node._fields if name not in LEAF_FIELDS)
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    node._devfix_children = found  # the trees are never changed after parsing
    return found


def every_node(node: ast.AST) -> list[ast.AST]:
    """`ast.walk`'s nodes in `ast.walk`'s order (breadth first), without the leaves `children`
    skips; kept on the node, as the same subtrees are walked again (loops, rounds, rules).
    Callers must not change the list."""
    found = getattr(node, "_devfix_nodes", None)
    if found is not None:
        return found
    found = [node]
    index = 0
    while index < len(found):
        found.extend(children(found[index]))
        index += 1
    node._devfix_nodes = found
    return found


def scope_nodes(body: list[ast.stmt], nested: tuple[type, ...] = NESTED_SCOPES) -> Iterator[ast.AST]:
    """The nodes of one scope's statements, without those under the `nested` kinds of node (a
    `def` among the statements is yielded, its body is not)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, nested):
            stack.extend(child for child in children(node) if not isinstance(child, nested))


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


def operand_names(value: ast.expr) -> set[str]:
    """Names given whole to a torch op (`x`, `[a, b]`, `-x`), as `analysis.tensors` reads them."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.List, ast.Tuple)):
        return {name for element in value.elts for name in operand_names(element)}
    if isinstance(value, ast.UnaryOp):
        return operand_names(value.operand)
    return set()
