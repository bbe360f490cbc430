"""The call sites of a top-level function of the file, and what each passes for one parameter.

A fact about a parameter inside a helper (`logits` is on a device, `model` was moved) can only
come from its callers. It holds when the function's name is used for nothing but calls in this
file, and every call passes, for that parameter, a value the caller's scope proves.
"""

from __future__ import annotations

import libcst as cst


def file_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The file's top-level functions by name (a name defined twice is left out: which one runs?)."""
    functions: dict[str, cst.FunctionDef] = {}
    twice: set[str] = set()
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            name = statement.name.value
            if name in functions:
                twice.add(name)
            else:
                functions[name] = statement
    return {name: function for name, function in functions.items() if name not in twice}


def arguments_for(module: cst.Module, function: cst.FunctionDef, parameter: str) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    """`(call, value passed for parameter)` for every call of `function`; None when the name is
    also used otherwise (passed around, so callers are unknown), is never called, or a call
    passes the parameter through `*args`/`**kwargs` or not at all."""
    if function not in module.body:
        return None
    params = function.params
    positional = [param.name.value for param in (*params.posonly_params, *params.params)]
    return _passed_at_calls(module, function.name.value, positional, parameter)


def constructor_arguments_for(module: cst.Module, class_def: cst.ClassDef, parameter: str) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    """`arguments_for` a parameter of a top-level class's `__init__`, at the calls of the class
    (None also when the class has no `__init__` of its own, or a class of the file derives from it:
    its name is then used otherwise than called)."""
    body = class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else []
    init = next((item for item in body if isinstance(item, cst.FunctionDef) and item.name.value == "__init__"), None)
    if class_def not in module.body or init is None:
        return None
    positional = [param.name.value for param in (*init.params.posonly_params, *init.params.params)][1:]
    return _passed_at_calls(module, class_def.name.value, positional, parameter)


def _passed_at_calls(module: cst.Module, name: str, positional: list[str], parameter: str) -> list[tuple[cst.Call, cst.BaseExpression]] | None:
    uses = _Uses(name)
    module.visit(uses)
    if not uses.calls or uses.names != len(uses.calls) + 1:  # + the `def` or `class` itself
        return None
    passed = []
    for call in uses.calls:
        value = argument_for(call, parameter, positional)
        if value is None:
            return None
        passed.append((call, value))
    return passed


def argument_for(call: cst.Call, parameter: str, positional: list[str]) -> cst.BaseExpression | None:
    """What `call` passes for `parameter` (None when a `*args`/`**kwargs` may hide it)."""
    if any(arg.star for arg in call.args):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    index = positional.index(parameter) if parameter in positional else -1
    given = [arg for arg in call.args if arg.keyword is None]
    return given[index].value if 0 <= index < len(given) else None


class _Uses(cst.CSTVisitor):
    """Calls of a name, and how often the name appears at all."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.names = 0
        self.calls: list[cst.Call] = []

    def visit_Name(self, node: cst.Name) -> None:
        self.names += node.value == self.name

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.name:
            self.calls.append(node)
