"""Which names of a file hold instances of one of its Module classes, and only ever are called.

`model = Pool().to(device)` then `model(x, lengths)`: `Pool.forward` receives what those calls give
(`nn.Module.__call__` hands its arguments to `forward`), so the value analysis can give `forward`'s
parameters the kinds the calls pass, as it does for plain functions. That needs every call of the
`forward` to be known: the class is only built (not subclassed, passed on or read otherwise), each
name built from it is bound only to such an instance and only called or asked for an attribute
(`model.eval()`, `model.parameters()`: not handed to other code, which might call it), and nothing
calls `forward` by name or calls `self(...)`.
"""

from __future__ import annotations

import ast

from devfix.analysis.ast_nodes import every_node
from devfix.analysis.kinds import Kind

KEEPING_THE_INSTANCE = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "double", "half", "bfloat16", "requires_grad_"})


def called_instances(tree: ast.Module, classes: dict[str, Kind]) -> dict[str, str]:
    """Name → the Module class of the file whose instance it holds, for the names that only hold
    one and are only called (see the module's docstring)."""
    modules = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and classes.get(node.name) is Kind.MODULE}
    if not modules:
        return {}
    nodes = list(every_node(tree))
    if any(isinstance(node, ast.Attribute) and node.attr == "forward" for node in nodes):
        return {}
    built: dict[str, set[str | None]] = {}  # name → the classes (None: something else) it is bound to, in any scope
    assigned = {  # the `Name` target of each `name = value` statement → its value
        id(node.targets[0]): node.value for node in nodes
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            # `name = Pool(...)`: the class built; any other binding (a loop, `a, b = ...`): not only an instance
            built.setdefault(node.id, set()).add(_built_class(assigned[id(node)], modules) if id(node) in assigned else None)
        elif isinstance(node, ast.arg):
            built.setdefault(node.arg, set()).add(None)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                built.setdefault(name, set()).add(None)
    reads = _reads(nodes)
    instances = {
        name: next(iter(bound)) for name, bound in built.items()
        if len(bound) == 1 and None not in bound and all(use in ("call", "attribute") for use in reads.get(name, ()))
    }
    usable = {  # built only (every read of the class's name is a call of it), and never calling itself
        class_name for class_name in modules
        if all(use == "call" for use in reads.get(class_name, ())) and not _calls_itself(modules[class_name])
    }
    return {name: class_name for name, class_name in instances.items() if class_name in usable}


def _built_class(value: ast.expr, modules: dict[str, ast.ClassDef]) -> str | None:
    """`Pool()`, `Pool(...).to(device).eval()`: the class built; None for anything else."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in KEEPING_THE_INSTANCE:
        value = value.func.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in modules:
        return value.func.id
    return None


def _reads(nodes: list[ast.AST]) -> dict[str, list[str]]:
    """Each name read → how each read uses it: "call" (`name(...)`), "attribute" (`name.x`), or "value"."""
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    owners = {id(node.value) for node in nodes if isinstance(node, ast.Attribute)}
    uses: dict[str, list[str]] = {}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            use = "call" if id(node) in called else "attribute" if id(node) in owners else "value"
            uses.setdefault(node.id, []).append(use)
    return uses


def _calls_itself(class_node: ast.ClassDef) -> bool:
    """`self(...)` in a method: `forward` then gets what that call gives too."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "self" for node in every_node(class_node))
