"""State a Module makes with its own method while it is built, then feeds to a layer in `forward`.

    def __init__(self, ...):
        ...
        self.hidden = self.init_hidden(batch_size)     # `init_hidden` runs only here
    def init_hidden(self, batch_size):
        return (torch.zeros(1, batch_size, h), torch.zeros(1, batch_size, h))
    def forward(self, seq):
        out, self.hidden = self.lstm(seq, self.hidden)

The state is made on the CPU before any move, and `.to()` does not move a plain attribute (a tuple
cannot be a buffer; one tensor bound again by `forward` is no buffer either, and one bound only in
`__init__` is DF014's): the first call on a GPU fails. DF016 gives the read where a layer meets it
beside an input the input's device. Only for a state bound once in `__init__` to such a method's
result, every `return` of it a factory without `device=` or a tuple display of them, the method
called nowhere else in the file, and a read that comes before any other binding of the state in
its method.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from devfix.analysis.cst_bindings import return_values
from devfix.analysis.module_classes import is_self_attribute
from devfix.analysis.tensors import is_factory_call
from devfix.analysis.torch_names import QualifiedNames, keyword


@dataclass(frozen=True)
class StateRead:
    """`self.<attribute>` read as an argument of a layer call beside the input `beside`."""

    attribute: str
    beside: str  # a tensor parameter of the reading method given to the same call
    is_tuple: bool


def constructor_state_reads(
    class_def: cst.ClassDef, methods: dict[str, cst.FunctionDef], only_in_constructors: frozenset[str],
    layers: set[str], tensor_parameters, qualified: QualifiedNames,
) -> dict[cst.Arg, StateRead]:
    """The reads to place (see the module). `layers`: attributes holding the class's layers;
    `tensor_parameters(method)`: the method's parameters proven tensors."""
    init = methods.get("__init__")
    if init is None:
        return {}
    states = {}
    for attribute, made_by in _states_made_in_init(init).items():
        method = methods.get(made_by)
        shape = _cpu_factory_shape(method, qualified) if method is not None and made_by in only_in_constructors else None
        if shape is False and not _rebound_elsewhere(methods, attribute):
            continue  # one tensor bound only in `__init__`: DF014 makes it a buffer
        if shape is not None:
            states[attribute] = shape
    found: dict[cst.Arg, StateRead] = {}
    for name, method in methods.items():
        if name == "__init__" or not states:
            continue
        inputs = tensor_parameters(method)
        for call in _calls_in_order(method):
            if not (is_self_attribute(call.func) and call.func.attr.value in layers):
                continue
            given = [arg for arg in call.args if isinstance(arg.value, cst.Name) and arg.value.value in inputs and not arg.keyword]
            for arg in call.args:
                value = arg.value
                if is_self_attribute(value) and value.attr.value in states and given and not _bound_before(method, value.attr.value, call):
                    found[arg] = StateRead(value.attr.value, given[0].value.value, states[value.attr.value])
    return found


def _rebound_elsewhere(methods: dict[str, cst.FunctionDef], attribute: str) -> bool:
    """A method other than `__init__` binds `self.<attribute>` (`out, self.hidden = self.gru(x, self.hidden)`)."""
    for name, method in methods.items():
        if name != "__init__":
            binds = _Binds(attribute)
            method.visit(binds)
            if binds.found:
                return True
    return False


def _states_made_in_init(init: cst.FunctionDef) -> dict[str, str]:
    """`self.hidden = self.init_hidden(...)` in `__init__`, bound nowhere else there → {"hidden": "init_hidden"}."""
    made: dict[str, str] = {}
    seen: dict[str, int] = {}
    for statement in init.body.body:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign)):
            continue
        assign = statement.body[0]
        for target in assign.targets:
            if is_self_attribute(target.target):
                attribute = target.target.attr.value
                seen[attribute] = seen.get(attribute, 0) + 1
                value = assign.value
                if len(assign.targets) == 1 and isinstance(value, cst.Call) and is_self_attribute(value.func):
                    made[attribute] = value.func.attr.value
    return {attribute: method for attribute, method in made.items() if seen[attribute] == 1}


def _cpu_factory_shape(method: cst.FunctionDef, qualified: QualifiedNames) -> bool | None:
    """True when every `return` of the method is a tuple display of CPU factories, False when each
    is one CPU factory, None otherwise (also for a factory given `device=`)."""
    returns = return_values(method)
    if not returns or any(value is None for value in returns):
        return None

    def cpu_factory(value: cst.BaseExpression) -> bool:
        while isinstance(value, cst.Call) and not is_factory_call(value, qualified) and len(value.args) == 1 \
                and any(name.endswith(".Variable") for name in qualified(value.func)):
            value = value.args[0].value  # `Variable(torch.zeros(...))`
        return is_factory_call(value, qualified) and keyword(value, "device") is None and not any(arg.star for arg in value.args)

    if all(isinstance(value, cst.Tuple) and value.elements and all(cpu_factory(element.value) for element in value.elements) for value in returns):
        return True
    if all(cpu_factory(value) for value in returns):
        return False
    return None


def _calls_in_order(method: cst.FunctionDef) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is method

        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    method.visit(Calls())
    return found


def _bound_before(method: cst.FunctionDef, attribute: str, call: cst.Call) -> bool:
    """The method binds `self.<attribute>` in a statement before the one holding `call`."""
    for statement in method.body.body:
        holds = _contains(statement, call)
        if holds:
            return False
        binds = _Binds(attribute)
        statement.visit(binds)
        if binds.found:
            return True
    return False


def _contains(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def on_visit(self, visited: cst.CSTNode) -> bool:
            nonlocal found
            found = found or visited is target
            return not found

    node.visit(Finder())
    return found


class _Binds(cst.CSTVisitor):
    def __init__(self, attribute: str) -> None:
        self.attribute = attribute
        self.found = False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        class Targets(cst.CSTVisitor):
            def visit_Attribute(inner, attribute: cst.Attribute) -> None:
                if is_self_attribute(attribute) and attribute.attr.value == self.attribute:
                    self.found = True

        node.visit(Targets())
