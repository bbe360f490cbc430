"""Calls of a class's methods from its other methods (`self.get_target(x, real)`): what they are
given, and where their results go.

A GAN loss builds its target in a helper, `get_target_tensor(self, input, real)`, which `forward`
calls with the tensor it feeds to `self.loss`, and whose result it feeds there too. Inside the
helper nothing says that `input` is a tensor, nor that the result meets a layer; its callers do.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from devfix.analysis.call_sites import argument_for
from devfix.analysis.cst_bindings import bound_names
from devfix.analysis.module_classes import is_self_attribute, names_fed_to_submodules


def self_calls(methods: dict[str, cst.FunctionDef]) -> dict[str, list[tuple[cst.FunctionDef, cst.Call]]]:
    """Method name → (calling method, call) for every `self.<name>(...)` in the class's methods."""
    calls: dict[str, list[tuple[cst.FunctionDef, cst.Call]]] = {}
    for caller in methods.values():
        finder = _SelfCalls(set(methods))
        caller.body.visit(finder)
        for name, call in finder.calls:
            calls.setdefault(name, []).append((caller, call))
    return calls


def parameters_given_tensors(
    methods: dict[str, cst.FunctionDef], tensors_in: Callable[[cst.FunctionDef], set[str]]
) -> dict[str, set[str]]:
    """Method name → its parameters that every call of it in the class (one at least) is given a
    name holding a tensor for, as `tensors_in(caller)` tells (it may also hold the code of
    indexings known to be tensors, `input[-1]`)."""
    given: dict[str, set[str]] = {}
    cache: dict[int, set[str]] = {}

    def holds_tensor(caller: cst.FunctionDef, value: cst.BaseExpression | None) -> bool:
        if id(caller) not in cache:
            cache[id(caller)] = tensors_in(caller)
        if isinstance(value, cst.Subscript):
            return cst.Module([]).code_for_node(value) in cache[id(caller)]  # `input[-1]`, fed to a submodule there too
        return isinstance(value, cst.Name) and value.value in cache[id(caller)]

    for name, calls in self_calls(methods).items():
        method = methods[name]
        positional = [param.name.value for param in [*method.params.posonly_params, *method.params.params][1:]]
        keyword_only = [param.name.value for param in method.params.kwonly_params]
        for parameter in [*positional, *keyword_only]:
            if all(holds_tensor(caller, argument_for(call, parameter, positional)) for caller, call in calls):
                given.setdefault(name, set()).add(parameter)
    return given


def results_fed_to_submodules(methods: dict[str, cst.FunctionDef], submodules: set[str]) -> set[str]:
    """Methods whose result some caller passes to a submodule: `self.loss(x, self.target(x))`, or
    through a name bound only to its results (`target = self.target(x)`; `self.loss(x, target)`)."""
    fed: set[str] = set()
    for name, calls in self_calls(methods).items():
        for caller, call in calls:
            finder = _ResultUse(call, submodules)
            caller.body.visit(finder)
            bound_and_fed = finder.bound_to is not None and finder.bindings.get(finder.bound_to) == finder.results.get(finder.bound_to) and (
                finder.bound_to in names_fed_to_submodules(caller, submodules))
            if finder.passed_directly or bound_and_fed:
                fed.add(name)
    return fed


class _SelfCalls(cst.CSTVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.calls: list[tuple[str, cst.Call]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's `self` is the same, but its calls run when it is called

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func) and node.func.attr.value in self.names:
            self.calls.append((node.func.attr.value, node))


class _ResultUse(cst.CSTVisitor):
    """Where one call's result goes in its caller."""

    def __init__(self, call: cst.Call, submodules: set[str]) -> None:
        self.call, self.submodules = call, submodules
        self.passed_directly = False
        self.bound_to: str | None = None
        self.bindings: dict[str, int] = {}  # name → how many times the caller binds it
        self.results: dict[str, int] = {}  # ... to a result of the same method

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name in bound_names(target.target):
                self.bindings[name] = self.bindings.get(name, 0) + 1
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and _calls_the_same_method(node.value, self.call):
            name = node.targets[0].target.value
            self.results[name] = self.results.get(name, 0) + 1
            if node.value is self.call:
                self.bound_to = name

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name in bound_names(node.target):
            self.bindings[name] = self.bindings.get(name, 0) + 1

    def visit_For(self, node: cst.For) -> None:
        for name in bound_names(node.target):
            self.bindings[name] = self.bindings.get(name, 0) + 1

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func) and node.func.attr.value in self.submodules:
            self.passed_directly |= any(arg.value is self.call for arg in node.args)


def _calls_the_same_method(value: cst.BaseExpression, call: cst.Call) -> bool:
    return isinstance(value, cst.Call) and is_self_attribute(value.func) and value.func.attr.value == call.func.attr.value
