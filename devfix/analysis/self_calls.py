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

SelfCalls = dict[str, list[tuple[cst.FunctionDef, cst.Call]]]


def self_calls(methods: dict[str, cst.FunctionDef]) -> SelfCalls:
    """Method name → (calling method, call) for every `self.<name>(...)` in the class's methods."""
    calls: SelfCalls = {}
    for caller in methods.values():
        finder = _SelfCalls(set(methods))
        caller.body.visit(finder)
        for name, call in finder.calls:
            calls.setdefault(name, []).append((caller, call))
    return calls


def parameters_given_tensors(
    methods: dict[str, cst.FunctionDef], tensors_in: Callable[[cst.FunctionDef], set[str]], calls: SelfCalls | None = None
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

    for name, sites in (calls if calls is not None else self_calls(methods)).items():
        method = methods[name]
        positional = [param.name.value for param in [*method.params.posonly_params, *method.params.params][1:]]
        keyword_only = [param.name.value for param in method.params.kwonly_params]
        for parameter in [*positional, *keyword_only]:
            if all(holds_tensor(caller, argument_for(call, parameter, positional)) for caller, call in sites):
                given.setdefault(name, set()).add(parameter)
    return given


def results_fed_to_submodules(methods: dict[str, cst.FunctionDef], submodules: set[str], calls: SelfCalls | None = None) -> set[str]:
    """Methods whose result some caller passes to a submodule: `self.loss(x, self.target(x))`, or
    through a name bound only to its results (`target = self.target(x)`; `self.loss(x, target)`)."""
    fed: set[str] = set()
    uses: dict[int, tuple[_ResultUses, set[str]]] = {}  # each caller walked once
    for name, sites in (calls if calls is not None else self_calls(methods)).items():
        for caller, call in sites:
            if id(caller) not in uses:
                finder = _ResultUses(submodules)
                caller.body.visit(finder)
                uses[id(caller)] = finder, names_fed_to_submodules(caller, submodules)
            finder, fed_names = uses[id(caller)]
            bound = finder.bound_to.get(id(call))
            bound_and_fed = bound is not None and finder.bindings.get(bound) == finder.results.get((bound, name)) and bound in fed_names
            if id(call) in finder.passed or bound_and_fed:
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


class _ResultUses(cst.CSTVisitor):
    """Where the results of a caller's `self.<method>(...)` calls go."""

    def __init__(self, submodules: set[str]) -> None:
        self.submodules = submodules
        self.passed: set[int] = set()  # calls passed straight to a submodule
        self.bound_to: dict[int, str] = {}  # call → the name it is assigned to
        self.bindings: dict[str, int] = {}  # name → how many times the caller binds it
        self.results: dict[tuple[str, str], int] = {}  # (name, method) → ... to a result of that method

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name in bound_names(target.target):
                self.bindings[name] = self.bindings.get(name, 0) + 1
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and _is_self_call(value):
            name = node.targets[0].target.value
            key = (name, value.func.attr.value)
            self.results[key] = self.results.get(key, 0) + 1
            self.bound_to[id(value)] = name

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name in bound_names(node.target):
            self.bindings[name] = self.bindings.get(name, 0) + 1

    def visit_For(self, node: cst.For) -> None:
        for name in bound_names(node.target):
            self.bindings[name] = self.bindings.get(name, 0) + 1

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func) and node.func.attr.value in self.submodules:
            self.passed.update(id(arg.value) for arg in node.args if _is_self_call(arg.value))


def _is_self_call(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and is_self_attribute(value.func)
