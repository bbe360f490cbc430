"""DF011 loss-weight-device: a functional loss gets class weights that stay on the CPU.

    Before:  loss = F.cross_entropy(logits, y, weight=class_weights)
    After:   loss = F.cross_entropy(logits, y, weight=class_weights.to(logits.device))

The device is read from the name behind the input: `F.nll_loss(scores.log_softmax(-1), y,
weight=w)` gets `w.to(scores.device)` (tensor methods and indexing keep the device). Where the input
is a call (`F.cross_entropy(model(x), yb, weight=w)`) or cannot be placed, a target the analysis
places on a device gives it (`w.to(yb.device)`): a loss takes both on one device. Not in a
Module's methods: there the weights are the Module's buffers (timm's `BinaryCrossEntropy`), and a
target made with `device=x.device` follows the input.

`weight=`, `pos_weight=` and similar tensors must live with the input; PyTorch raises "Expected all
tensors to be on the same device" (or "... but got weight is on cpu"). The weight follows the
loss input at the call, which is right on every device. Loss *modules* built with a weight
(`nn.CrossEntropyLoss(weight=w)`) and torchmetrics objects are moved at construction by DF003;
fresh literals (`pos_weight=torch.tensor([3.0])`) get `device=` from DF004, and a plain trainer's
`self.class_weights = torch.tensor(...)` made in `__init__` gets the model's device from DF020.

In a helper (`def loss_fn(logits, y)`), the input counts as on a device when every call of the
helper in the file passes one (`loss_fn(model(x), y)` with the model moved); in a method, the
output of a Module the object keeps moved is on a device (`self.model(x)` after `self.model =
model.to(device)` in `__init__`).

`.to()` is written only on a weight the value analysis proves a tensor, or on a helper's weight
parameter that every call of the helper gives one: a weight that may be `None`
(`weight=None` by default, `w = torch.tensor(...) if balanced else None`) is reported without a fix.

Refuses: weights already on a device or already moved at the call, inputs devfix cannot place on a
device, and anything but a plain name or attribute as the weight.
"""

from __future__ import annotations

import libcst as cst

from devfix.analysis.call_sites import arguments_for
from devfix.analysis.kinds import Kind
from devfix.analysis.module_classes import class_facts, is_self_attribute
from devfix.analysis.placement import PlacementFacts
from devfix.analysis.scopes import ScopeTracker
from devfix.analysis.tensors import is_factory_call
from devfix.analysis.torch_api import FUNCTIONAL_LOSSES, LEAVING_PLACEMENT_METHODS
from devfix.analysis.torch_names import keyword
from devfix.codemods.base import DevfixRule
from devfix.codemods.edits import moved_to
from devfix.findings import Safety

TENSOR_KEYWORDS = ("weight", "pos_weight")


class LossWeightDevice(ScopeTracker, DevfixRule):
    CODE = "DF011"
    NAME = "loss-weight-device"
    SAFETY = Safety.SAFE
    DESCRIPTION = "Class weights of a functional loss left on the CPU"

    def visit_Module(self, node: cst.Module) -> None:
        super().visit_Module(node)
        self._narrowed: set[int] = set()

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self.qualified(original_node.func) & FUNCTIONAL_LOSSES or not original_node.args:
            return updated_node
        loss_input = original_node.args[0].value
        facts = self._object_facts(original_node)
        if original_node.args[0].keyword is not None:
            return updated_node
        tensor = _tensor_behind(loss_input)  # `weight.to(model(x).device)` would run the model twice
        if tensor is None or not facts.is_device_value(loss_input) and not self._callers_pass_device_values(original_node, tensor, facts):
            tensor = _placed_target(original_node, facts) if not self._in_a_module_method(original_node) else None
        if tensor is None:
            return updated_node
        reference = tensor.value
        args = list(updated_node.args)
        changed = False
        for name in TENSOR_KEYWORDS:
            weight = keyword(original_node, name)
            if weight is None or not isinstance(weight.value, (cst.Name, cst.Attribute)) or facts.is_device_value(weight.value):
                continue
            if self._kept_by_a_trainer(weight.value, original_node):
                continue  # DF020 makes it on the model's device where `__init__` builds it
            code = cst.Module([]).code_for_node(weight.value)
            if self.report(weight.value, f"`{name}={code}` stays on the CPU while `{reference}` may be on a GPU",
                           fix_title=f"move it to `{reference}.device` at the call", fixable=self._proven_tensor(weight.value, original_node, facts)):
                index = list(original_node.args).index(weight)
                moved = moved_to(args[index].value, f"{reference}.device")
                args[index] = args[index].with_changes(value=moved)
                changed = True
        return updated_node.with_changes(args=args) if changed else updated_node

    def _object_facts(self, node: cst.CSTNode) -> PlacementFacts:
        """`scope_facts`; in a method, the object's moved Modules give device values too
        (`self.model(x)` of `self.model = model.to(device)`: `ScopeTracker.add_object_facts`)."""
        facts = self.scope_facts(node)
        scope = self.enclosing_scope(node)
        if id(scope) not in self._narrowed:
            self._narrowed.add(id(scope))
            self.add_object_facts(facts, scope)
        return facts

    def _in_a_module_method(self, call: cst.Call) -> bool:
        """In a Module's method the loss's weights are its buffers (timm's `self.pos_weight`), and
        what the method makes follows its input (`device=x.device`): where the input is, the
        weights are, and a target placed there says nothing more."""
        function = self.enclosing_scope(call)
        owner = self.class_of_method(function) if isinstance(function, cst.FunctionDef) else None
        return owner is not None and self.is_module_classdef(owner)

    def _kept_by_a_trainer(self, weight: cst.BaseExpression, call: cst.Call) -> bool:
        """`self.class_weights` that the `__init__` of a plain class (no Module) alone assigns, a
        factory: without `device=` (`torch.tensor([1.0, 3.0])`) DF020's to create on the device,
        with one (what DF020 writes, `device=self.device`) placed already."""
        function = self.enclosing_scope(call)
        owner = self.class_of_method(function) if isinstance(function, cst.FunctionDef) and is_self_attribute(weight) else None
        if owner is None or self.is_module_classdef(owner):
            return False
        use = class_facts(owner, self.line_of).attributes.get(weight.attr.value)
        if use is None or len(use.assignments) != 1 or use.assignments[0][0] != "__init__":
            return False
        value = use.assignments[0][1].value
        if not is_factory_call(value, self.qualified):
            return False
        device = keyword(value, "device")
        return device is None or not _is_cpu_literal(device.value)

    def _proven_tensor(self, weight: cst.BaseExpression, call: cst.Call, facts: PlacementFacts) -> bool:
        """The value analysis proves the weight a tensor (`weights = torch.tensor(...)`; a `None`
        weight, or one that may be, takes no `.to()`), or a plain tensor attribute of an instance of
        a class of the file (`analysis.plain_tensor_attributes`), or it is a helper's parameter the helper never
        rebinds and every call of the helper gives a proven tensor (`weight=None` by default)."""
        if self.kind_of(weight) is Kind.TENSOR:
            return True
        if isinstance(weight, cst.Attribute) and facts.plain_tensor_of_an_instance(weight):
            return True  # `model.class_weights`, which `Net.__init__` makes once with `torch.tensor(...)`
        function = self.enclosing_scope(call)
        if not isinstance(weight, cst.Name) or not isinstance(function, cst.FunctionDef) or weight.value in facts.bindings:
            return False
        if weight.value not in self.scope_parameters(call):
            return False
        passed = arguments_for(self.module, function, weight.value)
        return bool(passed) and all(self.kind_of(value) is Kind.TENSOR for _, value in passed)

    def _callers_pass_device_values(self, call: cst.Call, loss_input: cst.Name, facts: PlacementFacts) -> bool:
        """`def loss_fn(logits, y): return F.cross_entropy(logits, y, weight=w)`, where every call
        of `loss_fn` in the file passes a device value for `logits` (`loss_fn(model(x), y)`)."""
        function = self.enclosing_scope(call)
        if not isinstance(function, cst.FunctionDef):
            return False
        if loss_input.value not in self.scope_parameters(call) or loss_input.value in facts.bindings:
            return False
        passed = arguments_for(self.module, function, loss_input.value)
        return passed is not None and all(self._object_facts(caller).is_device_value(value) for caller, value in passed)


def _placed_target(call: cst.Call, facts: PlacementFacts) -> cst.Name | None:
    """The name behind the target when the analysis places it on a device (`F.cross_entropy(model(x),
    yb, weight=w)` after `yb = y.to(device)`): a loss takes its input and target on one device."""
    target = keyword(call, "target")
    if target is None and len(call.args) > 1 and call.args[1].keyword is None and not call.args[1].star:
        target = call.args[1]
    behind = _tensor_behind(target.value) if target is not None else None
    return behind if behind is not None and facts.is_device_value(target.value) else None


def _tensor_behind(expression: cst.BaseExpression) -> cst.Name | None:
    """The name whose device the loss input has: `logits` for `logits`, `logits.log_softmax(-1)`,
    `logits[:, 0]` (tensor methods and indexing keep the device; moves and host methods do not)."""
    while True:
        if isinstance(expression, cst.Name):
            return expression
        if isinstance(expression, cst.Subscript):
            expression = expression.value
        elif (
            isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute)
            and expression.func.attr.value not in LEAVING_PLACEMENT_METHODS | {"to", "cuda"}
        ):
            expression = expression.func.value
        else:
            return None


def _is_cpu_literal(device: cst.BaseExpression) -> bool:
    return isinstance(device, cst.SimpleString) and device.evaluated_value.split(":")[0] == "cpu"
