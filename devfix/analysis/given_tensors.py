"""Does a value a method stores in `self` compute with tensors the method was given?

DF012 aligns a plain object's CPU tables with the device tensors they meet. A table made by
factories (`torch.linspace(beta_start, beta_end, steps)`, `torch.tensor(trained_betas)`) is on
the CPU whatever its numbers were; one computed from a tensor the caller handed over lives where
that tensor does (pytorch-ood's `self.tps = torch.cumsum(positive[order].long(), dim=0)[idx]`,
ViM's `self.u = -(torch.linalg.pinv(w) @ b)` of the classifier's weights): no proven CPU table.

A parameter counts as a given tensor where only a tensor can stand: the receiver of a method or
an indexing, an argument of a torch function that is no factory, an operand of `@`. As a plain
operand of `*` or `+` it may be a number (`sigmas * sigma_max`). Local names are followed to what
the method binds them to.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from devfix.analysis.tensors import is_factory_call
from devfix.analysis.torch_names import QualifiedNames

DEPTH = 6


class GivenTensors:
    """One method's parameters and the values it binds its names to, read once for all it stores."""

    def __init__(self, method: cst.FunctionDef, qualified: QualifiedNames) -> None:
        self.parameters = {param.name.value for param in [*method.params.posonly_params, *method.params.params, *method.params.kwonly_params]}
        self.parameters.discard("self")
        self.method, self.qualified = method, qualified

    @cached_property
    def bound(self) -> dict[str, list[cst.BaseExpression]]:
        """Read only when a stored value reads a local name (most tables are factories and state)."""
        return _local_values(self.method)

    def computes_with(
        self, value: cst.BaseExpression, given_attributes: frozenset[str] = frozenset(), whole: bool = False,
        host_parameters: frozenset[str] = frozenset(),
    ) -> bool:
        """`value`, stored by the method, computes with a tensor the method was given (see the module),
        or with one of `given_attributes` (`self.theta_p`, kept from a parameter) where only a tensor
        can stand. `whole`: the value itself stands where only a tensor can (`self.theta_p = theta_p`).
        `host_parameters`: parameters every call gives a tensor made on the host (no given tensor)."""
        return _given(value, self.parameters - host_parameters, given_attributes, self, self.qualified, tensor_position=whole, depth=0)


def _given(node: cst.BaseExpression, parameters: set[str], attributes: frozenset[str], reader: GivenTensors,
           qualified: QualifiedNames, tensor_position: bool, depth: int) -> bool:
    if depth > DEPTH:
        return False
    again = lambda inner, position: _given(inner, parameters, attributes, reader, qualified, position, depth + 1)  # noqa: E731
    if isinstance(node, cst.Name):
        if tensor_position and node.value in parameters:
            return True
        return any(again(value, tensor_position) for value in reader.bound.get(node.value, ()))
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return tensor_position and node.attr.value in attributes
    if isinstance(node, cst.Call):
        if is_factory_call(node, qualified):
            return False  # made here, on the CPU, whatever its sizes or data were
        func = node.func
        torch_function = any(name.startswith("torch.") for name in qualified(func))
        if isinstance(func, cst.Attribute) and not torch_function and again(func.value, True):
            return True  # `positive[order].long()`
        return torch_function and any(again(arg.value, True) for arg in node.args)
    if isinstance(node, cst.Subscript):
        return again(node.value, True)
    if isinstance(node, cst.BinaryOperation):
        position = tensor_position or isinstance(node.operator, cst.MatrixMultiply)
        return again(node.left, position) or again(node.right, position)
    if isinstance(node, cst.UnaryOperation):
        return again(node.expression, tensor_position)
    return False


def _local_values(method: cst.FunctionDef) -> dict[str, list[cst.BaseExpression]]:
    """Each plain name the method binds → the values it binds it to (`w = w.detach().float()`)."""
    found: dict[str, list[cst.BaseExpression]] = {}

    class Assignments(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is method

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    found.setdefault(target.target.value, []).append(node.value)

    method.visit(Assignments())
    return found
