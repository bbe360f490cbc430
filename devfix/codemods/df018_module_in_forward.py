"""DF018 module-in-forward: a layer with parameters is created inside `forward` on every call.

    Before:  def forward(self, x):                  After:  (in __init__) self.batch_norm = nn.BatchNorm1d(16)
                 return nn.BatchNorm1d(16)(x)               def forward(self, x):
                                                                return self.batch_norm(x)

A layer built in `forward` gets fresh, untrained parameters on the CPU at every call: on a GPU the
call fails ("Expected all tensors to be on the same device"), and on the CPU it silently never
learns. The fix creates it once in `__init__`, where `.to()` and the optimizer see it.

Unsafe: the layer's parameters become trainable state (new `state_dict` keys), and a BatchNorm now
keeps running statistics, so numbers change.

Refuses (reports without a fix): layers whose arguments are computed in `forward` (sizes from
`x.shape`: use an `nn.Lazy*` layer or a redesign). Parameter-free layers (`nn.ReLU()(x)`,
`nn.Dropout(p)(x)`, `nn.Flatten()(x)`) are not device bugs and are left alone.
"""

from __future__ import annotations

import re

import libcst as cst

from devfix.analysis.module_classes import builds_stateless_instance, class_facts, is_self_attribute, top_level_class
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_names import holds_state
from devfix.codemods.base import DevfixRule
from devfix.findings import Safety


class ModuleInForward(ScopeTracker, DevfixRule):
    CODE = "DF018"
    NAME = "module-in-forward"
    SAFETY = Safety.UNSAFE
    DESCRIPTION = "Layer with parameters created inside forward: new CPU weights on every call"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._hoisted: dict[cst.Call, str] = {}  # inline construction → its new attribute, when applied
        self._inits: dict[cst.FunctionDef, list[tuple[str, cst.Call]]] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node):
            return
        facts = class_facts(node, self.line_of)
        init = facts.methods.get("__init__")
        taken = set(facts.attributes) | set(facts.methods)
        for name, method in facts.methods.items():
            if name == "__init__":
                continue
            finder = _InlineLayers(self)
            method.body.visit(finder)
            for construction in finder.constructions:
                # decided here, before the walk reaches __init__, so both edits happen or neither
                attribute = self._decide(construction, init, facts, taken)
                if attribute is not None:
                    taken.add(attribute)
                    self._inits.setdefault(init, []).append((attribute, construction))
                    self._hoisted[construction] = attribute

    def _decide(self, construction: cst.Call, init, facts, taken: set[str]) -> str | None:
        layer = cst.Module([]).code_for_node(construction.func)
        message = f"`{layer}(...)` is built inside a method on every call: its weights are new, untrained and on the CPU"
        if init is None or not all(_available_in_init(arg.value, facts) for arg in construction.args):
            self.report(construction, message + "; create it once in __init__ (its arguments are only known here: "
                        "consider an nn.Lazy* layer)", fixable=False)
            return None
        attribute = _fresh_attribute(construction, taken)
        applied = self.report(construction, message + " (moving it to __init__ adds trainable state)",
                              fix_title=f"create it once in __init__ as `self.{attribute}`")
        return attribute if applied else None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        attribute = self._hoisted.get(original_node.func) if isinstance(original_node.func, cst.Call) else None
        if attribute is None:
            return updated_node
        return updated_node.with_changes(func=cst.parse_expression(f"self.{attribute}"))

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        items = self._inits.get(original_node)
        if not items:
            return updated_node
        statements = [
            cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.parse_expression(f"self.{attribute}"))], construction)])
            for attribute, construction in items
        ]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*updated_node.body.body, *statements]))


class _InlineLayers(cst.CSTVisitor):
    """`nn.Layer(...)(x)`: a construction of a Module with state, called on the spot."""

    def __init__(self, rule: ModuleInForward) -> None:
        self.rule = rule
        self.constructions: list[cst.Call] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        construction = node.func
        if isinstance(construction, cst.Call) and self.rule.builds_module(construction) and holds_state(construction, self.rule.qualified):
            if not self._stateless_class_of_the_file(construction):
                self.constructions.append(construction)

    def _stateless_class_of_the_file(self, construction: cst.Call) -> bool:
        """`ScaledDotProductAttention()` of a class of the file that stores no tensor state: built on
        every call, it has no weights to lose or leave on the CPU."""
        if not isinstance(construction.func, cst.Name):
            return False
        class_def = top_level_class(self.rule.module, construction.func.value)
        return class_def is not None and builds_stateless_instance(construction, class_def, self.rule.qualified)


def _available_in_init(value: cst.BaseExpression, facts) -> bool:
    """Literals and `self.<attr>` that __init__ sets can be evaluated there too."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)) and not isinstance(value, cst.Name):
        return True
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None")
    if is_self_attribute(value):
        use = facts.attributes.get(value.attr.value)
        return use is not None and any(method == "__init__" for method, _ in use.assignments)
    if isinstance(value, cst.UnaryOperation):
        return _available_in_init(value.expression, facts)
    if isinstance(value, cst.BinaryOperation):
        return _available_in_init(value.left, facts) and _available_in_init(value.right, facts)
    return False


def _fresh_attribute(construction: cst.Call, taken: set[str]) -> str:
    class_name = cst.Module([]).code_for_node(construction.func).rsplit(".", 1)[-1]
    base = re.sub(r"(?<!^)(?=[A-Z])", "_", class_name).lower()
    name, index = base, 2
    while name in taken:
        name, index = f"{base}_{index}", index + 1
    return name
