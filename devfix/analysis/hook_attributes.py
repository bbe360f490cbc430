"""Attributes an object keeps from a Module hook: `self.gradients = grad_output[0].detach()`.

Grad-CAM and feature extractors register a method of their own as a hook on a layer
(`layer.register_full_backward_hook(self.save_gradient)`) and keep what it is handed: a layer's
output or gradients, tensors that live where the layer's model does, on a GPU when it was moved.
An attribute counts only when every assignment of it in the class (but `None`) is in a method the
class registers as a hook, and assigns a value computed from that method's own parameters by
indexing and tensor methods (`out.detach()`, `grad_output[0]`, `output.clone()`).
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.cst_bindings import parameter_names
from devfix.analysis.tensors import without_tensor_methods
from devfix.analysis.torch_api import HOOK_REGISTRARS


def hook_kept_attributes(class_def: cst.ClassDef) -> frozenset[str]:
    """The attributes of `self` the class keeps only from its hooks' parameters."""
    collector = _Collector()
    class_def.body.visit(collector)
    methods = {statement.name.value: statement for statement in class_def.body.body if isinstance(statement, cst.FunctionDef)}
    kept: dict[str, bool] = {}
    for method_name, attribute, value in collector.assignments:
        if isinstance(value, cst.Name) and value.value == "None":
            continue
        method = methods.get(method_name)
        from_hook = method is not None and method_name in collector.hooks and _from_parameters(value, set(parameter_names(method)[1:]))
        kept[attribute] = kept.get(attribute, True) and from_hook
    return frozenset(attribute for attribute, only_hooks in kept.items() if only_hooks)


def _from_parameters(value: cst.BaseExpression, parameters: set[str]) -> bool:
    """`grad_output[0].detach()`: a parameter, indexed and given tensor methods."""
    while True:
        value = without_tensor_methods(value)
        if isinstance(value, cst.Subscript):
            value = value.value
            continue
        return isinstance(value, cst.Name) and value.value in parameters


class _Collector(cst.CSTVisitor):
    """`assignments`: (method, attribute, value) of each `self.<attribute> = value` directly in a
    method; `hooks`: the methods handed as `self.<method>` to a hook registrar."""

    def __init__(self) -> None:
        self.assignments: list[tuple[str, str, cst.BaseExpression]] = []
        self.hooks: set[str] = set()
        self._methods: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._methods.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._methods.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            attribute = target.target
            if isinstance(attribute, cst.Attribute) and isinstance(attribute.value, cst.Name) and attribute.value.value == "self":
                self.assignments.append((self._methods[0] if len(self._methods) == 1 else "", attribute.attr.value, node.value))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in HOOK_REGISTRARS and node.args:
            hook = node.args[0].value
            if isinstance(hook, cst.Attribute) and isinstance(hook.value, cst.Name) and hook.value.value == "self":
                self.hooks.add(hook.attr.value)

