"""Functions that hand back a Module they built and left where it was: `def get_model(n): model =
Net(); model.fc = nn.Linear(8, n); return model`.

`model = get_model(4)` then holds a Module on the CPU as surely as `model = Net()` does, and the
rules that follow a Module built in a scope (DF003 moves one called with device data; a Module's
output follows its input) see it one call away (`ScopeTracker.scope_modules`). Proven, never
guessed: every `return` gives a construction of a Module class (or a call of another such function
of the module, `teacher = make_net(64)`: never a name the function binds), or a name the function
binds only to such constructions; the function places nothing (no `.to()`, `.cuda()` or `device=` anywhere in
it), and the name is only read for its attributes, given new ones and asked to run its methods
(`model.fc = ...`, `model.apply(init)`, `model.fc.in_features`): never handed to other code, which
might move or wrap it. The body ends with its last `return` (nothing falls off its end and gives
None); a generator is no such function.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from devfix.analysis.ast_nodes import scope_bindings, scope_nodes
from devfix.analysis.imports import ImportTable
from devfix.analysis.moves import places_anything


def returns_built_module(
    function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable, builds_module: Callable[[ast.Call], bool],
) -> bool:
    nodes = list(scope_nodes(function.body))
    if isinstance(function, ast.AsyncFunctionDef) or any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in nodes):
        return False
    returns = [node.value for node in nodes if isinstance(node, ast.Return)]
    if not returns or any(value is None for value in returns) or not isinstance(function.body[-1], (ast.Return, ast.Raise)):
        return False  # a bare `return`, or the end of the body reached: None
    if places_anything(function, imports):
        return False
    bindings = scope_bindings(nodes)
    arguments = function.args
    given = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
    local = set(bindings) | {argument.arg for argument in given if argument is not None}

    def builds(value: ast.expr) -> bool:  # a class or function of the module, not a name the function binds
        called = value.func if isinstance(value, ast.Call) else None
        return called is not None and not (isinstance(called, ast.Name) and called.id in local) and builds_module(value)

    for value in returns:
        if builds(value):
            continue
        if not isinstance(value, ast.Name) or not bindings.get(value.id):
            return False
        if not all(builds(bound) for _, bound in bindings[value.id]):
            return False
        if not _only_used_in_place(value.id, function, returns):
            return False
    return True


def _only_used_in_place(name: str, function: ast.FunctionDef | ast.AsyncFunctionDef, returns: list[ast.expr]) -> bool:
    """Every read of `name` is a returned value or the object of an attribute (`name.fc`,
    `name.fc = ...`, `name.apply(init)`), and no nested function or lambda reads it."""
    returned = {id(value) for value in returns}
    attribute_objects = {id(node.value) for node in ast.walk(function) if isinstance(node, ast.Attribute)}
    for node in ast.walk(function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not function:
            if any(isinstance(inner, ast.Name) and inner.id == name for inner in ast.walk(node)):
                return False
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            if id(node) not in returned and id(node) not in attribute_objects:
                return False
    return True
