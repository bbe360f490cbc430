"""DF018 module-in-forward: a layer with parameters is created inside `forward` on every call.

    Before:  def forward(self, x):                  After:  (in __init__) self.batch_norm = nn.BatchNorm1d(16)
                 return nn.BatchNorm1d(16)(x)               def forward(self, x):
                                                                return self.batch_norm(x)

A layer built in `forward` gets fresh, untrained parameters on the CPU at every call: on a GPU the
call fails ("Expected all tensors to be on the same device"), and on the CPU it silently never
learns. The fix creates it once in `__init__`, where `.to()` and the optimizer see it.

Unsafe: the layer's parameters become trainable state (new `state_dict` keys), and a BatchNorm now
keeps running statistics, so numbers change.

A layer built lazily, once, on the first call (`if self.head is None: self.head =
nn.Linear(h.size(1), 1)`, its size known only then) is built on the CPU after the model moved:
it goes where the tensor it is then given lives (`nn.Linear(h.size(1), 1).to(h.device)`; safe: the
layer is the same, only placed). The tensor is a parameter of the method or a local bound before
the layer, given to that one call of the layer in the method.

Refuses (reports without a fix): layers whose arguments are computed in `forward` (sizes from
`x.shape`: use an `nn.Lazy*` layer or a redesign), layers built in a loop or a comprehension
(`[nn.Linear(2, 2)(h) for _ in range(2)]`: several layers a call, which one attribute would merge
into one), and layers built only under a condition (`if self.y_range: y = SigmoidRange(*self.y_range)(y)`
of PyPOTS' PatchTST head, whose `y_range` defaults to None: built in `__init__`, it would raise). Parameter-free layers (`nn.ReLU()(x)`,
`nn.Dropout(p)(x)`, `nn.Flatten()(x)`) are not device bugs and are left alone. A lazy layer
built with `device=` or moved where it is built is placed already.
"""

from __future__ import annotations

import re

import libcst as cst

from devfix.analysis.cst_bindings import target_leaves
from devfix.analysis.kinds import Kind
from devfix.analysis.module_classes import (
    class_facts,
    is_self_attribute,
    stored_parameters_of_a_stateless_module,
    top_level_class,
)
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.torch_names import holds_state, keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to
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
        self._lazy: dict[cst.Call, str] = {}  # a layer built on the first call → the device it goes to

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not self.is_module_classdef(node):
            return
        facts = class_facts(node, self.line_of)
        init = facts.methods.get("__init__")
        taken = set(facts.attributes) | set(facts.methods)
        for name, method in facts.methods.items():
            if name == "__init__":
                continue
            self._place_lazy_layers(method)
            finder = _InlineLayers(self)
            method.body.visit(finder)
            for construction in finder.constructions:
                # decided here, before the walk reaches __init__, so both edits happen or neither
                attribute = self._decide(construction, init, facts, taken, construction in finder.repeated, construction in finder.guarded)
                if attribute is not None:
                    taken.add(attribute)
                    self._inits.setdefault(init, []).append((attribute, construction))
                    self._hoisted[construction] = attribute

    def _decide(self, construction: cst.Call, init, facts, taken: set[str], repeated: bool = False, guarded: bool = False) -> str | None:
        layer = cst.Module([]).code_for_node(construction.func)
        message = f"`{layer}(...)` is built inside a method on every call: its weights are new, untrained and on the CPU"
        if guarded:  # `if self.y_range: y = SigmoidRange(*self.y_range)(y)`: in __init__ it would be built when it cannot be
            self.report(construction, message + "; it is built only under a condition, which __init__ cannot test the same way: "
                        "create it in __init__ under that condition", fixable=False)
            return None
        if repeated:  # `[nn.Linear(2, 2)(h) for _ in range(2)]`: one layer in __init__ would serve every iteration
            self.report(construction, message + "; it is built once per iteration, so one layer in __init__ would share "
                        "its weights between them: create them in __init__ (an nn.ModuleList)", fixable=False)
            return None
        if init is None or not all(_available_in_init(arg.value, facts) for arg in construction.args):
            self.report(construction, message + "; create it once in __init__ (its arguments are only known here: "
                        "consider an nn.Lazy* layer)", fixable=False)
            return None
        attribute = _fresh_attribute(construction, taken)
        applied = self.report(construction, message + " (moving it to __init__ adds trainable state)",
                              fix_title=f"create it once in __init__ as `self.{attribute}`")
        return attribute if applied else None

    def _place_lazy_layers(self, method: cst.FunctionDef) -> None:
        """`if self.head is None: self.head = nn.Linear(h.size(1), 1)`, then `self.head(h)`: the
        layer goes to `h.device`."""
        finder = _LazyLayers(self)
        method.body.visit(finder)
        parameters = {param.name.value for param in (*method.params.posonly_params, *method.params.params, *method.params.kwonly_params)}
        for attribute, construction in finder.built.items():
            calls = finder.called.get(attribute, [])
            given = calls[0].args[0].value if len(calls) == 1 and calls[0].args and calls[0].args[0].keyword is None else None
            if not isinstance(given, cst.Name) or given.value == "self" or self.line_of(calls[0]) < self.line_of(construction):
                continue
            bound_before = given.value in parameters or any(line < self.line_of(construction) for line in finder.bound.get(given.value, ()))
            if not bound_before or (given.value not in parameters and self.kind_of(given) is not Kind.TENSOR and not _is_torch_layer(self, construction)):
                continue
            layer = cst.Module([]).code_for_node(construction.func)
            if self.report(construction, f"`{layer}(...)` is built on the first call, on the CPU, after the model may have moved to a GPU",
                           fix_title=f"build it where `{given.value}` is", safety=Safety.SAFE):
                self._lazy[construction] = f"{given.value}.device"

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if original_node in self._lazy:
            return moved_to(updated_node, self._lazy[original_node])
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


REPEATING = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
GUARDING = (cst.If, cst.IfExp, cst.Try, cst.BooleanOperation)  # code under them may not run on every call


class _InlineLayers(cst.CSTVisitor):
    """`nn.Layer(...)(x)`: a construction of a Module with state, called on the spot; and those of
    them built inside a loop or a comprehension (several layers a call, not one)."""

    def __init__(self, rule: ModuleInForward) -> None:
        self.rule = rule
        self.constructions: list[cst.Call] = []
        self.repeated: set[cst.Call] = set()
        self.guarded: set[cst.Call] = set()
        self._loops = 0
        self._guards = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, REPEATING):
            self._loops += 1
        if isinstance(node, GUARDING):
            self._guards += 1
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, REPEATING):
            self._loops -= 1
        if isinstance(original_node, GUARDING):
            self._guards -= 1
        super().on_leave(original_node)

    def visit_Call(self, node: cst.Call) -> None:
        construction = node.func
        if isinstance(construction, cst.Call) and self.rule.builds_module(construction) and holds_state(construction, self.rule.qualified):
            if not self._stateless_class_of_the_file(construction):
                self.constructions.append(construction)
                if self._loops:
                    self.repeated.add(construction)
                if self._guards:
                    self.guarded.add(construction)

    def _stateless_class_of_the_file(self, construction: cst.Call) -> bool:
        """`ScaledDotProductAttention()` of a class of the file that makes no state of its own (it
        stores only literals and what it is given: `SigmoidRange(*self.y_range)`): built on every
        call, it has no weights to lose or leave on the CPU, and building it in `__init__` would
        not place what it is given either."""
        if not isinstance(construction.func, cst.Name):
            return False
        class_def = top_level_class(self.rule.module, construction.func.value)
        return class_def is not None and stored_parameters_of_a_stateless_module(class_def, self.rule.qualified) is not None


class _LazyLayers(cst.CSTVisitor):
    """In one method: the layers stored under `if self.<attr> is None:` (built once, on the first
    call), the calls of `self.<attr>(...)`, and the lines each local name is bound on."""

    def __init__(self, rule: ModuleInForward) -> None:
        self.rule = rule
        self.built: dict[str, cst.Call] = {}
        self.called: dict[str, list[cst.Call]] = {}
        self.bound: dict[str, list[int]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_If(self, node: cst.If) -> None:
        attribute = _unset_attribute(node.test)
        if attribute is None or not isinstance(node.body, cst.IndentedBlock):
            return
        for statement in node.body.body:
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
                continue
            assign = statement.body[0]
            target, value = assign.targets[0].target, assign.value
            if (len(assign.targets) == 1 and is_self_attribute(target) and target.attr.value == attribute and isinstance(value, cst.Call)
                    and self.rule.builds_module(value) and holds_state(value, self.rule.qualified) and keyword(value, "device") is None):
                self.built[attribute] = value

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for leaf in target_leaves(target.target):
                if isinstance(leaf, cst.Name):
                    self.bound.setdefault(leaf.value, []).append(self.rule.line_of(node))

    def visit_Call(self, node: cst.Call) -> None:
        if is_self_attribute(node.func):
            self.called.setdefault(node.func.attr.value, []).append(node)


def _unset_attribute(test: cst.BaseExpression) -> str | None:
    """`self.head is None` → "head"."""
    if (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.comparisons[0].operator, cst.Is)
            and is_self_attribute(test.left) and isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value == "None"):
        return test.left.attr.value
    return None


def _is_torch_layer(rule: ModuleInForward, construction: cst.Call) -> bool:
    """A layer of `torch.nn`: its calls take tensors."""
    return any(name.startswith("torch.nn.") for name in rule.qualified(construction.func))


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
